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
  const sc_core::sc_time now = sim_now();
  if (heap_.empty() || heap_.front().at != now) return;  // a stale wake
  running_ = true;
  sweep_ = heap_.front().order >> kSweepShift;
  sweep_at_ = now;
  ++sweeps_;
  if (sweep_ >= (uint64_t(1) << (64 - kSweepShift)) - 1) {
    SC_REPORT_FATAL("kernbench/instant_calendar", "65535 sweeps at one instant: a zero-delay loop");
  }
  const uint64_t end = (sweep_ + 1) << kSweepShift;  // orders of this sweep are below
  while (!heap_.empty() && heap_.front().at == now && heap_.front().order < end) {
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    const Entry e = heap_.back();
    heap_.pop_back();
    if (e.gen != 0) {  // an InstantActor: only its latest notification runs
      auto* a = static_cast<InstantActor*>(e.actor);
      if (!a->pending_ || a->gen_ != e.gen) continue;
      a->pending_ = false;
    }
    running_key_ = e.order & ((uint64_t(1) << kSweepShift) - 1);
    try {
      e.actor->run_();
    } catch (...) {
      running_ = false;
      if (!heap_.empty()) wake_.notify(heap_.front().at - now);
      throw;  // as from the actor's own method
    }
  }
  running_ = false;
  if (!heap_.empty()) wake_.notify(heap_.front().at - now);
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
