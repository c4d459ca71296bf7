// HBM: a TLM-2.0 memory target outside the PE, behind the interconnect.
//
// Timing (loosely timed: the delay is annotated, never waited): an access of
// b bytes arriving at t (now + annotated delay) transfers at the HBM's
// bandwidth, then takes its first-byte latency:
//     latency_cycles + ceil(b / bytes_per_cycle)        (uncontended)
// Bandwidth is state: the pseudo-channels are interleaved finely, so the
// HBM is one pipe of their aggregate bandwidth. Accesses arriving while the
// pipe is still transferring join its train: a train that began at t0 and
// has carried B bytes (this access included) ends its transfer at
// t0 + ceil(B / bytes_per_cycle) cycles. One stream at a time sees the
// formula above exactly, however it splits a transfer into bursts; two
// streams at full bandwidth each take about twice as long.
//
// Storage (DRAMSys StoreMode): timing mode keeps no values (the data pointer
// is valid; nothing is copied); data mode keeps them in a sparse store.
// transport_dbg reads and writes those values without time; DMI is not
// offered (the store is sparse, with no contiguous pointer to grant).
//
// Sockets: `in`, from the interconnect. b_transport (from a thread) and
// nb_transport_fw (BEGIN_REQ, answered TLM_COMPLETED with the delay) both
// work; an address outside [base, end) gets TLM_ADDRESS_ERROR_RESPONSE.
#pragma once

#include <cstdint>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "models/config/pe_config.h"
#include "models/mem/memory_access.h"
#include "models/mem/sparse_memory.h"
#include "models/util/clock.h"

namespace kb {

struct HbmTiming {
  double clock_freq_ghz = 1.0;  // the cycle the figures below are counted in
  double bytes_per_cycle = 204.8;
  uint64_t latency_cycles = 100;
};

// pe.attrs.hbm in the PE clock's cycles.
HbmTiming hbm_timing(const PeConfig& cfg);

// latency + ceil(bytes / bytes_per_cycle), in cycles: the uncontended
// access. Throws std::overflow_error when it does not fit in 64 bits.
uint64_t hbm_access_cycles(const HbmTiming& t, uint64_t bytes);

class Hbm : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<Hbm> in;

  Hbm(sc_core::sc_module_name name, const HbmTiming& timing, MemoryRange range, bool store_data);

  uint64_t stored_bytes() const { return store_.bytes(); }  // data mode's allocation
  uint64_t transactions() const { return transactions_; }

 private:
  void b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  unsigned transport_dbg(tlm::tlm_generic_payload& p);
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& p, tlm::tlm_dmi& dmi);
  // Completes one access: copies (data mode) and adds its time to `delay`.
  void access(tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  // The bytes an access moves: those its byte enables let through.
  uint64_t enabled_bytes(const tlm::tlm_generic_payload& p);

  const HbmTiming timing_;
  const MemoryRange range_;
  Clock clock_;
  SparseMemory store_;
  SparseMemory* storage_;  // &store_ in data mode, null in timing mode
  // The train in the pipe: when it began, when its transfer ends, its bytes.
  uint64_t train_start_ps_ = 0, train_end_ps_ = 0, train_bytes_ = 0;
  uint64_t transactions_ = 0;
  // The last byte-enable patterns seen and their enabled bytes: a PE_DMA
  // stream's bursts repeat one pattern, and a composite's streams (A and B
  // tiles) take turns, so a few are kept.
  struct EnablePattern {
    std::vector<unsigned char> bytes;
    size_t tail = 0;
    uint64_t enabled = 0, enabled_tail = 0;
  };
  static constexpr int kPatterns = 4;
  EnablePattern patterns_[kPatterns];
  int next_pattern_ = 0;  // the entry replaced next (round robin)
};

}  // namespace kb
