// PE_SCHEDULER: the descriptor queue, the hazard scoreboard and the stage
// issue logic.
//
// - `in` accepts TLM WRITEs at kQueueAddress whose data is one binary
//   command descriptor (models/isa/descriptor.h), exactly its logical_bytes()
//   long, while fewer than `queue_depth` descriptors are accepted but not
//   complete; otherwise the write waits for a slot (back-pressure on
//   PE_CPU). The scheduler decodes the bytes and makes PE_CPU's dispatch
//   checks (check_command, the docs/cost-model.md D7 cap). A
//   CommandExtension, when present, is a fast path: its command is taken
//   instead of decoding, once the bytes' length is its logical_bytes and
//   their framing names its type and id. A descriptor's command id is its
//   24-bit completion id unwrapped: the smallest id above the previous
//   accepted one with those low 24 bits (the extension's id on the fast
//   path; PE_CPU numbers 1, 2, 3, ..., so both paths give the same ids).
// - A malformed descriptor (see on_descriptor_error) is checked when the
//   write arrives, even with the queue full, and refused at once: the
//   write gets TLM_GENERIC_ERROR_RESPONSE (TLM_BYTE_ENABLE_ERROR_RESPONSE
//   with byte enables, TLM_BURST_ERROR_RESPONSE with a streaming width not
//   its length), SC_REPORT_ERROR reports it under kDescriptorErrorType
//   (the scheduler catches its own report when the action is SC_THROW,
//   SystemC's default for errors), the hook is told, and nothing is queued:
//   the simulation goes on. Two
//   forms: b_transport blocks until accepted; nb_transport_fw (BEGIN_REQ)
//   returns TLM_COMPLETED when accepted at once, else TLM_ACCEPTED and the
//   acceptance follows as BEGIN_RESP on the backward path. A BEGIN_REQ with
//   a delay begins `delay` from now (the base protocol's timing
//   annotation): it is taken then, or once a slot frees, as if written at
//   that time; its descriptor is checked when it is sent. Each initiator on
//   `in` has at most one write outstanding (the base protocol's request
//   exclusion); writes waiting for a slot are taken in the order they
//   began, writes that began together in the order of their sockets. A READ of 8
//   bytes at kDrainAddress (b_transport, from a thread) returns when every
//   accepted descriptor has completed, with the number of descriptors
//   completed so far (the completion register, little-endian). Any other
//   address gets TLM_ADDRESS_ERROR_RESPONSE, the wrong command for an
//   address TLM_COMMAND_ERROR_RESPONSE.
// - Each accepted command becomes stages (tile_plan.h), at no simulated cost
//   (docs/cost-model.md D5). A command's stages become ready once every
//   earlier command it conflicts with (RAW, WAR, WAW on byte ranges) has
//   completed.
// - Per engine, the oldest ready stage goes over its socket as soon as the
//   engine is idle; engines run concurrently. A stage is a BEGIN_REQ
//   (nb_transport_fw, from a method; stage_engine.h); the engine answers
//   TLM_COMPLETED with the stage's duration annotated, or later with
//   BEGIN_RESP on the backward path, and the scheduler completes the stage
//   when that time has passed: no thread switch per stage.
// - One method, step(), does an instant's work in a canonical order: the
//   stages that end now complete (engine-table order), a held descriptor
//   write is accepted, then every idle engine takes its oldest ready stage
//   (engine-table order). Which stage an engine takes thus never depends on
//   the order in which SystemC ran same-time processes, and an instant costs
//   one activation, not one per engine and event. step() is an actor of the
//   simulation's instant calendar (models/util/instant_calendar.h), which
//   runs the PEs' same-time work in PE order.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include "models/config/pe_config.h"
#include "models/isa/commands.h"
#include "models/isa/queue.h"
#include "models/isa/register_map.h"
#include "models/pe/stage/command_data.h"
#include "models/pe/stage/issue_policy.h"
#include "models/pe/scheduler/hazard_scoreboard.h"
#include "models/pe/scheduler/ready_queue.h"
#include "models/pe/stage/stage.h"
#include "models/isa/tensor_table.h"
#include "models/pe/scheduler/tile_plan.h"
#include "models/trace/op_log.h"
#include "models/util/instant_calendar.h"
#include "models/util/module_payload.h"
#include "models/util/sim_time.h"

