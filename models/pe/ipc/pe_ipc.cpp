#include "models/pe/ipc/pe_ipc.h"

#include <algorithm>
#include <stdexcept>

#include "models/mem/address_map.h"
#include "models/pe/engines/engine_timing.h"
#include "models/pe/engines/pe_dma.h"
#include "models/util/asan_stack.h"

namespace kb {

static_assert(kMaxIpcSources >= kMaxMeshPes, "every PE of the largest mesh has a port in every window");
static_assert(kIpcDataOffset + uint64_t(kMaxIpcSources) * kIpcPortWidth <= kIpcWindowStride,
              "the DATA ports fit the window");

PeIpc::PeIpc(sc_core::sc_module_name name, const PeConfig& cfg) : StageEngine(name, cfg), msg("msg"), mem("mem") {
  msg.register_b_transport(this, &PeIpc::b_transport);
  msg.register_nb_transport_fw(this, &PeIpc::nb_transport_fw);
  msg.register_transport_dbg(this, &PeIpc::transport_dbg);
}

std::string PeIpc::undelivered() const {
  std::string out;
  for (const auto& [src, q] : by_src_) {
    for (const Message& m : q) {
      out += (out.empty() ? "" : ", ") + std::to_string(m.bytes) + " bytes from PE " + std::to_string(src);
    }
  }
  for (const WaitingHeader& w : waiting_) {
    out += (out.empty() ? "" : ", ") + std::to_string(w.bytes) + " bytes from PE " + std::to_string(w.src) +
           " (waiting for a slot)";
  }
  return out;
}

bool PeIpc::message_ready(uint32_t src) const {
  auto it = by_src_.find(src);
  if (it == by_src_.end() || it->second.empty()) return false;
  const Message& m = it->second.front();
  return m.complete() && m.done_ps <= now_ps();
}

void PeIpc::arrived() {
  if (on_arrival_) on_arrival_();
}

bool PeIpc::slot_free(uint32_t src) const {
  if (slots_taken(src) >= cfg_.ipc.queue_depth) return false;
  for (const WaitingHeader& w : waiting_)
    if (w.src == src) return false;  // an older HEADER from src goes first
  return true;
}

uint64_t PeIpc::cycles_of(const Stage& s) const {
  return cycles_add(ceil_div_real(s.bytes, cfg_.tcm.bytes_per_cycle), cfg_.tcm.latency_cycles, "IPC recv copy");
}

bool PeIpc::in_tcm(const BytePattern& p) const {
  return MemoryRange{kTcmBase, kTcmBase + cfg_.tcm.size_bytes}.contains(p.address, 1);
}

IpcWait PeIpc::wait_state() const {
  IpcWait w;
  if (!stage_ || !initiator_.late()) return w;
  w.cmd_id = stage_->cmd_id;
  w.peer = stage_->peer;
  w.bytes = stage_->bytes;
  // A RECV never waits here (PE_SCHEDULER issues it once its message is
  // in; deadlock.cpp asks the scheduler): only a SEND held for a slot.
  if (waiting_slot_) w.kind = IpcWait::kSlot;
  return w;
}

// ---------------------------------------------------------------- receive side

PeIpc::Message* PeIpc::oldest(uint32_t src) {
  auto it = by_src_.find(src);
  return it == by_src_.end() || it->second.empty() ? nullptr : &it->second.front();
}

int PeIpc::decode(tlm::tlm_generic_payload& p, uint32_t* src, uint64_t* bytes) {
  const uint64_t base = ipc_window(self_);
  const uint64_t a = p.get_address();
  if (!p.is_write() || a < base || a - base >= kIpcWindowStride) {
    p.set_response_status(p.is_write() ? tlm::TLM_ADDRESS_ERROR_RESPONSE : tlm::TLM_COMMAND_ERROR_RESPONSE);
    return 0;
  }
  if (p.get_byte_enable_ptr()) {
    p.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    return 0;
  }
  const uint64_t off = a - base;
  if (off % kIpcPortWidth != 0 || !p.get_data_ptr() || p.get_data_length() == 0) {
    p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return 0;
  }
  if (off < kIpcDataOffset) {  // HEADER(s)
    *src = uint32_t(off / kIpcPortWidth);
    const unsigned char* d = p.get_data_ptr();
    if (p.get_data_length() != kIpcHeaderBytes || p.get_streaming_width() != kIpcHeaderBytes) {
      p.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
      return 0;
    }
    uint64_t n = 0;
    uint32_t from = 0, reserved = 0;
    for (int i = 0; i < 8; ++i) n |= uint64_t(d[i]) << (8 * i);
    for (int i = 0; i < 4; ++i) from |= uint32_t(d[8 + i]) << (8 * i);
    for (int i = 0; i < 4; ++i) reserved |= uint32_t(d[12 + i]) << (8 * i);
    if (from != *src || reserved != 0) {
      p.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
      return 0;
    }
    // Untrusted: a message is at least a byte and at most a slice (no
    // tensor is larger); the store grows as its bytes arrive.
    if (n == 0 || n > kHbmSliceBytes) {
      p.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
      return 0;
    }
    *bytes = n;
    return 1;
  }
  *src = uint32_t((off - kIpcDataOffset) / kIpcPortWidth);  // DATA(s)
  if (p.get_streaming_width() != kIpcPortWidth) {
    p.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return 0;
  }
  return 2;
}

uint64_t PeIpc::port_write(uint64_t arrive_ps, uint64_t n) {
  // First fit (busy_calendar.h): writes come in call order, not arrival order.
  const uint64_t d = ps_of(clock_.cycles(ceil_div_real(n, cfg_.tcm.bytes_per_cycle)));
  return receive_port_.book(arrive_ps, now_ps(), [d](uint64_t s) { return s + d; }).end;
}

void PeIpc::take_slot(uint32_t src, uint64_t bytes, uint64_t header_in_ps) {
  ++taken_[src];
  Message m;
  m.src = src;
  m.bytes = bytes;
  m.done_ps = header_in_ps;
  by_src_[src].push_back(std::move(m));
}

void PeIpc::data_write(tlm::tlm_generic_payload& p, uint32_t src, sc_core::sc_time& delay) {
  // The oldest message from src still arriving takes the next bytes.
  auto it = by_src_.find(src);
  Message* m = nullptr;
  if (it != by_src_.end()) {
    for (Message& x : it->second) {
      if (!x.complete()) {
        m = &x;
        break;
      }
    }
  }
  const uint64_t n = p.get_data_length();
  if (!m || m->arrived + n > m->bytes) {  // no HEADER, or past its bytes
    p.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  if (cfg_.data_mode) m->data.insert(m->data.end(), p.get_data_ptr(), p.get_data_ptr() + n);
  m->arrived += n;
  const uint64_t now = now_ps();
  const uint64_t end = port_write(now + ps_of(delay), n);
  m->done_ps = std::max(m->done_ps, end);
  delay = from_ps(end - now);
  p.set_response_status(tlm::TLM_OK_RESPONSE);
  // PE_SCHEDULER is told a RECV from src may issue once the last byte is
  // in: the latest end of any of its writes, not this one's (first fit can
  // end a short last burst in a gap before an earlier, longer one).
  if (m->complete()) arrival_ev_.notify(from_ps(m->done_ps - now));
}

tlm::tlm_sync_enum PeIpc::nb_transport_fw(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                          sc_core::sc_time& delay) {
  if (phase == tlm::END_RESP) return tlm::TLM_COMPLETED;
  if (phase != tlm::BEGIN_REQ) {
    SC_REPORT_ERROR(name(), "msg: unexpected phase");
    return tlm::TLM_COMPLETED;
  }
  uint32_t src = 0;
  uint64_t bytes = 0;
  const int kind = decode(p, &src, &bytes);
  if (kind == 0) return tlm::TLM_COMPLETED;
  if (kind == 2) {
    data_write(p, src, delay);
    return tlm::TLM_COMPLETED;
  }
  const uint64_t now = now_ps();
  const uint64_t arrive = now + ps_of(delay);
  if (slot_free(src)) {
    const uint64_t end = port_write(arrive, kIpcHeaderBytes);
    take_slot(src, bytes, end);
    delay = from_ps(end - now);
    p.set_response_status(tlm::TLM_OK_RESPONSE);
    return tlm::TLM_COMPLETED;
  }
  // The queue is full: the request is taken (END_REQ, so the interconnect
  // may pass the next one), the response waits for a slot (free_slots).
  waiting_.push_back({&p, src, bytes, arrive, nullptr});
  p.acquire();
  phase = tlm::END_REQ;  // at the request's arrival: `delay` stays
  return tlm::TLM_UPDATED;
}

void PeIpc::b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  uint32_t src = 0;
  uint64_t bytes = 0;
  const int kind = decode(p, &src, &bytes);
  if (kind == 0) return;
  if (kind == 2) return data_write(p, src, delay);
  uint64_t arrive = now_ps() + ps_of(delay);
  if (!slot_free(src)) {
    bool granted = false;
    waiting_.push_back({nullptr, src, bytes, arrive, &granted});
    while (!granted) sc_core::wait(slot_granted_);
    delay = sc_core::SC_ZERO_TIME;  // free_slots took the slot and the port
    p.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  const uint64_t end = port_write(arrive, kIpcHeaderBytes);
  take_slot(src, bytes, end);
  delay = from_ps(end - now_ps());
  p.set_response_status(tlm::TLM_OK_RESPONSE);
}

unsigned PeIpc::transport_dbg(tlm::tlm_generic_payload& p) {
  p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);  // the queue has no debug view
  return 0;
}

void PeIpc::free_slots() {
  const uint64_t now = now_ps();
  while (!free_at_ps_.empty() && free_at_ps_.front().first <= now) {
    --taken_[free_at_ps_.front().second];
    free_at_ps_.pop_front();
  }
  // The oldest waiting HEADER of each source whose slot freed.
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if (slots_taken(it->src) >= cfg_.ipc.queue_depth) {
      ++it;
      continue;
    }
    bool older = false;
    for (auto o = waiting_.begin(); o != it; ++o) older = older || o->src == it->src;
    if (older) {
      ++it;
      continue;
    }
    const WaitingHeader w = *it;
    it = waiting_.erase(it);
    const uint64_t end = port_write(std::max(now, w.arrive_ps), kIpcHeaderBytes);
    take_slot(w.src, w.bytes, end);
    if (w.granted) {
      *w.granted = true;
      notify_outside(slot_granted_, from_ps(end - now));
      continue;
    }
    w.p->set_response_status(tlm::TLM_OK_RESPONSE);
    tlm::tlm_phase phase = tlm::BEGIN_RESP;  // END_REQ was given at once
    sc_core::sc_time delay = from_ps(end - now);
    msg->nb_transport_bw(*w.p, phase, delay);  // the sender answers TLM_COMPLETED
    w.p->release();
  }
  if (!free_at_ps_.empty()) free_ev_.notify(from_ps(free_at_ps_.front().first - now));
}

