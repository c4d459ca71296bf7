// Data mode: how an engine reads and writes values through its `data`
// socket (PE_DMA's TCM side, PE_GEMM, PE_MATH, PE_TCM). The time of these
// accesses is in the stage formulas (each engine's cycles_of), so they add none:
// - TCM (the PE-local window) answers a BEGIN_REQ with TLM_COMPLETED and
//   no delay; the bytes travel in the payload (nb_transport_fw, so methods
//   may call it).
// - HBM is reached only by PE_DMA's timed `mem` transactions: a
//   composite's HBM operand blocks come in through its DMA_READ stages and
//   its HBM output blocks leave through DMA_WRITE (staging, command_data.h);
//   an access outside TCM is an error.
#pragma once

#include <cstdint>
#include <vector>

#include <tlm>

#include "models/mem/memory_access.h"
#include "models/isa/tensor_table.h"
#include "models/util/module_payload.h"

namespace kb {

class DataPort {
 public:
  DataPort(tlm::tlm_initiator_socket<32>& socket, MemoryRange tcm) : socket_(socket), tcm_(tcm) {}
  // Host access (PE_CPU's host_write/host_read, in zero simulated time):
  // debug transport to any address, TCM or HBM.
  struct Debug {};
  DataPort(tlm::tlm_initiator_socket<32>& socket, Debug) : socket_(socket), debug_(true) {}

  // n bytes at `address`. Throws KernelError when the access fails.
  void read(uint64_t address, void* out, uint64_t n);
  void write(uint64_t address, const void* in, uint64_t n);

  // rows [r0, r0 + nr) x cols [c0, c0 + nc) of a tensor, as floats (one
  // transaction per row); write_block rounds to the tensor's dtype.
  std::vector<float> read_block(const TensorDesc& t, int64_t r0, int64_t nr, int64_t c0, int64_t nc);
  void write_block(const TensorDesc& t, int64_t r0, int64_t nr, int64_t c0, int64_t nc,
                   const std::vector<float>& values);

 private:
  void transfer(tlm::tlm_command cmd, uint64_t address, unsigned char* data, uint64_t n);
  tlm::tlm_initiator_socket<32>& socket_;
  const MemoryRange tcm_{};
  const bool debug_ = false;
  ModulePayload payload_;
  std::vector<uint8_t> row_;
};

// Host side (zero simulated time, through a Debug port): fill with uniform
// values in [lo, hi) from a seeded generator, rounded to the tensor's
// dtype; write given values; read back as floats.
void host_fill_random(DataPort& port, const TensorDesc& t, uint64_t seed, double lo, double hi);
void host_write(DataPort& port, const TensorDesc& t, const std::vector<float>& values);
std::vector<float> host_read(DataPort& port, const TensorDesc& t);

// What an engine computes with in data mode: its data port and the
// descriptor table (stage_engine.h).
struct DataContext {
  DataPort& port;
  const TensorTable& table;
};

// Element [r, c]'s byte address (unsigned: no overflow for a validated
// descriptor, see TensorTable::validate_tensor).
inline uint64_t element_address(const TensorDesc& t, int64_t r, int64_t c) {
  return t.address + (uint64_t(r) * uint64_t(t.row_stride) + uint64_t(c)) * dtype_bytes(t.dtype);
}

}  // namespace kb
