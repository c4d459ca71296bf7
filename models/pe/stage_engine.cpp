#include "models/pe/stage_engine.h"

#include "models/pe/engine_timing.h"

namespace kb {

StageEngine::StageEngine(sc_core::sc_module_name name, const PeConfig& cfg)
    : sc_module(name), in("in"), cfg_(cfg), clock_(cfg.clock_freq_ghz) {
  in.register_b_transport(this, &StageEngine::b_transport);
}

sc_core::sc_time StageEngine::execute(const Stage& s) {
  return clock_.cycles(stage_cycles(cfg_, s));
}

void StageEngine::b_transport(tlm::tlm_generic_payload& payload,
                              sc_core::sc_time& delay) {
  const StageExtension* ext = payload.get_extension<StageExtension>();
  if (!ext || !ext->stage) {
    payload.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  delay += execute(*ext->stage);
  // Data mode computes the values now, at issue: every input is final (its
  // producers completed before the scheduler issued this stage) and nothing
  // reads or overwrites the outputs before this stage completes (hazard
  // scoreboard and tile-plan edges), so the values are those at completion.
  if (data_ && ext->data) execute_stage_data(*ext->stage, *ext->data, *data_);
  payload.set_response_status(tlm::TLM_OK_RESPONSE);
}

}  // namespace kb
