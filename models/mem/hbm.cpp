#include "models/mem/hbm.h"

#include "models/pe/engine_timing.h"

namespace kb {

Hbm::Hbm(sc_core::sc_module_name name, const PeConfig& cfg)
    : sc_module(name), in("in"), cfg_(cfg), clock_(cfg.clock_freq_ghz) {
  in.register_b_transport(this, &Hbm::b_transport);
}

void Hbm::b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  // Annotated, not waited: the initiator synchronises (loosely timed).
  delay += clock_.cycles_from(delay, hbm_access_cycles(cfg_, payload.get_data_length()));
  payload.set_response_status(tlm::TLM_OK_RESPONSE);
}

}  // namespace kb
