#include "models/pe/engines/burst_initiator.h"

#include <cstdio>
#include <utility>

#include "models/isa/tensor_table.h"

namespace kb {

BurstInitiator::BurstInitiator(Socket& mem, const char* engine, InstantKind kind, std::function<void()> go_on)
    : mem_(mem), engine_(engine), resume_(kind, std::move(go_on)) {
  mem_.register_nb_transport_bw(this, &BurstInitiator::nb_transport_bw);
}

void BurstInitiator::fail_later(const char* why) {
  failed_ = why;
  late_ = true;
  resume_.notify(sc_core::SC_ZERO_TIME);
}

void BurstInitiator::refused() {
  char where[32];
  std::snprintf(where, sizeof where, "0x%llx", static_cast<unsigned long long>(burst_.get_address()));
  throw KernelError(std::string(engine_) + ": " + (burst_.is_read() ? "read" : "write") + " of " +
                    std::to_string(burst_.get_data_length()) + " bytes at " + where + " failed: " +
                    burst_.get_response_string());
}

tlm::tlm_sync_enum BurstInitiator::nb_transport_bw(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                                   sc_core::sc_time& delay) {
  // Reports name the engine's module, the socket's parent.
  if (&p != &burst_ || !late_) {
    SC_REPORT_ERROR(mem_.get_parent_object()->name(), "nb_transport_bw: a response to no burst in flight");
    return tlm::TLM_COMPLETED;
  }
  if (phase == tlm::END_REQ) return tlm::TLM_ACCEPTED;
  if (phase != tlm::BEGIN_RESP) {
    SC_REPORT_ERROR(mem_.get_parent_object()->name(), "nb_transport_bw: unexpected phase");
    return tlm::TLM_COMPLETED;
  }
  // Go on where the response lands, from the engine's continuation (not
  // inside the target's call).
  resume_.notify(delay);
  return tlm::TLM_COMPLETED;
}

}  // namespace kb