namespace kb {

class CounterHistory;  // models/trace/counter_probe.h

// A stage payload's data: the stage's identity (the extension carries the
// whole decoded stage).
struct StageWord {
  uint64_t cmd_id = 0;
  uint64_t seq = 0;
  int64_t tile = -1;
  uint64_t bytes = 0;
};

class PeScheduler : public sc_core::sc_module {
 public:
  // From PE_CPU's `cmd` and PE_REGS's queue window: any number of
  // initiators write descriptors into the one queue.
  tlm_utils::multi_passthrough_target_socket<PeScheduler> in;
  // One socket per engine, named by its port in the engine table
  // (models/trace/component_table.h): engine[Engine::kDma] is "dma".
  sc_core::sc_vector<tlm_utils::simple_initiator_socket<PeScheduler>> engine;

  PeScheduler(sc_core::sc_module_name name, const PeConfig& cfg,
              const TensorTable& table, OpLog& log);

  // Where an error raised while a command runs goes (PE_CPU fails the
  // launch): a method must not let an exception escape. Without
  // a handler, the exception propagates. A fault stops the scheduler: no
  // stage is issued or completed after it (stages on an engine are abandoned).
  using FaultHandler =
      std::function<void(uint64_t cmd_id, const char* cmd_type, const std::string& what)>;
  void on_fault(FaultHandler h) { on_fault_ = std::move(h); }

  // A descriptor write that does not decode or check:
  // its error code, its completion id (0 when not known) and the message.
  // The write gets an error response; PE_REGS shows the error. Codes:
  // kUnknownType, kBadLength (the length is not the logical bytes its
  // fields make), kBadHandle (a handle names no tensor: an empty or
  // misaligned table entry, or a handle of no kind), kCompositeCap,
  // kMalformed (a field's value; byte enables, a streaming width, no data),
  // kInvalidCommand (check_command: its tensors do not fit it). Called
  // before the report; it must not throw.
  using DescriptorErrorHandler =
      std::function<void(regs::ErrorCode code, uint32_t completion_id, const std::string& what)>;
  void on_descriptor_error(DescriptorErrorHandler h) { on_descriptor_error_ = std::move(h); }

  // The PE count of the top (PePlace::pes()): IPC peers are below it.
  void set_pes(uint32_t pes) { pes_ = pes; }
  // Its place among the PEs at an instant (models/util/instant_calendar.h).
  void set_pe(uint32_t pe) { step_.set_pe(pe); }
  // Engine e's issue policy (models/pe/stage/issue_policy.h; null: the
  // oldest ready stage first), kept alive by the caller while the
  // simulation runs. Set before sc_start.
  void set_issue_policy(Engine e, IssuePolicy* p) {
    policy_[int(e)] = p;
    policed_ = p ? policed_ | 1u << int(e) : policed_ & ~(1u << int(e));
    ordered_types_ = 0;
    for (const IssuePolicy* q : policy_)
      if (q) ordered_types_ |= q->command_types();
  }
  // Offers engine e's held stages again (its policy: what held them may
  // have changed, e.g. a RECV's message arrived).
  void wake(Engine e) {
    recheck_ |= 1u << int(e);
    if (!busy_[int(e)]) request_step();
  }
  // Engine e's oldest stage its policy held (IssuePolicy::kHeld) at the
  // last issue attempt (null: none).
  const Stage* held_stage(Engine e) const { return held_[int(e)]; }
  size_t occupancy() const { return inflight_; }
  // A descriptor write held by a full queue (deadlock report).
  bool writer_blocked() const { return blocked_writers_ > 0 || next_pending() != nullptr; }
  uint64_t completed() const { return completed_; }  // descriptors completed since time 0
  // Notified (delta) whenever the queue becomes empty after a completion.
  const sc_core::sc_event& drained_event() const { return drained_; }
  void enable_signals(bool on) { signals_ = on; }
  // Told every occupancy as it changes (a trace's counter; null: none).
  // Unlike occupancy_signal it needs no signals and no process. Set it
  // before sc_start (its first sample is time 0) and keep it alive while
  // the simulation runs; its sink runs inside PE_SCHEDULER's step, possibly
  // ahead of SystemC's time (sim_now()), and must not throw.
  void set_occupancy_history(CounterHistory* h) { occupancy_history_ = h; }
  // Observers for waveforms and probes (enable_signals), written by one
  // method from the state below.
  sc_core::sc_signal<uint32_t> occupancy_signal;
  sc_core::sc_signal<bool> busy_signal[kNumEngines];

