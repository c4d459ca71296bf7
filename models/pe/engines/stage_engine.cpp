#include "models/pe/engines/stage_engine.h"

#include "models/mem/address_map.h"
#include "models/util/asan_stack.h"

namespace kb {

StageEngine::StageEngine(sc_core::sc_module_name name, const PeConfig& cfg)
    : sc_module(name),
      in("in"),
      data("data"),
      cfg_(cfg),
      clock_(cfg.clock_freq_ghz),
      port_(data, MemoryRange{kTcmBase, kTcmBase + cfg.tcm.size_bytes}) {
  in.register_nb_transport_fw(this, &StageEngine::nb_transport_fw);
}

std::optional<sc_core::sc_time> StageEngine::execute(const Stage& s, CommandData* d) {
  const sc_core::sc_time t = clock_.cycles(cycles_of(s));
  // Data mode computes the values now, at issue: every input is final (its
  // producers completed before the scheduler issued this stage) and nothing
  // reads or overwrites the outputs before this stage completes (hazard
  // scoreboard and tile-plan edges), so the values are those at completion.
  if (d && data_mode()) {
    DataContext ctx = context();
    compute(s, *d, ctx);
  }
  return t;
}

tlm::tlm_sync_enum StageEngine::nb_transport_fw(tlm::tlm_generic_payload& payload,
                                                tlm::tlm_phase& phase, sc_core::sc_time& delay) {
  const StageExtension* ext = payload.get_extension<StageExtension>();
  if (phase != tlm::BEGIN_REQ || pending_) {
    SC_REPORT_ERROR(name(), "nb_transport_fw: only BEGIN_REQ, one stage at a time");
    payload.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return tlm::TLM_COMPLETED;
  }
  if (!payload.is_write() || payload.get_address() != 0 || !ext || !ext->stage) {
    payload.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    return tlm::TLM_COMPLETED;
  }
  pending_ = &payload;
  std::optional<sc_core::sc_time> t;
  try {
    t = execute(*ext->stage, ext->data);
  } catch (...) {
    asan_forget_unwound_frames();  // a method's stack (models/util/asan_stack.h)
    pending_ = nullptr;  // PE_SCHEDULER fails the command (its fault handler)
    throw;
  }
  if (!t) return tlm::TLM_ACCEPTED;  // finish() answers on the backward path
  pending_ = nullptr;
  delay += *t;
  payload.set_response_status(tlm::TLM_OK_RESPONSE);
  return tlm::TLM_COMPLETED;
}

void StageEngine::finish(const sc_core::sc_time& delay, bool ok) {
  tlm::tlm_generic_payload& p = *pending_;
  pending_ = nullptr;
  p.set_response_status(ok ? tlm::TLM_OK_RESPONSE : tlm::TLM_GENERIC_ERROR_RESPONSE);
  if (!ok) p.get_extension<StageExtension>()->error = error_.c_str();
  tlm::tlm_phase phase = tlm::BEGIN_RESP;  // implies END_REQ
  sc_core::sc_time d = delay;
  in->nb_transport_bw(p, phase, d);  // the scheduler completes it (TLM_COMPLETED)
}

}  // namespace kb