// ---------------------------------------------------------------- stage side

void PeIpc::plan_runs(const BytePattern& p, bool read) {
  const uint64_t runs = p.pitch == p.run_bytes ? 1 : p.runs;
  const uint64_t length = p.pitch == p.run_bytes ? p.run_bytes * p.runs : p.run_bytes;
  uint64_t buf = 0;
  for (uint64_t r = 0; r < runs; ++r) {
    for (uint64_t off = 0; off < length;) {
      const uint64_t n = std::min(PeDma::kMaxBurstBytes, length - off);
      Burst b;
      b.address = p.address + r * p.pitch + off;
      b.length = n;
      b.width = n;
      b.buf = buf;
      b.read = read;
      bursts_.push_back(b);
      off += n;
      buf += n;
    }
  }
}

std::optional<sc_core::sc_time> PeIpc::execute(const Stage& s, CommandData* d) {
  // A stage's error (a recv of the wrong size, a refused burst) fails it
  // through resume(), as a late stage: no exception leaves this call, which
  // runs in PE_SCHEDULER's method (a rethrow there trips ASan's coroutine
  // bookkeeping, models/util/asan_stack.h).
  try {
    return start(s, d);
  } catch (const std::exception& e) {
    asan_forget_unwound_frames();  // a method's stack (models/util/asan_stack.h)
    initiator_.fail_later(e.what());
    return std::nullopt;
  }
}

