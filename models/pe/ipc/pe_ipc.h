// PE_IPC: the PE's inter-PE message unit (issue 14 item 5). `msg` is the
// PE's IPC receive window (models/mem/address_map.h ipc_window(g)), reached
// from other PEs through the cube interconnect and the mesh.
//
// Contract skeleton: every access is refused with TLM_ADDRESS_ERROR_RESPONSE
// until the send/recv protocol lands.
#pragma once

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "models/config/pe_config.h"

namespace kb {

class PeIpc : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket_optional<PeIpc> msg;  // the IPC receive window (may stay unbound)

  PeIpc(sc_core::sc_module_name name, const PeConfig& cfg);

 private:
  void b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  unsigned transport_dbg(tlm::tlm_generic_payload& p);

  const PeConfig& cfg_;
};

}  // namespace kb
