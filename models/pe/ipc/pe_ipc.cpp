#include "models/pe/ipc/pe_ipc.h"

#include <algorithm>
#include <stdexcept>

#include "models/mem/address_map.h"
#include "models/pe/engines/engine_timing.h"
#include "models/pe/engines/pe_dma.h"
#include "models/util/asan_stack.h"

namespace kb {

PeIpc::PeIpc(sc_core::sc_module_name name, const PeConfig& cfg, IpcMailbox& mailbox)
    : StageEngine(name, cfg), mem("mem"), mailbox_(mailbox) {}

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
        const IpcMailbox::Message* m = mailbox_.oldest(s.peer);
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
        mailbox_.take(s.peer, data_ ? &buffer_ : nullptr);  // its slot stays taken until the stage ends
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
        mailbox_.free_slot_at(initiator_.end_ps(), s.peer);  // the slot frees when the RECV ends
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