std::optional<sc_core::sc_time> PeIpc::start(const Stage& s, CommandData* d) {
  stage_ = &s;
  data_ = data_mode() && d;
  waiting_slot_ = false;
  bursts_.clear();
  next_ = 0;
  start_ps_ = now_ps();
  initiator_.begin(start_ps_);
  if (s.kind == RecordKind::kSend) {
    if (self_ >= kMaxIpcSources) {
      throw KernelError("PE_IPC: PE " + std::to_string(self_) + " cannot send: the window has DATA ports for " +
                        std::to_string(kMaxIpcSources) + " sources");
    }
    issue_ps_ = start_ps_ + ps_of(clock_.cycles(cfg_.dma.setup_cycles));
    initiator_.set_end_ps(issue_ps_);
    if (data_) buffer_.assign(s.bytes, 0);
    if (in_tcm(s.src)) {
      if (data_) {
        for (uint64_t r = 0; r < s.src.runs; ++r)
          port_.read(s.src.address + r * s.src.pitch, &buffer_[r * s.src.run_bytes], s.src.run_bytes);
      }
      phase_ = Phase::kRead;  // nothing to read over mem
    } else {
      plan_runs(s.src, true);
      phase_ = Phase::kRead;
    }
  } else {
    phase_ = Phase::kTake;
    issue_ps_ = start_ps_;
  }
  if (!advance()) return std::nullopt;  // resume() finishes the stage
  const uint64_t now = now_ps(), end = initiator_.end_ps();
  return from_ps(end > now ? end - now : 0);
}

void PeIpc::next_phase() {
  bursts_.clear();
  next_ = 0;
  issue_ps_ = initiator_.end_ps();  // the next phase starts when this one's last response is in
}

