#include "models/pe/cpu/pe_cpu.h"

#include <cstring>

#include "models/isa/command_check.h"
#include "models/isa/descriptor.h"
#include "models/isa/queue.h"
#include "models/tl/tl.h"
#include "models/trace/stats.h"
#include "models/util/asan_stack.h"

namespace kb {

PeCpu::PeCpu(sc_core::sc_module_name name, const PeConfig& cfg, TensorTable& table, OpLog& log)
    : sc_module(name),
      cmd("cmd"),
      data("data"),
      state_signal("state"),
      descriptors_signal("descriptors"),
      cfg_(cfg),
      table_(table),
      log_(log),
      host_(data, DataPort::Debug{}),
      clock_(cfg.clock_freq_ghz) {
  SC_HAS_PROCESS(PeCpu);
  SC_THREAD(run);
  SC_METHOD(update_signals);
  sensitive << changed_;
  dont_initialize();
  cmd.register_nb_transport_bw(this, &PeCpu::nb_transport_bw);
  safe_start_ps_ = clock_.max_ps() / 4;
  safe_cycles_ = clock_.cycle_at(safe_start_ps_);
  if (cfg.cpu.descriptor_extension) {
    for (Write& w : writes_) {
      w.ext = new CommandExtension;
      w.payload.set_extension(w.ext);  // owned by the payload
    }
  }
}

void PeCpu::launch(const std::string& name, Kernel kernel) {
  if (failed_) {  // the kernel thread has ended: nothing runs it
    if (on_launch_failed_) on_launch_failed_(name, "launch of kernel '" + name + "' refused: an earlier launch failed");
    return;
  }
  // The view ring is built now, before the simulation for a launch made
  // then, so its page faults are not a cost of the simulated run.
  table_.reserve_views();
  pending_.emplace_back(name, std::move(kernel));
  // At run time, run() may wait for work; before sc_start it finds the
  // queue when it starts. A delta notification is legal from any process.
  if (sc_core::sc_is_running()) notify_outside(launched_, sc_core::SC_ZERO_TIME);
}

Handle PeCpu::declare(const std::string& name, MemSpace space, int64_t rows, int64_t cols,
                      Dtype dtype) {
  const Handle h = table_.declare(name, space, rows, cols, dtype);
  if (observer_) observer_->on_tensor(table_.at(h), table_.name_of(table_.at(h)));
  return h;
}

Handle PeCpu::declare_on(uint32_t owner, const std::string& name, int64_t rows, int64_t cols,
                         Dtype dtype) {
  // Any PE's slice of this top (models/mem/address_map.h).
  if (owner >= place_.pes()) {
    throw KernelError("tl.hbm_on('" + name + "'): PE " + std::to_string(owner) + " does not exist: the top has " +
                      std::to_string(place_.pes()) + " PEs");
  }
  const Handle h = table_.declare_in_slice(owner, name, rows, cols, dtype);
  if (observer_) observer_->on_tensor(table_.at(h), table_.name_of(table_.at(h)));
  return h;
}

Handle PeCpu::view(Handle base, int64_t row0, int64_t nrows, int64_t col0, int64_t ncols) {
  const Handle h = table_.view(base, row0, nrows, col0, ncols);
  if (observer_) observer_->on_tensor(table_.at(h), table_.name_of(table_.at(h)));
  return h;
}

Handle PeCpu::declare_at(const std::string& name, MemSpace space, int64_t rows, int64_t cols,
                         Dtype dtype, uint64_t address, int64_t row_stride) {
  if (rows <= 0 || cols <= 0 || row_stride < cols) {
    throw KernelError("tensor '" + name + "': shape [" + std::to_string(rows) + ", " +
                      std::to_string(cols) + "] with row stride " + std::to_string(row_stride) +
                      " is not valid");
  }
  const Handle h = table_.declare_at(name, space, rows, cols, dtype, address, row_stride);
  if (observer_) observer_->on_tensor(table_.at(h), table_.name_of(table_.at(h)));
  return h;
}

void PeCpu::check_host_access(const TensorDesc& t, const char* what) const {
  if (cfg_.data_mode && t.elements() > kMaxHostElements) {
    throw KernelError(std::string("host ") + what + " of '" + table_.name_of(t) + "' " + t.shape_string() + ": " +
                      std::to_string(t.elements()) + " elements, more than data mode's " +
                      std::to_string(kMaxHostElements) + " per host access");
  }
}

void PeCpu::host_fill_random(Handle h, uint64_t seed, double lo, double hi) {
  drain();
  const TensorDesc& t = table_.at(h);
  check_host_access(t, "fill");
  if (observer_) observer_->on_host_fill(h, seed, lo, hi);
  if (cfg_.data_mode) kb::host_fill_random(host_, t, seed, lo, hi);
  init_.mark(t);
}

void PeCpu::host_write(Handle h, const std::vector<float>& values) {
  drain();
  const TensorDesc& t = table_.at(h);
  if (cfg_.data_mode) kb::host_write(host_, t, values);
  init_.mark(t);
}

std::vector<float> PeCpu::host_read(Handle h) {
  drain();
  const TensorDesc& t = table_.at(h);
  if (!cfg_.data_mode) {
    throw KernelError("host read of '" + table_.name_of(t) + "' needs data mode (--data)");
  }
  if (!init_.initialised(t)) {
    throw KernelError("host read of uninitialised '" + table_.name_of(t) + "' " + t.shape_string());
  }
  check_host_access(t, "read");
  return kb::host_read(host_, t);
}

DispatchTotals PeCpu::dispatch_totals() const {
  DispatchTotals t;
  if (!current_) return t;
  t.commands = current_->commands;
  t.logical_bytes = current_->logical_bytes;
  t.cycles_exact = current_->dispatch_cycles_exact;
  t.cycles_charged = current_->dispatch_cycles_charged;
  // Committed ahead of simulated time (the kernel runs ahead): the charged
  // cycles as time, converted once (models/util/clock.h).
  t.dispatch_ps = clock_.edge_ps(current_->dispatch_cycles_charged);  // n cycles from time 0
  return t;
}

void PeCpu::add_metric(const std::string& name, double value) {
  if (current_) current_->metrics.emplace_back(name, value);
}

void PeCpu::add_cpu_record(RecordKind kind, uint64_t id, const Command* c, uint64_t start_ps, uint64_t end_ps,
                           const DispatchCost* cost, bool ahead) {
  if (!log_.wants_records()) {
    log_.account(Component::kPeCpu, kind, start_ps, end_ps);
    return;
  }
  OpRecord r;
  r.component = Component::kPeCpu;
  r.kind = kind;
  r.cmd_id = id;
  r.cmd_type = c ? command_type_name(*c) : "";
  if (const auto* m = c ? std::get_if<MathCmd>(c) : nullptr) r.op = to_string(m->op);
  r.start_ps = start_ps;
  r.end_ps = end_ps;
  if (cost) {
    r.logical_bytes = cost->logical_bytes;
    r.dispatch_cycles_exact = cost->exact_cycles;
    r.dispatch_cycles_charged = cost->charged_cycles;
  }
  if (ahead) log_.add_ahead(r);
  else log_.add(r);
}

namespace {
// Which command a run-time message is about, as check errors name it.
std::string describe_item(const std::string& kernel, uint64_t id, const Command& c) {
  if (const auto* o = std::get_if<CpuOverheadCmd>(&c)) {
    return "kernel '" + kernel + "', tl.cycles(" + std::to_string(o->cycles) + ")";
  }
  return "kernel '" + kernel + "', command #" + std::to_string(id) + " " + command_type_name(c);
}
}  // namespace

void PeCpu::check_time_exact(const Command& c, uint64_t charged_cycles, uint64_t id) const {
  const uint64_t now = now_ps();
  try {
    (void)clock_.delay_ps(now, charged_cycles);
  } catch (const TimeOverflow& e) {
    throw KernelError(describe_item(current_->kernel, id, c) + ": dispatch: " + e.what());
  }
}

void PeCpu::fault_item(uint64_t id, uint64_t ticket, const Command& c, const std::string& what) {
  if (faulted_) return;
  raise(CommandFault(describe_item(current_ ? current_->kernel : "", id, c) + ": " + what, id, ticket));
}

// The kernel thread ends the launch (run()). From another process the
// fault is thrown where the thread waits (SystemC throw_it: the thread runs
// at once, then this process goes on).
void PeCpu::raise(const CommandFault& f) {
  faulted_ = true;
  if (failed_) return;  // the launch already failed and ended: that error stands
  if (sc_core::sc_get_current_process_handle() == kernel_thread_) throw f;
  kernel_thread_.throw_it(f);
}

void PeCpu::fault(uint64_t id, const char* cmd_type, const std::string& what) {
  if (faulted_) return;
  if (!current_) {  // no launch runs (a VP's command): the next one fails with it
    faulted_ = true;
    stop_reason_ = "the PE stopped: command #" + std::to_string(id) + " " + cmd_type + ": " + what;
    return;
  }
  // A write posted and not taken: its dispatch ended if its time has come
  // (PE_CPU wrote then, and then stalled); it is written no more.
  if (posted_) {
    posted_ = false;
    if (written_ps_ <= now_ps()) {
      end_dispatch();
    } else {
      log_.cancel_ahead();  // the dispatch did not end
    }
  }
  // Tickets of commands still in the pipeline are known; a command already
  // written is named by its ID (replay maps either to its line).
  uint64_t ticket = 0;
  for (size_t i = 0; i < queued_; ++i) {
    const Queued& q = ahead_[slot(i)];
    if (q.id == id) ticket = q.ticket;
  }
  const std::string kernel = current_ ? current_->kernel : "";
  raise(CommandFault("kernel '" + kernel + "', command #" + std::to_string(id) + " " + cmd_type +
                         ": " + what,
                     id, ticket));
}

void PeCpu::dispatch(Command&& c) { dispatch_ref(c); }

void PeCpu::dispatch_ref(Command& c) {
  LaunchResult& res = *current_;
  const DispatchCost cost = dispatch_cost(c, cfg_.cost_model);
  if (std::holds_alternative<CpuOverheadCmd>(c)) {  // docs/cost-model.md D5: bypass
    check_time(c, cost.charged_cycles, 0);
    if (observer_) observer_->on_command(c);
    enqueue(c, 0, next_ticket_++, cost);
    return;
  }
  // Rejections happen before any time is charged or anything is queued.
  if (const auto* comp = std::get_if<CompositeCmd>(&c)) {
    check_composite_cap(*comp, cfg_.cost_model, res.kernel);  // docs/cost-model.md D7
  }
  const uint64_t id = next_id_;
  try {
    CommandTensors tensors;  // found once, for check_initialised too
    check_command(c, table_, &tensors);
    check_peer(c, place_.pes());
    if (cfg_.data_mode) check_data_dtypes(c, table_);
    try {  // before check_initialised, which marks what the command writes
      desc::encode_dispatched(c, uint32_t(id & desc::kCompletionIdMask), cost.logical_bytes, encoded_);
    } catch (const desc::EncodeError& e) {
      throw KernelError(std::string(command_type_name(c)) + ": no binary descriptor: " + e.what());
    }
    check_initialised(c, table_, init_, &tensors);
  } catch (const KernelError& e) {
    throw KernelError("kernel '" + res.kernel + "', command #" + std::to_string(id) + " " +
                      e.what());
  }
  check_time(c, cost.charged_cycles, id);
  ++next_id_;
  if (observer_) observer_->on_command(c);
  // The totals are known now; the pipeline spends the time (docs/cost-model.md D1).
  res.dispatch_cycles_exact += cost.exact_cycles;
  res.dispatch_cycles_charged += cost.charged_cycles;
  res.logical_bytes += cost.logical_bytes;
  ++res.commands;
  ++res.commands_by_type[c.index()];
  enqueue(c, id, next_ticket_++, cost);
}

void PeCpu::enqueue(Command& c, uint64_t id, uint64_t ticket, const DispatchCost& cost) {
  // Built in the free slot (next_command()): already in place, no move.
  const bool in_place = queued_ < kRunAhead && &c == &ahead_[slot(queued_)].cmd;
  while (queued_ == kRunAhead) {
    kernel_blocked_ = true;
    sc_core::wait(room_);
  }
  Queued& q = ahead_[slot(queued_)];
  if (!in_place) q.cmd = std::move(c);
  q.id = id;
  q.ticket = ticket;
  q.cost = cost;
  if (id != 0) q.bytes.swap(encoded_);  // dispatch() encoded it
  ++queued_;
  if (!pipeline_busy_) start_next();
}

void PeCpu::start_next() {
  if (queued_ == 0 || faulted_) {  // stopped by a CommandFault: nothing more starts
    pipeline_busy_ = false;
    set_state(CpuState::kIdle);
    notify_outside(idle_);
    return;
  }
  // Converted now, from where the dispatch starts (models/util/clock.h); first,
  // so that a TimeOverflow leaves the pipeline idle and the launch can end.
  // A time past 2^64 ps fails the launch; emit time caught what
  // it could (check_time), this is a start later than the kernel's time then.
  sc_core::sc_time charged;
  try {
    charged = clock_.cycles(ahead_[head_].cost.charged_cycles);
  } catch (const TimeOverflow& e) {
    asan_forget_unwound_frames();  // models/util/asan_stack.h
    const Queued& q = ahead_[head_];
    fault_item(q.id, q.ticket, q.cmd, std::string("dispatch: ") + e.what());
    return;
  }
  // docs/cost-model.md D1: PE_CPU is busy for the dispatch cycles, then writes.
  pipeline_busy_ = true;
  step_start_ps_ = now_ps();
  StreamingStats* st = log_.stats();
  if (st) st->cpu_busy(step_start_ps_, true);
  set_state(CpuState::kDispatching);
  const Queued& q = ahead_[head_];
  if (q.id == 0) {  // tl.cycles(n): PE_CPU's own time (D5)
    dispatch_end_.notify(charged);
    return;
  }
  // The write is sent now, annotated to begin when the dispatch ends:
  // PE_SCHEDULER takes it then, or once a slot frees, as if
  // written then, so PE_CPU needs no activation of its own at the end.
  // What it did there is known now (the end, for the statistics) or done
  // at the acceptance (the DISPATCH record, announced to the op log).
  written_ps_ = step_start_ps_ + ps_of(charged);
  posted_ = true;
  if (st) st->cpu_idle_at(written_ps_);
  // The DISPATCH record, added when time reaches its end (op_log.h).
  if (log_.wants_records()) add_cpu_record(RecordKind::kDispatch, q.id, &q.cmd, step_start_ps_, written_ps_, &q.cost, true);
  if (signals_) notify_outside(changed_, charged);  // the state turns stalled then, if not taken
  try {
    write_head(charged);
  } catch (const std::exception& e) {
    asan_forget_unwound_frames();  // models/util/asan_stack.h
    if (posted_) {
      posted_ = false;
      log_.cancel_ahead();
    }
    fault_item(q.id, q.ticket, q.cmd, e.what());
  }
}

void PeCpu::dispatched() {
  if (faulted_) return;  // stopped by a CommandFault: nothing more runs
  // tl.cycles(n) has ended (docs/cost-model.md D5): nothing is written.
  Queued& q = ahead_[head_];
  if (StreamingStats* st = log_.stats()) st->cpu_busy(now_ps(), false);
  current_->cpu_cycles_ps += now_ps() - step_start_ps_;
  add_cpu_record(RecordKind::kCpuCycles, 0, &q.cmd, step_start_ps_, now_ps(), &q.cost);
  accepted();
}

void PeCpu::write_head(const sc_core::sc_time& dispatch) {
  Queued& q = ahead_[head_];
  // Two payloads: the next write is sent from inside the backward call
  // that completes this one, so it takes the other (base protocol: a
  // transaction's payload is not reused before it completes). A write
  // taken at once (TLM_COMPLETED) has completed when its call returns.
  if (in_bw_ && &writes_[write_].payload == in_bw_) write_ ^= 1;
  Write& w = writes_[write_];
  if (w.ext) {
    w.ext->cmd = &q.cmd;
    w.ext->id = q.id;
  }
  tlm::tlm_generic_payload& p = w.payload;
  p.set_command(tlm::TLM_WRITE_COMMAND);
  p.set_address(kQueueAddress);
  p.set_data_ptr(q.bytes.data());  // logical_bytes long (desc::encode_into)
  p.set_data_length(unsigned(q.bytes.size()));
  p.set_streaming_width(unsigned(q.bytes.size()));
  p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_core::sc_time delay = dispatch;
  w.payload.acquire();  // released when the write completes, in accepted()
  if (cmd->nb_transport_fw(p, phase, delay) == tlm::TLM_COMPLETED) accepted();
  // Otherwise TLM_ACCEPTED: the acceptance arrives on nb_transport_bw.
}

tlm::tlm_sync_enum PeCpu::nb_transport_bw(tlm::tlm_generic_payload& payload, tlm::tlm_phase& phase,
                                          sc_core::sc_time& delay) {
  (void)delay;
  if (&payload != &writes_[write_].payload || phase != tlm::BEGIN_RESP || !posted_) {
    SC_REPORT_ERROR(name(), "nb_transport_bw: unexpected phase or transaction");
    return tlm::TLM_COMPLETED;
  }
  in_bw_ = &payload;  // its transaction completes when this call returns
  accepted();
  in_bw_ = nullptr;
  return tlm::TLM_COMPLETED;
}

void PeCpu::accepted() {
  Queued& q = ahead_[head_];
  if (q.id != 0) {
    posted_ = false;
    Write& w = writes_[write_];
    w.payload.release();
    if (w.ext) w.ext->cmd = nullptr;
    if (w.payload.is_response_error()) {
      // A modelling error (PE_CPU's checks are the scheduler's): refused
      // when sent, so the dispatch has no end to record.
      log_.cancel_ahead();
      SC_REPORT_ERROR(name(), ("descriptor write failed: " + w.payload.get_response_string()).c_str());
    } else {
      end_dispatch();
      const uint64_t now = now_ps();
      if (now > written_ps_) {
        add_cpu_record(RecordKind::kStall, q.id, &q.cmd, written_ps_, now, nullptr);
        current_->stall_ps += now - written_ps_;
      }
    }
    ++descriptors_written_;
  }
  head_ = slot(1);
  --queued_;
  if (kernel_blocked_ && queued_ <= kRunAhead / 2) {
    kernel_blocked_ = false;
    notify_outside(room_);
  }
  start_next();
}

// The head command's dispatch ended at written_ps_ (now or earlier, its
// write stalled since): what PE_CPU did there when it wrote at that time.
void PeCpu::end_dispatch() {
  current_->dispatch_ps += written_ps_ - step_start_ps_;
  // Its record is the op log's already (added ahead) when records are kept.
  if (!log_.wants_records()) log_.account(Component::kPeCpu, RecordKind::kDispatch, step_start_ps_, written_ps_);
}

void PeCpu::sync() {
  while (pipeline_busy_) sc_core::wait(idle_);
}

void PeCpu::drain() {
  sync();
  set_state(CpuState::kWaiting);
  // The completion register: returns once the queue is empty, with the
  // number of descriptors completed.
  uint64_t completed = 0;
  tlm::tlm_generic_payload p;
  p.set_command(tlm::TLM_READ_COMMAND);
  p.set_address(kDrainAddress);
  p.set_data_ptr(reinterpret_cast<unsigned char*>(&completed));
  p.set_data_length(sizeof completed);
  p.set_streaming_width(sizeof completed);
  p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  cmd->b_transport(p, delay);
  if (!p.is_response_ok() || completed != descriptors_written_) {
    SC_REPORT_ERROR(name(), "the completion register disagrees with the descriptors written");
  }
  set_state(CpuState::kIdle);
}

void PeCpu::update_signals() {
  // A posted write whose dispatch has ended waits for a slot (docs/cost-model.md D1).
  const bool stalled = posted_ && now_ps() >= written_ps_;
  state_signal.write(uint32_t(stalled ? CpuState::kStalled : state_));
  descriptors_signal.write(descriptors_written_);
}

void PeCpu::finish_launch() {
  current_->end_ps = now_ps();
  for (int c = 0; c < kNumComponents; ++c) current_->busy_ps[c] = log_.launch_busy_ps(Component(c));
}

void PeCpu::fail_launch(const std::string& error) {
  current_->error = error;
  failed_ = true;
  finish_launch();
  // Reported once the launch has ended, with the actions the user set for
  // the type. SC_THROW throws this report back here: the launch
  // has failed, the simulation goes on.
  try {
    SC_REPORT_ERROR(kKernelErrorType, error.c_str());
  } catch (const sc_core::sc_report& r) {
    if (std::strcmp(r.get_msg_type(), kKernelErrorType) != 0) throw;
  }
  if (on_launch_failed_) on_launch_failed_(current_->kernel, error);
}

void PeCpu::run() {
  kernel_thread_ = sc_core::sc_get_current_process_handle();
  for (;;) {
    // Idle: wait for a launch. A thread waiting on an
    // event nobody notifies keeps no event pending, so sc_start() returns
    // by itself once the work is done.
    while (pending_.empty()) sc_core::wait(launched_);
    const std::string name = std::move(pending_.front().first);
    const Kernel kernel = std::move(pending_.front().second);
    pending_.pop_front();
    results_.emplace_back();
    current_ = &results_.back();
    current_->kernel = name;
    current_->start_ps = now_ps();
    if (observer_) observer_->on_launch(name);
    log_.begin_launch();
    if (StreamingStats* st = log_.stats()) st->begin_launch(name, current_->start_ps);
    // TCM is the kernel's scratchpad: a launch's TCM tensors are released
    // when it ends (HBM tensors persist).
    const uint64_t tcm_mark = table_.tcm_used();
    std::string error = stop_reason_;  // stopped while idle: fails at once
    if (error.empty()) {
      try {
        Tl tl(*this, table_, cfg_, name);
        kernel(tl);
        drain();
      } catch (const std::exception& e) {
        // The kernel's frames below this one were unwound on PE_CPU's
        // coroutine stack, whose poisoning ASan keeps (a data-mode storage
        // limit thrown deep in a host write): drain() below reuses them.
        asan_forget_unwound_frames();  // models/util/asan_stack.h
        error = e.what();
      }
    }
    if (!error.empty()) {
      // A kernel's exception ends the launch (and the PE's launches) as its
      // end would: once the commands before it are written, as if
      // dispatched in step, and have completed (waited for outside the
      // handler: SystemC unwinds threads by exception). A fault stops the
      // PE: the launch ends at once.
      try {
        if (!faulted_) drain();
      } catch (const CommandFault&) {
        // a command before the error failed meanwhile: the error stands
      }
      fail_launch(error);
      current_ = nullptr;
      pending_.clear();  // never run (failed() is the PE's state from here)
      return;
    }
    finish_launch();
    table_.release_tcm(tcm_mark);
    current_ = nullptr;
  }
}

}  // namespace kb
