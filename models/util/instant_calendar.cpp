#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "models/util/instant_calendar.h"

#include <algorithm>

#include "models/util/sim_time.h"

namespace kb {

InstantCalendar& InstantCalendar::get() {
  // One per process: a SystemC simulation is elaborated once per process.
  static InstantCalendar* calendar = new InstantCalendar;
  return *calendar;
}

InstantCalendar::InstantCalendar() : wake_("kb_instant_calendar_wake") {
  sc_core::sc_spawn_options o;
  o.spawn_method();
  o.set_sensitivity(&wake_);
  o.dont_initialize();
  sc_core::sc_spawn([this] { run(); }, "kb_instant_calendar", &o);
}

void InstantCalendar::run() {
  const sc_core::sc_time now = sim_now();  // SystemC's: nothing runs ahead between activations
  if (deferred_ && now == deferred_at_) {  // an instant run ahead: its notifications outside
    deferred_ = false;
    for (const detail::OutsideNotification& n : detail::g_outside_at_instant) {
      if (n.now) n.event->notify();
      else n.event->notify(n.delay);
    }
    detail::g_outside_at_instant.clear();
    if (!heap_.empty()) wake_.notify(heap_.front().at - now);  // zero: the next sweep, a delta later
    return;
  }
  if (heap_.empty() || heap_.front().at != now) return;  // a stale wake
  running_ = true;
  sc_core::sc_time at = now;
  detail::g_outside_notified = true;  // ask SystemC once, then after each notification
  try {
    sweep(at);
    while (lookahead_ && may_go_on(at, now)) {
      if (heap_.front().at != at) {  // the next instant, ahead of SystemC's time
        at = heap_.front().at;
        ahead_at_ = at;
        detail::g_calendar_lead = at - now;
        detail::g_calendar_now = &ahead_at_;
        ++instants_ahead_;
      }
      sweep(at);
    }
  } catch (...) {
    end_activation(at, now);
    throw;  // as from the actor's own method
  }
  end_activation(at, now);
}

void InstantCalendar::end_activation(const sc_core::sc_time& at, const sc_core::sc_time& now) {
  const bool ahead = detail::g_calendar_now != nullptr;
  detail::g_calendar_now = nullptr;
  running_ = false;
  if (ahead && !detail::g_outside_at_instant.empty()) {
    // Stopped at `at` for a process woken then (may_go_on: the only stop
    // with sweeps left at `at`): its notifications, then the instant's next
    // sweep a delta later (above).
    deferred_ = true;
    deferred_at_ = at;
    wake_.notify(at - now);
  } else if (!heap_.empty()) {
    wake_.notify(heap_.front().at - now);
  } else if (ahead) {
    wake_.notify(at - now);  // SystemC's time reaches the last instant run: the run's end time
  }
}

bool InstantCalendar::may_go_on(const sc_core::sc_time& at, const sc_core::sc_time& now) {
  if (heap_.empty() || !detail::g_outside_at_instant.empty()) return false;  // woke a process outside
  if (detail::g_outside_notified) {
    detail::g_outside_notified = false;
    // Zero when a process is runnable, a delta notification or an update
    // is pending at SystemC's time (a sweep at `now` may have woken one);
    // else how far SystemC's next timed notification is.
    outside_due_ = sc_core::sc_time_to_pending_activity();
  }
  const sc_core::sc_time& next = heap_.front().at;
  // Another sweep at `at` is the next delta cycle's only work; a later
  // instant goes first only if nothing outside is due at or before it.
  return next == at ? outside_due_ != sc_core::SC_ZERO_TIME : next - now < outside_due_;
}

void InstantCalendar::sweep(const sc_core::sc_time& at) {
  sweep_ = heap_.front().order >> kSweepShift;
  sweep_at_ = at;
  ++sweeps_;
  if (sweep_ >= (uint64_t(1) << (64 - kSweepShift)) - 1) {
    SC_REPORT_FATAL("kernbench/instant_calendar", "65535 sweeps at one instant: a zero-delay loop");
  }
  const uint64_t end = (sweep_ + 1) << kSweepShift;  // orders of this sweep are below
  while (!heap_.empty() && heap_.front().at == at && heap_.front().order < end) {
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    const Entry e = heap_.back();
    heap_.pop_back();
    if (e.gen != 0) {  // an InstantActor: only its latest notification runs
      auto* a = static_cast<InstantActor*>(e.actor);
      if (!a->pending_ || a->gen_ != e.gen) continue;
      a->pending_ = false;
    }
    running_key_ = e.order & ((uint64_t(1) << kSweepShift) - 1);
    e.actor->run_();
  }
}

InstantActorBase::InstantActorBase(InstantKind kind, std::function<void()> run)
    : cal_(InstantCalendar::get()), run_(std::move(run)), seq_(cal_.next_seq()), kind_(kind) {
  set_pe(0);
}

void InstantActorBase::set_pe(uint32_t pe) {
  if (pe >= (1u << 16)) SC_REPORT_FATAL("kernbench/instant_calendar", "global PE numbers must be below 65536");
  key_ = uint64_t(pe) << 32 | uint64_t(kind_) << 24 | (seq_ & 0xffffffu);
}

}  // namespace kb
