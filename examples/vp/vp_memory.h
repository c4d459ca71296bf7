// The VP's own DRAM: a sparse byte store behind one multi-initiator TLM
// target socket, as a platform's memory would be. It knows nothing of the
// PE: the PEs' `mem` sockets and the host driver bind to it like any bus
// master. Every access completes at once with a fixed latency (loosely
// timed; nb_transport answers TLM_COMPLETED), byte enables are honoured,
// transport_dbg reads and writes without time.
#pragma once

#include <array>
#include <cstdint>
#include <unordered_map>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>

class VpMemory : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<VpMemory> in;

  VpMemory(sc_core::sc_module_name name, sc_core::sc_time latency);

 private:
  static constexpr uint64_t kPage = 4096;
  void b_transport(int from, tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_fw(int from, tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  unsigned transport_dbg(int from, tlm::tlm_generic_payload& p);
  bool access(tlm::tlm_generic_payload& p);  // copies the bytes; false on a protocol error
  uint8_t* byte(uint64_t address);

  sc_core::sc_time latency_;
  std::unordered_map<uint64_t, std::array<uint8_t, kPage>> pages_;
};
