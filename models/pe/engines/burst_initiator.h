// The burst initiator of PE_DMA and PE_IPC: one burst at a time on the
// engine's `mem` socket (TLM-2.0 base protocol, nb form: PE_SCHEDULER
// issues stages from methods).
//
// The engine fills payload() with a burst's command, address and data and
// calls send(). A memory that answers at once (TLM_COMPLETED, or BEGIN_RESP
// on the return path: the HBM model, through the interconnect) costs no
// process switch. One that answers later (an AT target, a b_transport-only
// target behind simple_target_socket, a full IPC queue) answers on the
// backward path; the engine's continuation then runs as an InstantActor of
// the engine's kind (models/util/instant_calendar.h), not inside the
// target's call, and goes on through resume(). The engine stays one class
// and calls no virtual function per burst (docs/conventions.md 10).
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "models/pe/engines/burst.h"
#include "models/util/asan_stack.h"
#include "models/util/instant_calendar.h"
#include "models/util/module_payload.h"
#include "models/util/sim_time.h"

namespace kb {

class BurstInitiator {
 public:
  using Socket = tlm_utils::simple_initiator_socket<BurstInitiator>;

  // How a stage with a late burst ends: `delay` from now; failed when !ok.
  struct LateEnd {
    sc_core::sc_time delay;
    bool ok = true;
  };

  // `engine` names the engine in a refused burst's error ("PE_DMA");
  // `kind` and `go_on` are its continuation after a late response.
  BurstInitiator(Socket& mem, const char* engine, InstantKind kind, std::function<void()> go_on);
  BurstInitiator(const BurstInitiator&) = delete;
  BurstInitiator& operator=(const BurstInitiator&) = delete;
  // Its place among the PEs at an instant (models/util/instant_calendar.h).
  void set_pe(uint32_t pe) { resume_.set_pe(pe); }

  // A stage begins: no burst late; its end so far `end_ps`.
  void begin(uint64_t end_ps) {
    late_ = false;
    end_ps_ = end_ps;
  }
  // The latest response's end so far (a stage may move it on between
  // bursts: PE_IPC's phases).
  uint64_t end_ps() const { return end_ps_; }
  void set_end_ps(uint64_t ps) { end_ps_ = ps; }
  // A burst was answered late and the stage has not ended.
  bool late() const { return late_; }

  // The next burst: the engine sets its command, address, data, streaming
  // width and byte enables; send() the rest.
  tlm::tlm_generic_payload& payload() { return burst_; }
  // Sends payload() to leave at issue_ps (at once if that has passed).
  // True: it was answered at once, and end_ps() covers its response. False:
  // late() until the stage ends; the continuation runs when the response
  // comes. A refused burst throws KernelError.
  bool send(uint64_t issue_ps);

  // The continuation's body: takes the late response, then go_on() sends
  // the next bursts (true when the stage's transfer is done; it may throw).
  // nullopt while a burst is still late; else how the stage ends, and
  // `error` says why when it failed.
  template <class GoOn>
  std::optional<LateEnd> resume(GoOn&& go_on, std::string& error);
  // An error the engine caught when the stage began: the stage fails as a
  // late one, from the continuation (an exception may not leave a method
  // of PE_SCHEDULER's, models/util/asan_stack.h).
  void fail_later(const char* why);

 private:
  void land(const sc_core::sc_time& delay);  // a burst's response, `delay` from now
  [[noreturn]] void refused();
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);

  Socket& mem_;
  const char* engine_;
  ModulePayload burst_;  // one burst at a time in flight
  uint64_t end_ps_ = 0;
  bool late_ = false;
  std::string failed_;  // fail_later's error
  InstantActor resume_;
};

inline bool BurstInitiator::send(uint64_t issue_ps) {
  burst_.set_dmi_allowed(false);
  burst_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  const uint64_t now = now_ps();
  sc_core::sc_time delay = from_ps(issue_ps > now ? issue_ps - now : 0);
  if (!send_burst(mem_, burst_, delay)) {
    late_ = true;
    return false;  // the response comes on the backward path
  }
  land(delay);
  return true;
}

inline void BurstInitiator::land(const sc_core::sc_time& delay) {
  const bool ok = burst_.is_response_ok();
  burst_.release();
  if (!ok) refused();
  end_ps_ = std::max(end_ps_, now_ps() + ps_of(delay));
}

template <class GoOn>
std::optional<BurstInitiator::LateEnd> BurstInitiator::resume(GoOn&& go_on, std::string& error) {
  if (!late_) return std::nullopt;
  if (!failed_.empty()) {
    error.swap(failed_);
    failed_.clear();
    late_ = false;
    return LateEnd{sc_core::SC_ZERO_TIME, false};
  }
  try {
    land(sc_core::SC_ZERO_TIME);
    if (!go_on()) return std::nullopt;
  } catch (const std::exception& e) {
    asan_forget_unwound_frames();  // a method's stack (models/util/asan_stack.h)
    error = e.what();
    late_ = false;
    return LateEnd{sc_core::SC_ZERO_TIME, false};
  }
  late_ = false;
  const uint64_t now = now_ps();
  return LateEnd{from_ps(end_ps_ > now ? end_ps_ - now : 0), true};
}

}  // namespace kb
