#include "models/pe/scheduler/pe_scheduler.h"

#include <cstring>

#include "models/trace/counter_probe.h"
#include "models/isa/command_check.h"
#include "models/isa/cost_model.h"
#include "models/isa/descriptor.h"
#include "models/util/clock.h"
#include "models/trace/stats.h"
#include "models/util/asan_stack.h"

namespace kb {

PeScheduler::PeScheduler(sc_core::sc_module_name name, const PeConfig& cfg,
                         const TensorTable& table, OpLog& log)
    : sc_module(name),
      in("in"),
      engine("engine"),
      occupancy_signal("occupancy"),
      cfg_(cfg),
      table_(table),
      log_(log) {
  in.register_b_transport(this, &PeScheduler::b_transport);
  in.register_nb_transport_fw(this, &PeScheduler::nb_transport_fw);
  engine.init(kNumEngines, [](const char*, size_t e) {
    return new tlm_utils::simple_initiator_socket<PeScheduler>(kEngines[e].port);
  });
  for (auto& socket : engine) socket.register_nb_transport_bw(this, &PeScheduler::nb_transport_bw);
  SC_HAS_PROCESS(PeScheduler);
  SC_METHOD(update_signals);
  sensitive << changed_;
  dont_initialize();
  for (int e = 0; e < kNumEngines; ++e) {
    Issued& is = issued_[e];
    is.ext = new StageExtension;  // owned by the payload from here on
    is.payload.set_extension(is.ext);
    is.payload.set_command(tlm::TLM_WRITE_COMMAND);
    is.payload.set_address(0);  // the engine's stage register
    is.payload.set_data_ptr(reinterpret_cast<unsigned char*>(&is.word));
    is.payload.set_data_length(sizeof(StageWord));
    is.payload.set_streaming_width(sizeof(StageWord));
    is.payload.set_byte_enable_ptr(nullptr);
    is.payload.set_dmi_allowed(false);
  }
}

void PeScheduler::end_of_elaboration() {
  // Bindings are complete before end_of_elaboration (IEEE 1666 4.4.3).
  for (int e = 0; e < kNumEngines; ++e) engine_fw_[e] = engine[size_t(e)].operator->();
}

namespace {
// The completion id in a write's framing (bytes 1-3), 0 when it has none.
uint32_t framed_id(const unsigned char* data, unsigned len) {
  return len >= 4 ? uint32_t(data[1]) | uint32_t(data[2]) << 8 | uint32_t(data[3]) << 16 : 0;
}

std::string descriptor_name(uint32_t completion_id, const Command& c) {
  return "descriptor #" + std::to_string(completion_id) + " (" + command_type_name(c) + ")";
}
}  // namespace

bool PeScheduler::descriptor_error(tlm::tlm_generic_payload& payload, regs::ErrorCode code,
                                   uint32_t completion_id, const std::string& what,
                                   tlm::tlm_response_status status) {
  payload.set_response_status(status);
  const std::string msg = std::string(name()) + ": " + regs::to_string(code) + ": " + what;
  if (on_descriptor_error_) on_descriptor_error_(code, completion_id, msg);
  // SC_THROW (SystemC's default for errors) throws this report back here:
  // the write is refused, the simulation goes on.
  try {
    SC_REPORT_ERROR(kDescriptorErrorType, msg.c_str());
  } catch (const sc_core::sc_report& r) {
    if (std::strcmp(r.get_msg_type(), kDescriptorErrorType) != 0) throw;
  }
  return false;
}

bool PeScheduler::descriptor_write(tlm::tlm_generic_payload& payload, Incoming& w) {
  if (payload.get_address() != kQueueAddress) {
    payload.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return false;
  }
  if (!payload.is_write()) {
    payload.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    return false;
  }
  try {
    return take_descriptor(payload, w);
  } catch (const std::exception& e) {  // a check this path did not foresee: refused all the same
    asan_forget_unwound_frames();       // models/util/asan_stack.h
    return descriptor_error(payload, regs::ErrorCode::kMalformed, 0, e.what());
  }
}

bool PeScheduler::take_descriptor(tlm::tlm_generic_payload& payload, Incoming& w) {
  using regs::ErrorCode;
  const unsigned len = payload.get_data_length();
  const unsigned char* data = payload.get_data_ptr();
  if (payload.get_byte_enable_ptr()) {
    return descriptor_error(payload, ErrorCode::kMalformed, 0, "a descriptor write has no byte enables",
                            tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
  }
  if (payload.get_streaming_width() != len) {
    return descriptor_error(payload, ErrorCode::kMalformed, 0,
                            "streaming width " + std::to_string(payload.get_streaming_width()) +
                                " of a descriptor write of " + std::to_string(len) + " bytes (must equal it)",
                            tlm::TLM_BURST_ERROR_RESPONSE);
  }
  if (!data) return descriptor_error(payload, ErrorCode::kMalformed, 0, "a descriptor write with no data pointer");
  const CommandExtension* ext = payload.get_extension<CommandExtension>();
  if (ext && ext->cmd) {
    // Fast path: the decoded command, once the bytes are its descriptor's
    // size and framing (docs/conventions.md 6: the payload carries the bytes).
    const Command& c = *ext->cmd;
    const uint32_t cid = uint32_t(ext->id & desc::kCompletionIdMask);
    if (len != logical_bytes(c)) {
      return descriptor_error(payload, ErrorCode::kBadLength, cid,
                              descriptor_name(cid, c) + ": " + std::to_string(len) + " bytes, its logical bytes are " +
                                  std::to_string(logical_bytes(c)));
    }
    if (len < 4 || data[0] != uint8_t(c.index() + 1) || framed_id(data, len) != cid) {
      return descriptor_error(payload, ErrorCode::kMalformed, cid,
                              descriptor_name(cid, c) + ": the bytes' framing does not name the extension's command");
    }
    w.ext_cmd = &c;
    w.ext_id = ext->id;
    w.completion_id = cid;
    return true;
  }
  w.ext_cmd = nullptr;
  w.ext_id = 0;
  try {
    desc::Decoded d = desc::decode(data, len);
    w.decoded = std::move(d.cmd);
    w.completion_id = d.completion_id;
  } catch (const desc::DecodeError& e) {
    return descriptor_error(payload, e.code, framed_id(data, len), e.what());
  }
  // PE_CPU's dispatch checks, in its order (pe_cpu.cpp), for a command no
  // PE_CPU checked.
  Command& c = w.decoded;
  const uint32_t cid = w.completion_id;
  if (auto* comp = std::get_if<CompositeCmd>(&c)) {
    comp->name = "descriptor #" + std::to_string(cid);  // the bytes carry no name (D2)
    try {
      check_composite_cap(*comp, cfg_.cost_model, name());  // docs/cost-model.md D7
    } catch (const CompositeTooLarge& e) {
      return descriptor_error(payload, ErrorCode::kCompositeCap, cid, e.what());
    }
  }
  handle_access(c, access_);
  for (const std::vector<Handle>* hs : {&access_.reads, &access_.writes}) {
    for (Handle h : *hs) {
      if (!table_.contains(h)) {
        return descriptor_error(payload, ErrorCode::kBadHandle, cid,
                                descriptor_name(cid, c) + ": " + table_.why_unknown(h));
      }
    }
  }
  try {
    check_command(c, table_);
    check_peer(c, pes_);
    if (cfg_.data_mode) check_data_dtypes(c, table_);
  } catch (const KernelError& e) {
    return descriptor_error(payload, ErrorCode::kInvalidCommand, cid, descriptor_name(cid, c) + ": " + e.what());
  }
  return true;
}

uint64_t PeScheduler::command_id(const Incoming& w) const {
  if (w.ext_cmd) return w.ext_id;
  constexpr uint64_t kWrap = uint64_t(desc::kCompletionIdMask) + 1;
  uint64_t id = (last_id_ & ~uint64_t(desc::kCompletionIdMask)) | w.completion_id;
  if (id <= last_id_) id += kWrap;
  return id;
}

void PeScheduler::b_transport(int /*from*/, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  if (delay != sc_core::SC_ZERO_TIME) {
    sc_core::wait(delay);
    delay = sc_core::SC_ZERO_TIME;
  }
  if (payload.get_address() == kDrainAddress) {
    if (!payload.is_read() || payload.get_data_length() != sizeof(completed_) || !payload.get_data_ptr() ||
        payload.get_byte_enable_ptr()) {
      payload.set_response_status(payload.is_read() ? tlm::TLM_BURST_ERROR_RESPONSE
                                                    : tlm::TLM_COMMAND_ERROR_RESPONSE);
      return;
    }
    while (inflight_ != 0) sc_core::wait(drained_);
    std::memcpy(payload.get_data_ptr(), &completed_, sizeof(completed_));  // little-endian host
    payload.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  Incoming w;  // this thread's: several initiators may wait at once
  if (!descriptor_write(payload, w)) return;
  // Back-pressure: a slot frees only when a command completes.
  while (inflight_ >= cfg_.scheduler.queue_depth || next_pending()) {
    ++blocked_writers_;
    sc_core::wait(slot_freed_);
    --blocked_writers_;
  }
  accept(command_id(w), w.cmd());
  payload.set_response_status(tlm::TLM_OK_RESPONSE);
}

tlm::tlm_sync_enum PeScheduler::nb_transport_fw(int from, tlm::tlm_generic_payload& payload,
                                                tlm::tlm_phase& phase, sc_core::sc_time& delay) {
  // Descriptor writes only. A queue slot is state at the instant a write
  // begins, so one annotated ahead (a delay) is taken at that time, by a
  // step, never ahead of it.
  if (pending_.size() <= size_t(from)) pending_.resize(size_t(from) + 1);
  Pending& mine = pending_[size_t(from)];
  if (phase != tlm::BEGIN_REQ || mine.payload) {
    SC_REPORT_ERROR(name(), "nb_transport_fw: only BEGIN_REQ, one write at a time per initiator");
    payload.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return tlm::TLM_COMPLETED;
  }
  if (!descriptor_write(payload, nb_in_)) return tlm::TLM_COMPLETED;
  const bool ahead = delay != sc_core::SC_ZERO_TIME;
  // Taken now when it begins now, a slot is free and no write that began
  // earlier waits for it.
  if (ahead || inflight_ >= cfg_.scheduler.queue_depth || next_pending()) {
    mine.payload = &payload;  // taken by accept_pending() once it has begun and a slot is free
    mine.at = sim_now() + delay;
    mine.in.swap_with(nb_in_);  // the decoded command moves, no copy
    ++pending_count_;
    payload.acquire();  // held until then (base protocol memory management)
    // A step when it begins (a step under way schedules itself when it
    // ends). Begun with the queue full: the step of a completion takes it.
    if (ahead) {
      // As at a step's end (step()): with the queue full, a completion's step.
      const bool takeable = inflight_ < cfg_.scheduler.queue_depth || timed_ == 0;
      if (phase_ == StepPhase::kNone && takeable) step_.notify(delay);
    } else if (inflight_ < cfg_.scheduler.queue_depth) {
      request_step();  // behind writes that began earlier, with a slot free
    }
    return tlm::TLM_ACCEPTED;
  }
  accept(command_id(nb_in_), nb_in_.cmd());
  payload.set_response_status(tlm::TLM_OK_RESPONSE);
  return tlm::TLM_COMPLETED;
}

PeScheduler::Pending* PeScheduler::next_pending() {
  if (pending_count_ == 0) return nullptr;
  const sc_core::sc_time& now = sim_now();
  Pending* best = nullptr;
  for (Pending& p : pending_) {
    if (p.payload && p.at <= now && (!best || p.at < best->at)) best = &p;
  }
  return best;
}

void PeScheduler::fail(uint64_t cmd_id, const char* cmd_type, const std::exception& e) {
  faulted_ = true;
  // The stages under way are abandoned but their engines stay busy until
  // they would have ended: time runs on to the last of them.
  const sc_core::sc_time now = sim_now();
  sc_core::sc_time last = now;
  for (int i = 0; i < kNumEngines; ++i) {
    if ((timed_ >> i & 1) && done_at_[i] > last) last = done_at_[i];
  }
  if (last > now) notify_outside(abandoned_, last - now);
  on_fault_(cmd_id, cmd_type, e.what());
}

void PeScheduler::accept_pending() {
  while (inflight_ < cfg_.scheduler.queue_depth && !faulted_) {
    Pending* p = next_pending();
    if (!p) break;
    tlm::tlm_generic_payload& payload = *p->payload;
    p->payload = nullptr;  // its initiator may write again from the backward call
    --pending_count_;
    const uint64_t id = command_id(p->in);
    try {
      accept(id, p->in.cmd());
    } catch (const std::exception& e) {
      asan_forget_unwound_frames();  // models/util/asan_stack.h
      if (!on_fault_) throw;
      return fail(id, command_type_name(p->in.cmd()), e);
    }
    payload.set_response_status(tlm::TLM_OK_RESPONSE);
    tlm::tlm_phase phase = tlm::BEGIN_RESP;  // implies END_REQ (base protocol)
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    in[int(p - pending_.data())]->nb_transport_bw(payload, phase, delay);
    payload.release();
  }
  // A blocking writer waits while a write that began before it is pending
  // (b_transport): with that one taken and a slot still free, it goes on.
  if (blocked_writers_ && inflight_ < cfg_.scheduler.queue_depth && !next_pending()) {
    notify_outside(slot_freed_, sc_core::SC_ZERO_TIME);
  }
}

namespace {
// The bytes each tensor touches: its rows x columns, not the bounding range
// (a column slice skips the rest of every row).
// Written to out[0, hs.size()).
void ranges(const TensorTable& t, const std::vector<Handle>& hs, ByteRange* o) {
  for (Handle h : hs) {
    const TensorDesc& d = t.at(h);
    const uint64_t el = dtype_bytes(d.dtype);
    const uint64_t rows = d.rows > 0 ? uint64_t(d.rows) : 0;
    const uint64_t cols = d.cols > 0 ? uint64_t(d.cols) : 0;
    uint64_t run, step;
    if (__builtin_mul_overflow(cols, el, &run) ||
        __builtin_mul_overflow(d.row_stride > 0 ? uint64_t(d.row_stride) : 0, el, &step)) {
      *o++ = {d.address, UINT64_MAX};  // no valid tensor: all from its address
    } else {
      *o++ = ByteRange::strided(d.address, run, step, rows);
    }
  }
}
}  // namespace

void PeScheduler::accept(uint64_t id, const Command& cmd) {
  if (spare_.empty()) {
    pool_.push_back(std::make_unique<InFlight>());
    pool_.back()->tag = uint32_t(pool_.size() - 1);
    spare_.push_back(pool_.back().get());
  }
  InFlight& f = *spare_.back();
  spare_.pop_back();
  ++inflight_;
  occupancy_changed();
  f.id = id;
  last_id_ = id;
  f.blockers = 0;
  f.waiters.clear();
  f.plan.start(id, cmd, table_, cfg_);  // docs/cost-model.md D5: no time
  if (ordered_types_ & 1u << cmd.index()) {
    for (uint32_t m = policed_; m != 0; m &= m - 1) {
      IssuePolicy& p = *policy_[__builtin_ctz(m)];
      if ((p.command_types() & 1u << cmd.index()) && p.accepted(cmd, &f.stamp)) break;  // one policy at most
    }
  }
  if (cfg_.data_mode) f.data = std::make_unique<CommandData>(cmd);

  handle_access(cmd, access_);
  const HazardScoreboard::Lists lists = scoreboard_.next(access_.reads.size(), access_.writes.size());
  ranges(table_, access_.reads, lists.reads);
  ranges(table_, access_.writes, lists.writes);
  scoreboard_.add_next(id, f.tag, [&](uint64_t, uint32_t earlier, Hazard) {
    pool_[earlier]->waiters.push_back(&f);
    ++f.blockers;
  });
  if (f.blockers == 0) release(f);
}

// Every observer of the occupancy at once (statistics, a trace's history,
// the signal), so they agree even when the accept under way then fails.
void PeScheduler::occupancy_changed() {
  const uint64_t now = now_ps();
  if (StreamingStats* st = log_.stats()) st->occupancy(now, uint32_t(inflight_));
  if (occupancy_history_) occupancy_history_->observe(now, uint32_t(inflight_));
  signal_change();
}

void PeScheduler::release(InFlight& f) {
  if (f.plan.done()) {
    complete_command(f);
    return;
  }
  queue_ready(f);
}

void PeScheduler::queue_ready(InFlight& f) {
  uint32_t slot;
  while (f.plan.pop_ready(&slot)) {
    const Stage& s = f.plan.stage(slot);
    const int e = int(s.engine);
    ready_[e].push({f.id, s.seq, slot, &f});
    recheck_ |= policed_ & 1u << e;
    // An idle engine takes its oldest ready stage at a step's issue phase:
    // the step under way's, or one delta later once it has passed it.
    if (!busy_[e]) request_step();
  }
}

void PeScheduler::complete_stage(InFlight& f, uint32_t slot) {
  f.plan.complete(slot);  // may produce the next tiles
  queue_ready(f);
  if (f.plan.done()) complete_command(f);
}

void PeScheduler::complete_command(InFlight& f) {
  --inflight_;
  occupancy_changed();
  scoreboard_.remove(f.id);
  log_.command_done(f.id);
  ++completed_;
  if (blocked_writers_) notify_outside(slot_freed_, sc_core::SC_ZERO_TIME);
  if (pending_count_) request_step();  // the step's accept phase takes a write that has begun
  if (inflight_ == 0) notify_outside(drained_, sc_core::SC_ZERO_TIME);
  // Hand f back to the pool before releasing waiters (which may complete
  // and recycle in turn). Its waiters list stays put while they are
  // released: release() queues stages or completes commands but never
  // accepts one, so nothing reuses f or adds a waiter to it meanwhile (no
  // copy or swap of the list per command).
  f.data.reset();
  spare_.push_back(&f);
  for (size_t i = 0, n = f.waiters.size(); i < n; ++i) {
    InFlight* w = f.waiters[i];
    if (--w->blockers == 0) release(*w);
  }
  f.waiters.clear();  // keeps the capacity for the next command
}

void PeScheduler::update_signals() {
  occupancy_signal.write(uint32_t(inflight_));
  for (int e = 0; e < kNumEngines; ++e) busy_signal[e].write(busy_[e]);
}

void PeScheduler::issue(Engine e) {
  try {
    issue_next(e);
  } catch (const std::exception& ex) {
    asan_forget_unwound_frames();  // models/util/asan_stack.h
    if (!on_fault_) throw;
    const Stage* s = issued_[int(e)].ext->stage;  // set before the engine runs
    fail(s ? s->cmd_id : 0, s ? s->cmd_type : "stage", ex);
  }
}

void PeScheduler::issue_next(Engine e) {
  auto& ready = ready_[int(e)];
  if (busy_[int(e)] || ready.empty() || faulted_) return;
  Issued& is = issued_[int(e)];
  if (policed_ & 1u << int(e)) {
    if (!pick_by_policy(e, &is.r)) return;
  } else {
    is.r = ready.top();
    ready.pop();
  }
  is.ext->stage = &is.r.f->plan.stage(is.r.slot);  // read during b_transport only
  is.ext->data = is.r.f->data.get();
  is.ext->error = nullptr;
  const Stage& stage = *is.ext->stage;
  is.word = StageWord{stage.cmd_id, stage.seq, stage.tile, stage.bytes};
  is.payload.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  busy_[int(e)] = true;
  signal_change();
  is.start_ps = now_ps();
  if (StreamingStats* st = log_.stats()) st->engine_busy(is.start_ps, int(e), true);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  is.payload.acquire();
  const tlm::tlm_sync_enum r = engine_fw_[int(e)]->nb_transport_fw(is.payload, phase, delay);
  if (r == tlm::TLM_COMPLETED) stage_answered(e, delay);
  // Else TLM_ACCEPTED: the engine answers with BEGIN_RESP (nb_transport_bw).
}

bool PeScheduler::pick_by_policy(Engine e, Ready* out) {
  auto& ready = ready_[int(e)];
  IssuePolicy& policy = *policy_[int(e)];
  skipped_.clear();
  held_[int(e)] = nullptr;
  bool found = false;
  while (!ready.empty()) {
    const Ready r = ready.top();
    ready.pop();
    const Stage& s = r.f->plan.stage(r.slot);
    const IssuePolicy::Verdict v = policy.offer(s, r.f->stamp);
    if (v == IssuePolicy::Verdict::kIssue) {
      *out = r;
      found = true;
      break;
    }
    if (v == IssuePolicy::Verdict::kHeld && !held_[int(e)]) held_[int(e)] = &s;
    skipped_.push_back(r);
  }
  // Newest first: each is then older than every queued stage and goes
  // back before the head (ready_queue.h), no insertion while popped slots
  // remain before it (a queue the scan emptied starts over at 0).
  for (auto it = skipped_.rbegin(); it != skipped_.rend(); ++it) ready.push(*it);
  return found;
}

void PeScheduler::stage_answered(Engine e, const sc_core::sc_time& delay) {
  Issued& is = issued_[int(e)];
  is.payload.release();
  if (is.payload.is_response_error()) {
    if (is.ext->error) throw KernelError(is.ext->error);  // the engine's own words
    throw KernelError(std::string(to_string(engine_component(e))) + ": " + is.payload.get_response_string());
  }
  // The engine is busy until then; a step completes the stage.
  done_at_[int(e)] = sim_now() + delay;
  timed_ |= 1u << int(e);
  if (phase_ == StepPhase::kNone) step_.notify(delay);  // a step schedules itself when it ends
}

tlm::tlm_sync_enum PeScheduler::nb_transport_bw(tlm::tlm_generic_payload& payload,
                                                tlm::tlm_phase& phase, sc_core::sc_time& delay) {
  int e = 0;
  while (e < kNumEngines && &issued_[e].payload != &payload) ++e;
  if (e == kNumEngines || phase != tlm::BEGIN_RESP || !busy_[e]) {
    SC_REPORT_ERROR(name(), "nb_transport_bw: a response to no stage under way");
    return tlm::TLM_COMPLETED;
  }
  try {
    stage_answered(Engine(e), delay);
  } catch (const std::exception& ex) {
    asan_forget_unwound_frames();  // models/util/asan_stack.h
    const Stage* s = issued_[e].ext->stage;
    if (!on_fault_) throw;
    fail(s ? s->cmd_id : 0, s ? s->cmd_type : "stage", ex);
  }
  return tlm::TLM_COMPLETED;  // BEGIN_RESP ends the stage's transaction
}

void PeScheduler::log_stage(Engine e, const Stage& s, uint64_t start_ps) {
  if (!log_.wants_records()) {  // nothing kept or streamed: totals only
    log_.account(engine_component(e), s.kind, start_ps, now_ps());
    return;
  }
  OpRecord rec;
  rec.component = engine_component(e);
  rec.kind = s.kind;
  rec.cmd_id = s.cmd_id;
  rec.cmd_type = s.cmd_type;
  rec.op = s.kind == RecordKind::kMath ? to_string(s.op) : "";
  rec.tile = s.tile;
  rec.start_ps = start_ps;
  rec.end_ps = now_ps();
  rec.bytes = s.bytes;
  rec.elements = s.elements;
  log_.add(rec);
}

void PeScheduler::complete_issued(Engine e) {
  try {
    finish_issued(e);
  } catch (const std::exception& ex) {
    asan_forget_unwound_frames();  // models/util/asan_stack.h
    if (!on_fault_) throw;
    // Still the completed stage: its storage stays until another command
    // is accepted.
    const Stage* s = issued_[int(e)].ext->stage;
    fail(s ? s->cmd_id : 0, s ? s->cmd_type : "stage", ex);
  }
}

void PeScheduler::finish_issued(Engine e) {
  Issued& is = issued_[int(e)];
  InFlight& f = *is.r.f;
  busy_[int(e)] = false;
  timed_ &= ~(1u << int(e));
  recheck_ |= policed_ & 1u << int(e);  // its next stage in the policy's order may go
  signal_change();
  log_stage(e, f.plan.stage(is.r.slot), is.start_ps);
  if (StreamingStats* st = log_.stats()) st->engine_busy(now_ps(), int(e), false);
  complete_stage(f, is.r.slot);  // the step's issue phase gives the engine its next stage
}

void PeScheduler::request_step() {
  if (phase_ == StepPhase::kNone || phase_ == StepPhase::kIssue) step_.notify(sc_core::SC_ZERO_TIME);
}

// The canonical order of an instant (docs/architecture.md, "Same-instant order"): every
// stage that ends now completes, in engine-table order; then a held
// descriptor write is accepted; then every idle engine takes its oldest
// ready stage, in engine-table order. So the same instant gives the same
// stages whatever order SystemC ran the processes in, and one activation
// does what one per engine and event did.
void PeScheduler::step() {
  if (faulted_) return;
  const sc_core::sc_time now = sim_now();
  phase_ = StepPhase::kComplete;
  for (uint32_t m = timed_; m != 0 && !faulted_; m &= m - 1) {
    const int e = __builtin_ctz(m);
    if (done_at_[e] == now) complete_issued(Engine(e));
  }
  if (pending_count_ && !faulted_) accept_pending();
  phase_ = StepPhase::kIssue;
  for (int e = 0; e < kNumEngines && !faulted_; ++e) {
    if (busy_[e] || ready_[e].empty()) continue;
    if (policed_ & 1u << e) {
      if (!(recheck_ & 1u << e)) continue;  // nothing changed for its held stages
      recheck_ &= ~(1u << e);
    }
    issue(Engine(e));
  }
  phase_ = StepPhase::kNone;
  if (faulted_) return;
  // The next instant a stage ends, or a write annotated ahead begins while
  // it could be taken: with the queue full, the step of the completion that
  // frees a slot takes it (no step at its beginning, the cost of most of
  // PE_CPU's stalled writes), unless no stage is under way to complete. An
  // earlier pending notification wins.
  const sc_core::sc_time* next = nullptr;
  if (inflight_ < cfg_.scheduler.queue_depth || timed_ == 0) {
    for (const Pending& p : pending_) {
      if (p.payload && p.at > now && (!next || p.at < *next)) next = &p.at;
    }
  }
  for (uint32_t m = timed_; m != 0; m &= m - 1) {
    const int e = __builtin_ctz(m);
    if (!next || done_at_[e] < *next) next = &done_at_[e];
  }
  if (next) step_.notify(*next - now);
}

}  // namespace kb
