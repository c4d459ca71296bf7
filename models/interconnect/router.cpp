#include "models/interconnect/router.h"

#include <algorithm>

namespace kb {

Router::Router(sc_core::sc_module_name name, std::vector<Region> regions)
    : sc_module(name), in("in"), out("out"), regions_(std::move(regions)) {
  out.init(regions_.size(), [this](const char*, size_t i) {
    return new tlm_utils::simple_initiator_socket_tagged<Router>(regions_[i].name.c_str());
  });
  in.register_b_transport(this, &Router::b_transport);
  in.register_nb_transport_fw(this, &Router::nb_transport_fw);
  in.register_transport_dbg(this, &Router::transport_dbg);
  in.register_get_direct_mem_ptr(this, &Router::get_direct_mem_ptr);
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].register_nb_transport_bw(this, &Router::nb_transport_bw, int(i));
    out[i].register_invalidate_direct_mem_ptr(this, &Router::invalidate_direct_mem_ptr, int(i));
  }
}

void Router::set_latency(double clock_freq_ghz, LatencyCycles cycles) {
  clock_.emplace(clock_freq_ghz);
  latency_ = std::move(cycles);
}

void Router::add_latency(int from, int to, sc_core::sc_time& delay) const {
  if (!latency_) return;  // the default: no time (the PE bus, PeTop)
  const uint64_t n = latency_(from, to);
  if (n != 0) delay += clock_->cycles_from(delay, n);
}

int Router::route(const tlm::tlm_generic_payload& p) const {
  for (size_t i = 0; i < regions_.size(); ++i) {
    // A streaming burst touches [address, address + streaming width) only
    // (IEEE 1666 14.15): a FIFO port (PE_IPC's DATA) takes long bursts.
    const unsigned w = p.get_streaming_width();
    const unsigned n = w && w < p.get_data_length() ? w : p.get_data_length();
    if (regions_[i].range.contains(p.get_address(), n)) return int(i);
  }
  return -1;
}

void Router::b_transport(int from, tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  const int to = route(p);
  if (to < 0) {
    ++address_errors_;
    p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  add_latency(from, to, delay);
  out[size_t(to)]->b_transport(p, delay);
}

Router::Open* Router::find(const tlm::tlm_generic_payload& p) {
  for (Open& o : open_)
    if (o.p == &p) return &o;
  return nullptr;
}

void Router::close(const tlm::tlm_generic_payload& p) {
  if (!open_.empty() && open_.back().p == &p) {  // the common case: completed at once
    open_.pop_back();
    return;
  }
  open_.erase(std::remove_if(open_.begin(), open_.end(), [&](const Open& o) { return o.p == &p; }),
              open_.end());
}

tlm::tlm_sync_enum Router::nb_transport_fw(int from, tlm::tlm_generic_payload& p,
                                           tlm::tlm_phase& phase, sc_core::sc_time& delay) {
  int to;
  if (phase == tlm::BEGIN_REQ) {
    to = route(p);
    if (to < 0) {
      ++address_errors_;
      p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return tlm::TLM_COMPLETED;
    }
    open_.push_back({&p, from, to});
    add_latency(from, to, delay);
  } else {
    const Open* o = find(p);
    if (!o) {
      SC_REPORT_ERROR(name(), "nb_transport_fw: a phase for a transaction that is not open");
      return tlm::TLM_COMPLETED;
    }
    to = o->to;
  }
  const tlm::tlm_sync_enum s = out[size_t(to)]->nb_transport_fw(p, phase, delay);
  if (s == tlm::TLM_COMPLETED || phase == tlm::END_RESP) close(p);
  return s;
}

tlm::tlm_sync_enum Router::nb_transport_bw(int to, tlm::tlm_generic_payload& p,
                                           tlm::tlm_phase& phase, sc_core::sc_time& delay) {
  (void)to;
  const Open* o = find(p);
  if (!o) {
    SC_REPORT_ERROR(name(), "nb_transport_bw: a phase for a transaction that is not open");
    return tlm::TLM_COMPLETED;
  }
  const int from = o->from;
  const tlm::tlm_sync_enum s = in[from]->nb_transport_bw(p, phase, delay);
  if (s == tlm::TLM_COMPLETED || phase == tlm::END_RESP) close(p);
  return s;
}

unsigned Router::transport_dbg(int from, tlm::tlm_generic_payload& p) {
  (void)from;
  const int to = route(p);
  return to < 0 ? 0 : out[size_t(to)]->transport_dbg(p);
}

bool Router::get_direct_mem_ptr(int from, tlm::tlm_generic_payload& p, tlm::tlm_dmi& dmi) {
  (void)from;
  const int to = route(p);
  if (to < 0) return false;
  const bool granted = out[size_t(to)]->get_direct_mem_ptr(p, dmi);
  const MemoryRange& r = regions_[size_t(to)].range;
  dmi.set_start_address(std::max<sc_dt::uint64>(dmi.get_start_address(), r.base));
  if (r.end != 0) dmi.set_end_address(std::min<sc_dt::uint64>(dmi.get_end_address(), r.end - 1));
  return granted;
}

void Router::invalidate_direct_mem_ptr(int to, sc_dt::uint64 start, sc_dt::uint64 end) {
  (void)to;
  for (unsigned i = 0; i < in.size(); ++i) in[i]->invalidate_direct_mem_ptr(start, end);
}

}  // namespace kb