bool PeIpc::advance() {
  const Stage& s = *stage_;
  for (;;) {
    switch (phase_) {
      case Phase::kRead: {
        if (!send_bursts()) return false;
        next_phase();
        for (int i = 0; i < 8; ++i) header_[i] = uint8_t(s.bytes >> (8 * i));
        for (int i = 0; i < 4; ++i) header_[8 + i] = uint8_t(self_ >> (8 * i));
        for (int i = 12; i < 16; ++i) header_[i] = 0;
        Burst h;
        h.address = ipc_window(s.peer) + uint64_t(self_) * kIpcPortWidth;
        h.length = h.width = kIpcHeaderBytes;
        h.header = true;
        bursts_.push_back(h);
        phase_ = Phase::kHeader;
        break;
      }
      case Phase::kHeader: {
        if (!send_bursts()) return false;
        next_phase();
        const uint64_t port = ipc_window(s.peer) + kIpcDataOffset + uint64_t(self_) * kIpcPortWidth;
        for (uint64_t off = 0; off < s.bytes; off += PeDma::kMaxBurstBytes) {
          Burst b;
          b.address = port;
          b.length = std::min(PeDma::kMaxBurstBytes, s.bytes - off);
          b.width = kIpcPortWidth;
          b.buf = off;
          bursts_.push_back(b);
        }
        phase_ = Phase::kData;
        break;
      }
      case Phase::kData:
        if (!send_bursts()) return false;
        phase_ = Phase::kDone;
        return true;
      case Phase::kTake: {
        Message* m = oldest(s.peer);
        if (!m || !m->complete() || m->done_ps > now_ps()) {
          // PE_SCHEDULER's gate (message_ready) holds a RECV until then.
          throw std::logic_error("PE_IPC: a RECV from PE " + std::to_string(s.peer) + " issued before its message arrived");
        }
        if (m->bytes != s.bytes) {
          throw KernelError("PE_IPC: the message from PE " + std::to_string(s.peer) + " is " +
                            std::to_string(m->bytes) + " bytes, dst holds " + std::to_string(s.bytes) +
                            " bytes (a recv takes exactly its tensor's bytes)");
        }
        issue_ps_ = std::max(now_ps(), m->done_ps);
        initiator_.set_end_ps(issue_ps_);
        if (data_) buffer_.swap(m->data);
        by_src_[s.peer].pop_front();  // its slot stays taken until the stage ends
        if (in_tcm(s.dst)) {
          if (data_) {
            for (uint64_t r = 0; r < s.dst.runs; ++r)
              port_.write(s.dst.address + r * s.dst.pitch, &buffer_[r * s.dst.run_bytes], s.dst.run_bytes);
          }
          initiator_.set_end_ps(issue_ps_ + ps_of(clock_.cycles(cycles_of(s))));
          phase_ = Phase::kWrite;  // no bursts: done at once
        } else {
          plan_runs(s.dst, false);
          phase_ = Phase::kWrite;
        }
        break;
      }
      case Phase::kWrite: {
        if (!send_bursts()) return false;
        // The slot frees when the RECV ends (free_slots).
        const uint64_t now = now_ps(), end = initiator_.end_ps();
        free_at_ps_.emplace_back(end, s.peer);
        free_ev_.notify(from_ps(end > now ? end - now : 0));
        phase_ = Phase::kDone;
        return true;
      }
      case Phase::kIdle:
      case Phase::kDone: return true;
    }
  }
}

bool PeIpc::send_bursts() {
  while (next_ < bursts_.size()) {
    const Burst& b = bursts_[next_];
    tlm::tlm_generic_payload& p = initiator_.payload();
    p.set_command(b.read ? tlm::TLM_READ_COMMAND : tlm::TLM_WRITE_COMMAND);
    p.set_address(b.address);
    unsigned char* bytes;
    if (b.header) {
      bytes = header_;
    } else if (data_) {
      bytes = buffer_.data() + b.buf;
    } else {
      if (scratch_.size() < b.length) scratch_.resize(b.length);
      bytes = scratch_.data();
    }
    p.set_data_ptr(bytes);
    p.set_data_length(unsigned(b.length));
    p.set_streaming_width(unsigned(b.width));
    p.set_byte_enable_ptr(nullptr);
    p.set_byte_enable_length(0);
    if (!initiator_.send(issue_ps_)) {
      waiting_slot_ = b.header;  // a HEADER held: the receiver's queue is full
      return false;              // the response comes on the backward path
    }
    ++next_;
  }
  return true;
}

void PeIpc::resume() {
  const auto end = initiator_.resume(
      [this] {
        waiting_slot_ = false;
        ++next_;  // the late burst is in
        return advance();
      },
      error_);
  if (end) finish(end->delay, end->ok);
}

}  // namespace kb
