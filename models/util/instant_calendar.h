// The canonical order of same-time work across the PEs of a simulation
// (issue 16; README, "Same-instant order").
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
// InstantActor::notify has sc_event::notify(delay)'s semantics (one
// pending run; an earlier notification replaces a later one, a later one
// is ignored); InstantQueue::notify has sc_event_queue's (every
// notification runs it once).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <systemc>

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
  // Processes run so far and actors run: a sweep is one process activation.
  uint64_t sweeps() const { return sweeps_; }
  uint64_t runs() const { return runs_; }

 private:
  friend class InstantActorBase;
  friend class InstantActor;
  friend class InstantQueue;
  InstantCalendar();
  struct Entry {
    sc_core::sc_time at;
    uint64_t sweep;
    uint64_t key;
    InstantActorBase* actor;
    uint64_t gen;  // InstantActor's notification; 0 for an InstantQueue
  };
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const {
      if (a.at != b.at) return a.at > b.at;
      if (a.sweep != b.sweep) return a.sweep > b.sweep;
      return a.key > b.key;
    }
  };
  // The sweep a notification `delay` from now for `key` falls in.
  uint64_t sweep_for(const sc_core::sc_time& delay, uint64_t key) const;
  void push(const Entry& e, const sc_core::sc_time& delay);
  void run();  // the calendar's method: one sweep
  uint32_t next_seq() { return seq_++; }

  std::vector<Entry> heap_;  // a min-heap by (at, sweep, key)
  sc_core::sc_event wake_;
  bool running_ = false;
  uint64_t running_key_ = 0;
  sc_core::sc_time sweep_at_ = sc_core::sc_max_time();  // the instant of the last sweep run
  uint64_t sweep_ = 0;                                    // ... and its number there
  uint32_t seq_ = 0;
  uint64_t sweeps_ = 0, runs_ = 0;
};

}  // namespace kb
