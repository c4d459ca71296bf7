// The canonical order of same-time work across the PEs of a simulation
// (docs/architecture.md, "Same-instant order").
//
// SystemC runs the processes of one delta cycle in an order the standard
// leaves open (Debian's kernel: its timed-queue heap and the order of
// notification), and a shared resource (an HBM slice's train, a UCIe
// link, a PE_IPC receive port) serves same-time requests in the order
// they are made. The PE processes that make those requests (PE_CPU's
// dispatch end, PE_SCHEDULER's step, PE_IPC's and PE_DMA's continuations)
// therefore do not run as SystemC processes of their own: each is an
// InstantActor, and one calendar method per simulation runs the actors due
// at an instant in the order of their keys,
//     (global PE number, kind, order of construction),
// a sweep at a time. An actor notified for the current instant during a
// sweep runs in that sweep if its key comes after the one running, else in
// the next sweep (a delta cycle later); an actor notified from a SystemC
// process (a kernel thread, a VP) for the current instant runs in a sweep
// after the ones already run. So what the PEs do at an instant, and the
// order in which they reach shared resources, is a function of the model's
// state, not of SystemC's process order; and an instant of a whole mesh is
// one process activation, not one per PE and event.
//
// Look-ahead (off unless set_lookahead(true); kernbench's runs turn it on):
// when an instant's sweeps are done and nothing outside the calendar is due
// at or before the calendar's next instant (sc_time_to_pending_activity()),
// that instant runs in the same activation, ahead of SystemC's time. The
// model reads time through sim_now(), which is then the instant run, and
// wakes processes outside the calendar through notify_outside(), which
// notifies them at that instant's SystemC time; the calendar stops looking
// ahead at an instant that woke one. So every process outside the calendar
// runs at the time it would have, after the same calendar work, and the op
// log is the same byte for byte; what goes is one SystemC activation per
// instant. Only for sc_start() without a time limit (the
// calendar cannot see one), not with a checker or probe that reads
// sc_time_stamp() inside a PE's transactions (it sees SystemC's time, not
// the instant's; so does an SC_REPORT's time stamp), and not with a target
// on a PE's `mem` socket that answers later from a process of its own (the
// model's HBM, TCM, router and links answer at once, or from the calendar).
//
// InstantActor::notify has sc_event::notify(delay)'s semantics (one
// pending run; an earlier notification replaces a later one, a later one
// is ignored); InstantQueue::notify has sc_event_queue's (every
// notification runs it once).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include <systemc>

#include "models/util/sim_time.h"

namespace kb {

class InstantCalendar;

// What runs, and where among the actors of an instant. Kinds order one
// PE's actors at an instant; lower first.
enum class InstantKind : uint8_t {
  kCpuDispatchEnd,  // PE_CPU: a dispatch (or tl.cycles) ends
  kIpcArrival,      // PE_IPC: a message's last byte is in
  kIpcSlotsFree,    // PE_IPC: recvs ended, slots free
  kIpcResume,       // PE_IPC: a held transfer goes on
  kDmaResume,       // PE_DMA: a burst answered late
  kSchedulerStep,   // PE_SCHEDULER: the instant's completions, accepts, issues
};

class InstantActorBase {
 public:
  // `pe`: the global PE number (set_pe() when it is known later).
  InstantActorBase(InstantKind kind, std::function<void()> run);
  InstantActorBase(const InstantActorBase&) = delete;
  InstantActorBase& operator=(const InstantActorBase&) = delete;
  void set_pe(uint32_t pe);
  uint64_t key() const { return key_; }

 protected:
  friend class InstantCalendar;
  InstantCalendar& cal_;
  std::function<void()> run_;
  uint64_t key_ = 0;
  uint32_t seq_ = 0;  // construction order: keys are distinct
  InstantKind kind_;
};

// sc_event::notify(delay) semantics.
class InstantActor : public InstantActorBase {
 public:
  using InstantActorBase::InstantActorBase;
  void notify(const sc_core::sc_time& delay);

 private:
  friend class InstantCalendar;
  bool pending_ = false;
  sc_core::sc_time at_;
  uint64_t sweep_ = 0;
  uint64_t gen_ = 0;  // entries of an older notification are stale
};

// sc_event_queue::notify(delay) semantics.
class InstantQueue : public InstantActorBase {
 public:
  using InstantActorBase::InstantActorBase;
  void notify(const sc_core::sc_time& delay);
};

class InstantCalendar {
 public:
  // The simulation's calendar, made at first use (during elaboration).
  static InstantCalendar& get();
  // Sweeps run so far (without look-ahead, a sweep is one process
  // activation), and the instants run ahead of SystemC's time.
  uint64_t sweeps() const { return sweeps_; }
  uint64_t instants_ahead() const { return instants_ahead_; }
  // Look-ahead (above) for the simulations this process elaborates next.
  static void set_lookahead(bool on) { lookahead_ = on; }
  static bool lookahead() { return lookahead_; }

