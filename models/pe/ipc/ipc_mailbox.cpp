#include "models/pe/ipc/ipc_mailbox.h"

#include <algorithm>

#include "models/mem/address_map.h"
#include "models/pe/engines/engine_timing.h"
#include "models/util/sim_time.h"

namespace kb {

static_assert(kMaxIpcSources >= kMaxMeshPes, "every PE of the largest mesh has a port in every window");
static_assert(kIpcDataOffset + uint64_t(kMaxIpcSources) * kIpcPortWidth <= kIpcWindowStride,
              "the DATA ports fit the window");

IpcMailbox::IpcMailbox(sc_core::sc_module_name name, const PeConfig& cfg)
    : sc_module(name), msg("msg"), cfg_(cfg), clock_(cfg.clock_freq_ghz) {
  msg.register_b_transport(this, &IpcMailbox::b_transport);
  msg.register_nb_transport_fw(this, &IpcMailbox::nb_transport_fw);
  msg.register_transport_dbg(this, &IpcMailbox::transport_dbg);
}

std::string IpcMailbox::undelivered() const {
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

bool IpcMailbox::message_ready(uint32_t src) const {
  auto it = by_src_.find(src);
  if (it == by_src_.end() || it->second.empty()) return false;
  const Message& m = it->second.front();
  return m.complete() && m.done_ps <= now_ps();
}

void IpcMailbox::arrived() {
  if (on_arrival_) on_arrival_();
}

bool IpcMailbox::slot_free(uint32_t src) const {
  if (slots_taken(src) >= cfg_.ipc.queue_depth) return false;
  for (const WaitingHeader& w : waiting_)
    if (w.src == src) return false;  // an older HEADER from src goes first
  return true;
}

const IpcMailbox::Message* IpcMailbox::oldest(uint32_t src) const {
  auto it = by_src_.find(src);
  return it == by_src_.end() || it->second.empty() ? nullptr : &it->second.front();
}

int IpcMailbox::decode(tlm::tlm_generic_payload& p, uint32_t* src, uint64_t* bytes) {
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

uint64_t IpcMailbox::port_write(uint64_t arrive_ps, uint64_t n) {
  // First fit (busy_calendar.h): writes come in call order, not arrival order.
  const uint64_t d = ps_of(clock_.cycles(ceil_div_real(n, cfg_.tcm.bytes_per_cycle)));
  return receive_port_.book(arrive_ps, now_ps(), [d](uint64_t s) { return s + d; }).end;
}

void IpcMailbox::take_slot(uint32_t src, uint64_t bytes, uint64_t header_in_ps) {
  ++taken_[src];
  Message m;
  m.src = src;
  m.bytes = bytes;
  m.done_ps = header_in_ps;
  by_src_[src].push_back(std::move(m));
}

void IpcMailbox::data_write(tlm::tlm_generic_payload& p, uint32_t src, sc_core::sc_time& delay) {
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

tlm::tlm_sync_enum IpcMailbox::nb_transport_fw(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
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

void IpcMailbox::b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
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

unsigned IpcMailbox::transport_dbg(tlm::tlm_generic_payload& p) {
  p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);  // the queue has no debug view
  return 0;
}

void IpcMailbox::free_slots() {
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

void IpcMailbox::take(uint32_t src, std::vector<uint8_t>* data) {
  std::deque<Message>& q = by_src_.at(src);
  if (data) data->swap(q.front().data);
  q.pop_front();
}

void IpcMailbox::free_slot_at(uint64_t end_ps, uint32_t src) {
  free_at_ps_.emplace_back(end_ps, src);
  const uint64_t now = now_ps();
  free_ev_.notify(from_ps(end_ps > now ? end_ps - now : 0));
}

}  // namespace kb
