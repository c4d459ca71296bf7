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

uint64_t InstantCalendar::sweep_for(const sc_core::sc_time& delay, uint64_t key) const {
  if (delay != sc_core::SC_ZERO_TIME) return 0;
  if (running_) return key > running_key_ ? sweep_ : sweep_ + 1;
  return sweep_at_ == sim_now() ? sweep_ + 1 : 0;
}

void InstantCalendar::push(const Entry& e, const sc_core::sc_time& delay) {
  heap_.push_back(e);
  std::push_heap(heap_.begin(), heap_.end(), Later{});
  // A sweep under way schedules the next when it ends; an earlier pending
  // notification of wake_ wins.
  if (!running_) wake_.notify(delay);
}

void InstantCalendar::run() {
  const sc_core::sc_time now = sim_now();
  if (heap_.empty() || heap_.front().at != now) return;  // a stale wake
  running_ = true;
  sweep_ = heap_.front().sweep;
  sweep_at_ = now;
  ++sweeps_;
  while (!heap_.empty() && heap_.front().at == now && heap_.front().sweep == sweep_) {
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    const Entry e = heap_.back();
    heap_.pop_back();
    if (e.gen != 0) {  // an InstantActor: only its latest notification runs
      auto* a = static_cast<InstantActor*>(e.actor);
      if (!a->pending_ || a->gen_ != e.gen) continue;
      a->pending_ = false;
    }
    running_key_ = e.key;
    ++runs_;
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
  key_ = uint64_t(pe) << 32 | uint64_t(kind_) << 24 | (seq_ & 0xffffffu);
}

void InstantActor::notify(const sc_core::sc_time& delay) {
  const sc_core::sc_time at = sim_now() + delay;
  const uint64_t sweep = cal_.sweep_for(delay, key_);
  if (pending_ && (at_ < at || (at_ == at && sweep_ <= sweep))) return;  // the earlier one stands
  pending_ = true;
  at_ = at;
  sweep_ = sweep;
  cal_.push({at, sweep, key_, this, ++gen_}, delay);
}

void InstantQueue::notify(const sc_core::sc_time& delay) {
  const sc_core::sc_time at = sim_now() + delay;
  cal_.push({at, cal_.sweep_for(delay, key_), key_, this, 0}, delay);
}

}  // namespace kb
