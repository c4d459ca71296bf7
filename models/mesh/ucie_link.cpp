#include "models/mesh/ucie_link.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "models/mem/memory_access.h"
#include "models/util/checked.h"

namespace kb {

namespace {

uint64_t transfer_cycles(const LinkTiming& t, uint64_t bytes) {
  const std::optional<uint64_t> c = ceil_to_u64(double(bytes) / t.bytes_per_cycle - 1e-9);
  if (!c) {
    throw std::overflow_error("link transfer of " + std::to_string(bytes) +
                              " bytes: the cycle count does not fit in 64 bits");
  }
  return *c;
}

}  // namespace

LinkTiming link_timing(const PeConfig& cfg) {
  LinkTiming t;
  t.clock_freq_ghz = cfg.clock_freq_ghz;
  t.bytes_per_cycle = cfg.link_bytes_per_cycle();
  t.latency_cycles = cfg.topology.link.latency_cycles;
  return t;
}

uint64_t link_cycles(const LinkTiming& t, uint64_t bytes) {
  const std::optional<uint64_t> c = checked_add(t.latency_cycles, transfer_cycles(t, bytes));
  if (!c) {
    throw std::overflow_error("link transfer of " + std::to_string(bytes) +
                              " bytes: the cycle count does not fit in 64 bits");
  }
  return *c;
}

UcieLink::UcieLink(sc_core::sc_module_name name, const LinkTiming& timing)
    : sc_module(name), in("in"), out("out"), timing_(timing), clock_(timing.clock_freq_ghz) {
  in.register_b_transport(this, &UcieLink::b_transport);
  in.register_nb_transport_fw(this, &UcieLink::nb_transport_fw);
  in.register_transport_dbg(this, &UcieLink::transport_dbg);
  out.register_nb_transport_bw(this, &UcieLink::nb_transport_bw);
}

uint64_t UcieLink::carry(uint64_t arrival_ps, uint64_t bytes) {
  // First fit (busy_calendar.h): a sender that runs ahead books the pipe
  // in the future before another books it earlier.
  const uint64_t transfer = transfer_cycles(timing_, bytes);
  const std::optional<uint64_t> cycles = checked_add(transfer, timing_.latency_cycles);
  if (!cycles) throw std::overflow_error("UCIe link: the cycle count does not fit in 64 bits");
  const auto [start, end] =
      busy_.book(arrival_ps, now_ps(), [&](uint64_t s) { return s + clock_.delay_ps(s, transfer); });
  const uint64_t done = start + clock_.delay_ps(start, *cycles);
  busy_ps_ += end - start;
  ++transactions_;
  bytes_ += bytes;
  if (sink_) sink_(LinkRecord{start, end, bytes});
  return done;
}

void UcieLink::charge_request(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  if (!p.is_write()) return;
  const uint64_t now = now_ps();
  delay = from_ps(carry(now + ps_of(delay), enabled_bytes(p)) - now);
}

void UcieLink::charge_response(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  if (!p.is_read() || !p.is_response_ok()) return;  // no data comes back
  UcieLink& data = reverse_ ? *reverse_ : *this;
  const uint64_t now = now_ps();
  delay = from_ps(data.carry(now + ps_of(delay), enabled_bytes(p)) - now);
}

void UcieLink::b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  charge_request(p, delay);
  out->b_transport(p, delay);
  charge_response(p, delay);
}

tlm::tlm_sync_enum UcieLink::nb_transport_fw(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                             sc_core::sc_time& delay) {
  if (phase == tlm::BEGIN_REQ) charge_request(p, delay);
  const tlm::tlm_sync_enum s = out->nb_transport_fw(p, phase, delay);
  // Answered at once: the response passes back through here now.
  if (s == tlm::TLM_COMPLETED || (s == tlm::TLM_UPDATED && phase == tlm::BEGIN_RESP)) charge_response(p, delay);
  return s;
}

tlm::tlm_sync_enum UcieLink::nb_transport_bw(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                             sc_core::sc_time& delay) {
  if (phase == tlm::BEGIN_RESP) charge_response(p, delay);
  return in->nb_transport_bw(p, phase, delay);
}

unsigned UcieLink::transport_dbg(tlm::tlm_generic_payload& p) { return out->transport_dbg(p); }

}  // namespace kb
