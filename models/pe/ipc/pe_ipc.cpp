#include "models/pe/ipc/pe_ipc.h"

namespace kb {

PeIpc::PeIpc(sc_core::sc_module_name name, const PeConfig& cfg) : sc_module(name), msg("msg"), cfg_(cfg) {
  msg.register_b_transport(this, &PeIpc::b_transport);
  msg.register_nb_transport_fw(this, &PeIpc::nb_transport_fw);
  msg.register_transport_dbg(this, &PeIpc::transport_dbg);
}

void PeIpc::b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  (void)delay;
  p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
}

tlm::tlm_sync_enum PeIpc::nb_transport_fw(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                          sc_core::sc_time& delay) {
  (void)phase, (void)delay;
  p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
  return tlm::TLM_COMPLETED;
}

unsigned PeIpc::transport_dbg(tlm::tlm_generic_payload& p) {
  p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
  return 0;
}

}  // namespace kb