 private:
  struct InFlight {
    uint64_t id = 0;
    uint32_t tag = 0;  // its index in pool_: the scoreboard's tag for it
    TilePlan plan;           // produces the command's stages as they can run
    uint32_t blockers = 0;   // earlier conflicting commands not yet complete
    std::vector<InFlight*> waiters;  // later commands blocked on this one
    std::unique_ptr<CommandData> data;  // data mode only
    uint64_t stamp = 0;  // an issue policy's (IssuePolicy::accepted)
  };
  // A ready stage: the oldest command's first, then the plan's order.
  struct Ready {
    uint64_t cmd_id;
    uint64_t seq;   // Stage::seq
    uint32_t slot;  // in f->plan
    InFlight* f;
  };
  struct Older {
    bool operator()(const Ready& a, const Ready& b) const {
      return a.cmd_id != b.cmd_id ? a.cmd_id < b.cmd_id : a.seq < b.seq;
    }
  };

  void b_transport(int from, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_fw(int from, tlm::tlm_generic_payload& payload, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  // A descriptor write that passed its checks: the extension's command (fast
  // path) or the one decoded into `decoded`.
  struct Incoming {
    const Command* ext_cmd = nullptr;
    uint64_t ext_id = 0;
    uint32_t completion_id = 0;
    Command decoded;
    const Command& cmd() const { return ext_cmd ? *ext_cmd : decoded; }
    // o's write, o given this one's storage back; the decoded command
    // moves only when it is the write's (no extension): PE_CPU's writes
    // move three words.
    void swap_with(Incoming& o) {
      std::swap(ext_cmd, o.ext_cmd);
      std::swap(ext_id, o.ext_id);
      std::swap(completion_id, o.completion_id);
      if (!ext_cmd || !o.ext_cmd) std::swap(decoded, o.decoded);
    }
  };
  // False when refused (response set, reported, hook told).
  bool descriptor_write(tlm::tlm_generic_payload& payload, Incoming& w);
  bool take_descriptor(tlm::tlm_generic_payload& payload, Incoming& w);
  bool descriptor_error(tlm::tlm_generic_payload& payload, regs::ErrorCode code, uint32_t completion_id,
                        const std::string& what,
                        tlm::tlm_response_status status = tlm::TLM_GENERIC_ERROR_RESPONSE);
  uint64_t command_id(const Incoming& w) const;
  void accept_pending();  // the step's accept phase
  void accept(uint64_t id, const Command& cmd);
  void release(InFlight& f);  // hazards cleared: the plan's ready stages queue
  void queue_ready(InFlight& f);  // every stage the plan has ready
  void complete_stage(InFlight& f, uint32_t slot);
  void complete_command(InFlight& f);
  void step();           // step_: one instant, in canonical order
  void end_of_elaboration() override;  // caches each engine socket's bound interface
  void request_step();   // a step one delta later, unless the step under way has yet to issue
  void issue(Engine e);  // the step's issue phase
  void issue_next(Engine e);
  bool pick_by_policy(Engine e, Ready* r);  // the oldest ready stage engine e's policy lets go
  void fail(uint64_t cmd_id, const char* cmd_type, const std::exception& e);
  void complete_issued(Engine e);  // the step's completion phase
  void finish_issued(Engine e);
  void log_stage(Engine e, const Stage& s, uint64_t start_ps);
  void update_signals();  // SC_METHOD on changed_
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& payload, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  void stage_answered(Engine e, const sc_core::sc_time& delay);

  const PeConfig& cfg_;
  const TensorTable& table_;
  OpLog& log_;
  // What every step and stage reads, together: a mesh
  // visits its PEs in turn at every instant, so each PE finds its lines
  // evicted; the fewer it touches, the fewer misses.
  // One method does an instant's work (step()); while it completes and
  // accepts, what it makes ready needs no further step.
  enum class StepPhase : uint8_t { kNone, kComplete, kIssue };
  bool faulted_ = false;  // stopped by a fault (the launch failed)
  StepPhase phase_ = StepPhase::kNone;
  // An engine with a policy may hold ready stages: bit e set, its stages
  // are offered again at the next issue phase (a stage of e queued or
  // completed, a wake), not at every instant.
  uint32_t recheck_ = 0;
  uint32_t policed_ = 0;        // bit e: engine e has an issue policy
  uint32_t ordered_types_ = 0;  // bit t: a policy orders Command alternative t
  bool signals_ = false;
  bool busy_[kNumEngines] = {};
  // When each busy engine's stage ends, once the engine has answered; bit
  // e of timed_: engine e has answered and its done_at_ holds.
  uint32_t timed_ = 0;
  // Descriptor writes (nb_transport_fw form) that found the queue full or
  // have yet to begin: one per `in` socket, and when each begins.
  struct Pending {
    tlm::tlm_generic_payload* payload = nullptr;  // null: none
    sc_core::sc_time at;
    Incoming in;  // its descriptor
  };
  std::vector<Pending> pending_;  // by `in` socket
  size_t pending_count_ = 0;
  // The pending write taken next: the earliest begun by now, the lowest
  // socket among those that began together; null when none has begun.
  Pending* next_pending();
  const Pending* next_pending() const { return const_cast<PeScheduler*>(this)->next_pending(); }
  // Each engine socket's bound interface, cached once bound: the issue path
  // skips sc_vector's and sc_port's indirections.
  tlm::tlm_fw_transport_if<>* engine_fw_[kNumEngines] = {};
  sc_core::sc_time done_at_[kNumEngines];
  int blocked_writers_ = 0;
  HazardScoreboard scoreboard_;
  // Commands accepted, not yet complete (at most queue_depth; each is an
  // InFlight out of the pool, which blockers and waiters reach directly),
  // and a pool of InFlight objects whose vectors keep their capacity: no
  // heap allocation per command once the pool is warm.
  size_t inflight_ = 0;
  std::vector<std::unique_ptr<InFlight>> pool_;
  std::vector<InFlight*> spare_;
  uint64_t completed_ = 0;  // descriptors completed (the completion register)
  HandleAccess access_;  // scratch of accept()
  ReadyQueue<Ready, Older> ready_[kNumEngines];
  // The stage each engine is running, and when it started; what a stage
  // reads first leads (fewer cache lines per stage).
  struct Issued {
    Ready r{};
    uint64_t start_ps = 0;
    StageExtension* ext = nullptr;  // owned by payload
    ModulePayload payload;
    StageWord word;                 // the payload's data
  };
  Issued issued_[kNumEngines];
  static_assert(kNumEngines <= 32 && std::variant_size_v<Command> <= 32);
  // An actor of the instant calendar (models/util/instant_calendar.h).
  InstantActor step_{InstantKind::kSchedulerStep, [this] { step(); }};
  sc_core::sc_event abandoned_;  // after a fault: the last abandoned stage's end
  Incoming nb_in_;        // scratch of nb_transport_fw (swapped into a Pending)
  uint64_t last_id_ = 0;  // the last accepted command id (unwrapping completion ids)
  IssuePolicy* policy_[kNumEngines] = {};
  const Stage* held_[kNumEngines] = {};
  std::vector<Ready> skipped_;  // scratch of pick_by_policy
  sc_core::sc_event slot_freed_;
  sc_core::sc_event drained_;
  sc_core::sc_event changed_;
  FaultHandler on_fault_;
  DescriptorErrorHandler on_descriptor_error_;
  uint32_t pes_ = 1;
  void signal_change() {
    if (signals_) notify_outside(changed_);
  }
  CounterHistory* occupancy_history_ = nullptr;
  void occupancy_changed();  // statistics, occupancy_history_, signals
};

}  // namespace kb
