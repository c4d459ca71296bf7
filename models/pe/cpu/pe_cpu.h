// PE_CPU: runs kernels in an SC_THREAD and writes their commands into
// PE_SCHEDULER's queue. Kernels reach it through TlTarget (tl_target.h).
//
// For every command it spends dispatch_cycles(cmd) = FIXED(type) +
// logical_bytes x R (docs/cost-model.md D1/D8; state: dispatching), then
// writes the descriptor with a TLM WRITE: its data is the binary descriptor
// (models/isa/descriptor.h, encoded at dispatch; a command that cannot be
// encoded is a kernel error there), and unless pe.attrs.cpu.
// descriptor_extension is false a CommandExtension carries the command, a
// fast path PE_SCHEDULER may take. The write
// waits while the queue is full (state: stalled). tl.cycles(n) spends exactly
// n cycles and writes nothing (D5). A kernel ends when the scheduler has
// drained; its latency runs from its start to its last completion.
//
// Temporal decoupling: the kernel thread runs ahead of simulated time,
// checking and costing commands and queueing up to kRunAhead of them. Each
// command's descriptor write is sent when its dispatch starts, annotated to
// begin when the dispatch ends (AT-style nb_transport_fw, BEGIN_REQ with
// the dispatch time as delay); PE_SCHEDULER takes it then, or once a slot
// frees, and answers with BEGIN_RESP on the backward path, where the next
// write starts. PE_CPU thus spends no process activation per command; its
// DISPATCH record is added ahead when the write is sent (OpLog::add_ahead:
// the log takes it when time reaches its end). The kernel thread synchronises only when it must
// see the PE's state: draining, host access, a full run-ahead queue, and a
// kernel error (the launch ends once the earlier commands are written). The
// op log and every time are those of dispatching one command at a time.
//
// A command that fails while it runs (a time past 2^64 ps, an engine's
// error; PE_SCHEDULER reports those through fault()) fails the launch like a
// kernel error: a CommandFault is raised in the kernel thread. No
// exception leaves a SystemC method.
//
// Kernel errors (a shape mismatch, the docs/cost-model.md D7 cap, an
// uninitialised read, a CommandFault, ...) end the launch, never the
// simulation:
// - The launch's LaunchResult::error holds the message, failed() turns true,
//   and the PE runs no later launch. The PE is done; other modules go on,
//   and sc_start() returns when no event is left.
// - The message is reported once, with SC_REPORT_ERROR under
//   kKernelErrorType, at the time the launch ends. Its actions are the
//   user's (sc_report_handler::set_actions(kKernelErrorType, ...)): SC_STOP
//   stops the simulation, SC_ABORT aborts it. SC_THROW (in SystemC's default
//   actions for an error, SC_LOG | SC_CACHE_REPORT | SC_THROW, which display
//   nothing) throws the sc_report; PE_CPU catches its own report, so with
//   the default actions the simulation keeps running.
// - A kernel error in the kernel thread: the launch ends as its end would,
//   once the commands before the error are written and have completed (its
//   latency, busy times and statistics cover them; nothing of the PE runs
//   after it).
// - A CommandFault stops the PE at once, as sc_stop did for the whole
//   simulation: PE_CPU writes nothing more (not even a command being
//   dispatched), PE_SCHEDULER neither issues nor completes a stage (stages
//   on an engine are abandoned), and the launch ends at the fault.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "models/config/pe_config.h"
#include "models/util/clock.h"
#include "models/isa/commands.h"
#include "models/isa/cost_model.h"
#include "models/pe/engines/data_port.h"
#include "models/isa/init_tracker.h"
#include "models/isa/tensor_table.h"
#include "models/tl/tl_target.h"
#include "models/trace/launch_result.h"
#include "models/trace/op_log.h"
#include "models/util/instant_calendar.h"
#include "models/util/module_payload.h"

namespace kb {

// The SystemC message type of a failed kernel launch (see above). Every
// report of this type is SC_ERROR; its message is the launch's error.
inline constexpr const char* kKernelErrorType = "kernbench/kernel_error";

struct CommandExtension;  // models/isa/queue.h

// Sees every tensor declaration and command PE_CPU handles, in order (the
// seam for recording a replayable stream).
struct CpuObserver {
  virtual ~CpuObserver() = default;
  virtual void on_launch(const std::string& kernel) = 0;
  // `name`: the tensor's display name (a view's is derived from its base).
  virtual void on_tensor(const TensorDesc& d, const std::string& name) = 0;
  virtual void on_command(const Command& cmd) = 0;
  // Host initialisation of a tensor with seeded uniform values.
  virtual void on_host_fill(Handle h, uint64_t seed, double lo, double hi) {
    (void)h, (void)seed, (void)lo, (void)hi;
  }
  // tl.wait() from a kernel (not the drain that ends every launch): it
  // changes timing, so a replayable stream must record it.
  virtual void on_wait() {}
};

enum class CpuState : uint8_t { kIdle, kDispatching, kStalled, kWaiting };

class PeCpu : public sc_core::sc_module, public TlTarget {
 public:
  tlm_utils::simple_initiator_socket<PeCpu> cmd;   // to PE_SCHEDULER
  tlm_utils::simple_initiator_socket<PeCpu> data;  // host access to TCM and HBM (debug transport)