 private:
  friend class InstantActorBase;
  friend class InstantActor;
  friend class InstantQueue;
  InstantCalendar();
  // 32 bytes, ordered by (at, order): order = sweep << 48 | key.
  struct Entry {
    sc_core::sc_time at;
    uint64_t order;
    InstantActorBase* actor;
    uint64_t gen;  // InstantActor's notification; 0 for an InstantQueue
  };
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const {
      return a.at != b.at ? a.at > b.at : a.order > b.order;
    }
  };
  static constexpr int kSweepShift = 48;  // keys are below 2^48 (set_pe)
  // The sweep a notification `delay` from now for `key` falls in.
  uint64_t sweep_for(const sc_core::sc_time& delay, uint64_t key) const;
  void push(const Entry& e, const sc_core::sc_time& delay);
  void run();                            // the calendar's method: one sweep, or more ahead
  void sweep(const sc_core::sc_time& at);  // the next sweep due at `at`
  // After a sweep at `at` (SystemC's time `now`): whether the next can run
  // in this activation (look-ahead).
  bool may_go_on(const sc_core::sc_time& at, const sc_core::sc_time& now);
  // The activation's end at SystemC's time `now`, its last sweep at `at`:
  // its next wake (or the instant's deferred notifications).
  void end_activation(const sc_core::sc_time& at, const sc_core::sc_time& now);
  uint32_t next_seq() { return seq_++; }

  std::vector<Entry> heap_;  // a min-heap by (at, sweep, key)
  sc_core::sc_event wake_;
  bool running_ = false;
  uint64_t running_key_ = 0;
  sc_core::sc_time sweep_at_ = sc_core::sc_max_time();  // the instant of the last sweep run
  uint64_t sweep_ = 0;                                    // ... and its number there
  uint32_t seq_ = 0;
  uint64_t sweeps_ = 0;
  uint64_t instants_ahead_ = 0;
  sc_core::sc_time ahead_at_;     // the instant run ahead (detail::g_calendar_now points here)
  // sc_time_to_pending_activity() as of the last ask, from SystemC's time:
  // only an event notified since (notify_outside) changes it.
  sc_core::sc_time outside_due_;
  // An instant run ahead woke a process outside: at its SystemC time, the
  // calendar's first activation makes those notifications
  // (detail::g_outside_at_instant) and schedules its own next sweep.
  bool deferred_ = false;
  sc_core::sc_time deferred_at_;
  static inline bool lookahead_ = false;
};

namespace detail {
inline sc_core::sc_time g_calendar_lead;  // looking ahead: the instant run - SystemC's time
inline bool g_outside_notified = false;   // an event outside notified since the calendar last asked SystemC
// Looking ahead: the events notified at the instant run, in order, each at
// once (`now`), a delta later (zero delay) or after `delay`; the calendar
// makes these notifications when SystemC's time reaches the instant (and
// looks no further ahead once there is one).
struct OutsideNotification {
  sc_core::sc_event* event;
  bool now;
  sc_core::sc_time delay;
};
inline std::vector<OutsideNotification> g_outside_at_instant;
}  // namespace detail

// Wakes a process outside the calendar (a kernel thread, a VP's method) from
// PE code: ev.notify() or ev.notify(delay) at the model's time, sim_now().
// Every sc_event notification in PE code goes through these (look-ahead).
// At an instant run ahead, the calendar stops looking ahead after that
// sweep, and its first activation at the instant's SystemC time makes the
// instant's notifications, in their order, so the processes they wake run
// in the delta cycles and order they would have (then the instant's next
// sweep, a delta later), and an event keeps its notify semantics (an
// immediate notification cancels a pending timed one, not the reverse).
inline void notify_outside(sc_core::sc_event& ev) {
  detail::g_outside_notified = true;
  if (!detail::g_calendar_now) return ev.notify();
  detail::g_outside_at_instant.push_back({&ev, true, sc_core::SC_ZERO_TIME});
}
inline void notify_outside(sc_core::sc_event& ev, const sc_core::sc_time& delay) {
  detail::g_outside_notified = true;
  if (!detail::g_calendar_now) return ev.notify(delay);
  detail::g_outside_at_instant.push_back({&ev, false, delay});
}

// Inline: every PE event passes here.

inline uint64_t InstantCalendar::sweep_for(const sc_core::sc_time& delay, uint64_t key) const {
  if (delay != sc_core::SC_ZERO_TIME) return 0;
  if (running_) return key > running_key_ ? sweep_ : sweep_ + 1;
  return sweep_at_ == sim_now() ? sweep_ + 1 : 0;
}

inline void InstantCalendar::push(const Entry& e, const sc_core::sc_time& delay) {
  heap_.push_back(e);
  std::push_heap(heap_.begin(), heap_.end(), Later{});
  // A sweep under way schedules the next when it ends; an earlier pending
  // notification of wake_ wins.
  if (!running_) wake_.notify(delay);
}

inline void InstantActor::notify(const sc_core::sc_time& delay) {
  const sc_core::sc_time at = sim_now() + delay;
  const uint64_t sweep = cal_.sweep_for(delay, key_);
  if (pending_ && (at_ < at || (at_ == at && sweep_ <= sweep))) return;  // the earlier one stands
  pending_ = true;
  at_ = at;
  sweep_ = sweep;
  cal_.push({at, sweep << InstantCalendar::kSweepShift | key_, this, ++gen_}, delay);
}

inline void InstantQueue::notify(const sc_core::sc_time& delay) {
  const sc_core::sc_time at = sim_now() + delay;
  cal_.push({at, cal_.sweep_for(delay, key_) << InstantCalendar::kSweepShift | key_, this, 0}, delay);
}

}  // namespace kb
