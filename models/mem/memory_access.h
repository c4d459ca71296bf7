// What every memory target of the model does with a payload, whatever its
// timing: check it against the target's address range and the base
// protocol, then (data mode) copy the bytes. Storage modes as DRAMSys's
// StoreMode: with no storage (timing mode) the data pointer is valid but
// nothing is copied; with storage, reads and writes carry real values.
#pragma once

#include <cstdint>

#include <tlm>

#include "models/mem/sparse_memory.h"

namespace kb {

struct MemoryRange {
  uint64_t base = 0;
  uint64_t end = 0;  // exclusive; 0 means up to 2^64
  bool contains(uint64_t address, uint64_t length) const {
    if (address < base || length == 0) return length == 0 && address >= base;
    const uint64_t last = address + (length - 1);
    if (last < address) return false;  // wraps past 2^64
    return end == 0 || last < end;
  }
};

// Checks and performs one transaction (b_transport, nb BEGIN_REQ or debug):
// sets and returns the response status. `store` null: timing mode (no copy).
// Errors as the base protocol asks: an address outside the range gets
// TLM_ADDRESS_ERROR_RESPONSE, a command other than read/write/ignore
// TLM_COMMAND_ERROR_RESPONSE, a streaming width below the length (this
// memory is not a FIFO) TLM_BURST_ERROR_RESPONSE. Byte enables are honoured.
tlm::tlm_response_status memory_access(tlm::tlm_generic_payload& p, const MemoryRange& range,
                                       SparseMemory* store);

// The bytes a transaction moves: those its byte enables let through (all
// of them without byte enables). A fabric link counts these.
uint64_t enabled_bytes(const tlm::tlm_generic_payload& p);

// The bytes of be[0, n) that are TLM_BYTE_ENABLED (0xff; any other value
// disables its lane), eight at a time: a strided DMA burst's pattern is a
// row pitch long (counted per burst on a pattern change).
uint64_t count_enabled(const unsigned char* be, size_t n);

// Debug transport (transport_dbg): the bytes transferred, 0 on any error.
unsigned memory_debug(tlm::tlm_generic_payload& p, const MemoryRange& range, SparseMemory* store);

}  // namespace kb