  PeCpu(sc_core::sc_module_name name, const PeConfig& cfg, TensorTable& table, OpLog& log);

  // Queues a kernel: before sc_start or while the
  // simulation runs, from any process. Launches run back to back, in
  // order; one made while the PE is idle starts at the current time (a
  // delta later). After a launch fails, later ones do not run (no result;
  // one made after the failure is told to on_launch_failed).
  void launch(const std::string& name, Kernel kernel);
  const std::vector<LaunchResult>& results() const { return results_; }
  // A launch failed (its error is results().back().error): the PE is done.
  bool failed() const { return failed_; }
  // A launch is running, or queued and still to run.
  bool busy() const { return current_ != nullptr || (!failed_ && !pending_.empty()); }
  // Told when a launch fails (its kernel's name and error) or is refused
  // because an earlier one failed: PE_REGS records kKernelError.
  using LaunchFailedHandler = std::function<void(const std::string& kernel, const std::string& error)>;
  void on_launch_failed(LaunchFailedHandler h) { on_launch_failed_ = std::move(h); }
  void set_observer(CpuObserver* o) { observer_ = o; }
  CpuObserver* observer() const { return observer_; }

  // The one dispatch path, shared by tl (live) and replay: validates and
  // costs the command (docs/cost-model.md), then queues it for the dispatch
  // pipeline, which spends the cost in simulated time and writes the
  // descriptor.
  void dispatch(Command&& c) override;
  void dispatch(const Command& c) { dispatch(Command(c)); }
  // Built in place (tl_target.h): the free ring slot, else (a full ring)
  // staged_, moved in once there is room.
  Command& next_command() override {
    return queued_ < kRunAhead ? ahead_[slot(queued_)].cmd : staged_;
  }
  void dispatch_next() override { dispatch_ref(next_command()); }
  // Waits until every queued command is written and every accepted one has
  // completed.
  void drain() override;
  void kernel_wait() override {
    if (observer_) observer_->on_wait();
    drain();
  }
  Handle declare(const std::string& name, MemSpace space, int64_t rows, int64_t cols,
                 Dtype dtype) override;
  Handle declare_on(uint32_t owner, const std::string& name, int64_t rows, int64_t cols,
                    Dtype dtype) override;
  Handle view(Handle base, int64_t row0, int64_t nrows, int64_t col0, int64_t ncols) override;
  // A tensor at a given address (replay of a recorded stream).
  Handle declare_at(const std::string& name, MemSpace space, int64_t rows, int64_t cols,
                    Dtype dtype, uint64_t address, int64_t row_stride) override;
  DispatchTotals dispatch_totals() const override;
  const PePlace& place() const override { return place_; }
  void set_place(const PePlace& p) {  // the PE, at construction
    place_ = p;
    dispatch_end_.set_pe(p.global);
  }
  // What the next dispatch() will be numbered: its command ID (when it is
  // not tl.cycles(n)) and its ticket (see CommandFault).
  uint64_t next_command_id() const override { return next_id_; }
  uint64_t next_ticket() const override { return next_ticket_; }
  // A process of the PE failed on command `id` (type `cmd_type`): the launch
  // fails with `what`, raised as a CommandFault in the kernel thread, and
  // the PE stops. Only the first fault is told, and none after the launch
  // has failed. A fault while no launch runs (a command a VP wrote through
  // PE_REGS) stops the PE too: the next launch fails with it.
  void fault(uint64_t id, const char* cmd_type, const std::string& what);

  // Host access to memory, in zero simulated time after the queue drains
  // (so no command still in flight touches the tensor), by debug transport
  // on `data` (TCM inside the PE, HBM through `mem`). Initialising works in
  // both modes (it marks the tensor as holding values; data mode also
  // writes them); reading needs data mode.
  // Data mode moves every element in zero simulated time, so a host access
  // is bounded: at most kMaxHostElements (2^26: 256 MiB of fp32) elements,
  // else a KernelError before anything is written or read.
  static constexpr uint64_t kMaxHostElements = uint64_t(1) << 26;
  void host_fill_random(Handle h, uint64_t seed, double lo, double hi) override;
  void host_write(Handle h, const std::vector<float>& values) override;
  std::vector<float> host_read(Handle h) override;
  void add_metric(const std::string& name, double value) override;
  const TensorTable& table() const { return table_; }
  void enable_signals(bool on) { signals_ = on; }

  // Observers for traces, written by one method from the state below.
  sc_core::sc_signal<uint32_t> state_signal;        // CpuState
  sc_core::sc_signal<uint64_t> descriptors_signal;  // descriptors written

 private:
  void run();
  void finish_launch();
  void check_host_access(const TensorDesc& t, const char* what) const;
  void fail_launch(const std::string& error);
  void fault_item(uint64_t id, uint64_t ticket, const Command& c, const std::string& what);
  void raise(const CommandFault& f);
  // Emit time: a dispatch that would end past 2^64 ps even if it started
  // now fails before anything is queued. Two compares on the
  // common path; the exact check only near the limit.
  void check_time(const Command& c, uint64_t charged_cycles, uint64_t id) const {
    if (charged_cycles > safe_cycles_ || now_ps() >= safe_start_ps_) check_time_exact(c, charged_cycles, id);
  }
  void check_time_exact(const Command& c, uint64_t charged_cycles, uint64_t id) const;
  // The dispatch pipeline (methods; see the header comment).
  // dispatch() of `c`, which enqueue() moves into the ring unless it is the
  // free slot already.
  void dispatch_ref(Command& c);
  void enqueue(Command& c, uint64_t id, uint64_t ticket, const DispatchCost& cost);
  static size_t slot(size_t i, size_t head) { return (head + i) & (kRunAhead - 1); }
  size_t slot(size_t i) const { return slot(i, head_); }
  void start_next();   // the head command starts dispatching, or the pipeline idles
  void dispatched();   // dispatch_end_: tl.cycles(n) has ended
  void write_head(const sc_core::sc_time& dispatch);  // annotated to begin `dispatch` from now
  void accepted();     // the scheduler took the descriptor, or tl.cycles(n) ended
  void end_dispatch();  // the head's dispatch ended at written_ps_
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& payload, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  void sync();         // kernel thread: until every queued command is written
  void set_state(CpuState s) {
    state_ = s;
    if (signals_) notify_outside(changed_);
  }
  void update_signals();  // SC_METHOD on changed_
  // `ahead`: it ends later than now (OpLog::add_ahead).
  void add_cpu_record(RecordKind kind, uint64_t id, const Command* c, uint64_t start_ps, uint64_t end_ps,
                      const DispatchCost* cost, bool ahead = false);

  const PeConfig& cfg_;
  TensorTable& table_;
  PePlace place_;
  OpLog& log_;
  DataPort host_;  // on `data`
  InitTracker init_;
  Clock clock_;
  CpuObserver* observer_ = nullptr;
  // Launches not yet started: run() takes the front, launch() appends
  // (a deque: run() holds no reference into it across a launch).
  std::deque<std::pair<std::string, Kernel>> pending_;
  sc_core::sc_event launched_;  // launch() while run() waits for work
  LaunchFailedHandler on_launch_failed_;
  std::string stop_reason_;     // a fault while no launch ran: the PE stopped
  std::vector<LaunchResult> results_;
  LaunchResult* current_ = nullptr;
  uint64_t next_id_ = 1;
  uint64_t next_ticket_ = 1;
  bool faulted_ = false;  // a CommandFault was raised: the PE stopped
  bool failed_ = false;   // a launch failed: the kernel thread has ended
  sc_core::sc_process_handle kernel_thread_;
  // Below both, a dispatch cannot end past the clock's max_ps(): no exact
  // check needed. A quarter of it each (2^62 ps at a 1 ps resolution).
  uint64_t safe_cycles_ = 0;
  uint64_t safe_start_ps_ = 0;
  uint64_t descriptors_written_ = 0;
  CpuState state_ = CpuState::kIdle;
  sc_core::sc_event changed_;
  bool signals_ = false;
  // The descriptor payloads are PE_CPU's own, two used in turn (write_head),
  // with the memory manager the base protocol wants for nb_transport.
  struct Write {
    ModulePayload payload;
    CommandExtension* ext = nullptr;  // payload's, owned by it; null without the extension
  };
  Write writes_[2];
  int write_ = 0;  // the one the head's write uses
  const tlm::tlm_generic_payload* in_bw_ = nullptr;  // completing in nb_transport_bw
  // dispatch() encodes here; enqueue() swaps it with the slot's buffer, so
  // warm buffers keep their capacity (no allocation per command).
  std::vector<uint8_t> encoded_;
  // Commands checked and costed by the kernel thread, not yet written (a
  // ring; commands are moved in, descriptors swapped in).
  struct Queued {
    Command cmd;
    uint64_t id = 0;  // 0: tl.cycles(n), nothing to write
    uint64_t ticket = 0;
    DispatchCost cost;
    std::vector<uint8_t> bytes;  // the descriptor (id != 0)
  };
  static constexpr size_t kRunAhead = 64;
  static_assert((kRunAhead & (kRunAhead - 1)) == 0, "slot() wraps by mask");
  std::vector<Queued> ahead_{kRunAhead};
  Command staged_;  // next_command() while the ring is full
  size_t head_ = 0, queued_ = 0;
  bool pipeline_busy_ = false;     // the head command is dispatching or stalled
  bool kernel_blocked_ = false;    // the kernel thread waits for room in ahead_
  uint64_t step_start_ps_ = 0;     // the head command's dispatch began
  uint64_t written_ps_ = 0;        // ... and ends: its write begins
  bool posted_ = false;            // the head's write is sent, not yet taken
  sc_core::sc_event room_, idle_;
  // The head command's dispatch ends: an actor of the instant calendar
  // (models/util/instant_calendar.h), not a process of its own.
  InstantActor dispatch_end_{InstantKind::kCpuDispatchEnd, [this] { dispatched(); }};
};

}  // namespace kb
