// UcieLink: one direction of a UCIe link between neighbouring cubes.
// `in` comes from the sending cube's mesh router, `out` goes to
// the receiving cube's. Every transaction is forwarded unchanged
// (b_transport, nb_transport both ways, transport_dbg); DMI is not offered
// (a pointer would bypass the link's time).
//
// Timing (loosely timed): the link is one pipe of bytes_per_cycle =
// topology.link.gbps / clock_freq_ghz. A burst of b bytes (its enabled
// bytes) arriving at t occupies the pipe for ceil(b / bytes_per_cycle)
// cycles from the first time at or after t that the pipe is free that long
// (bursts are booked in the order they are called, which with annotated
// delays need not be the order of t: an earlier burst takes an earlier
// gap), and is delivered, store-and-forward, latency_cycles after its last
// byte (PE clock). So one stream sees latency + ceil(b / bytes_per_cycle)
// per burst, bursts pipeline over hops, and two streams sharing a link
// each take about twice as long. The time is charged on the direction the data travels: a write's
// bytes cross this link on the way in (before the request is forwarded); a
// read's bytes come back over the reverse direction (set_reverse), charged
// when the read's response returns through this link. Latency is charged
// once per hop, on the data (the request of a read and the response of a
// write are not timed), like the HBM's first-byte latency.
#pragma once

#include <cstdint>
#include <functional>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "models/config/pe_config.h"
#include "models/util/busy_calendar.h"
#include "models/util/clock.h"

namespace kb {

struct LinkTiming {
  double clock_freq_ghz = 1.0;  // the cycle the figures below are counted in
  double bytes_per_cycle = 128.0;
  uint64_t latency_cycles = 20;
};

// topology.link in the PE clock's cycles.
LinkTiming link_timing(const PeConfig& cfg);

// latency + ceil(bytes / bytes_per_cycle), in cycles: one burst over one
// idle hop. Throws std::overflow_error when it does not fit in 64 bits.
uint64_t link_cycles(const LinkTiming& t, uint64_t bytes);

// One burst on the link, for an op-log or trace writer: it occupied the
// pipe from start_ps to end_ps (end excludes the latency).
struct LinkRecord {
  uint64_t start_ps = 0, end_ps = 0, bytes = 0;
};

class UcieLink : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<UcieLink> in;
  tlm_utils::simple_initiator_socket<UcieLink> out;

  UcieLink(sc_core::sc_module_name name, const LinkTiming& timing);

  // The other direction of the same link: it carries this direction's read
  // data back. Unset, a read's data is charged to this direction.
  void set_reverse(UcieLink* reverse) { reverse_ = reverse; }
  void on_record(std::function<void(const LinkRecord&)> sink) { sink_ = std::move(sink); }

  // Bursts whose bytes crossed this direction, their bytes, and the time the
  // pipe was transferring (the sum of its bookings, in ps).
  uint64_t transactions() const { return transactions_; }
  uint64_t bytes() const { return bytes_; }
  uint64_t busy_ps() const { return busy_ps_; }
  const LinkTiming& timing() const { return timing_; }

  // Puts `bytes` on the pipe at `arrival_ps`; returns when they are
  // delivered (ps). Books the pipe and updates the counters.
  uint64_t carry(uint64_t arrival_ps, uint64_t bytes);

 private:
  void b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  unsigned transport_dbg(tlm::tlm_generic_payload& p);
  // A write's bytes, before it is forwarded; a read's, once answered.
  void charge_request(tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  void charge_response(tlm::tlm_generic_payload& p, sc_core::sc_time& delay);

  const LinkTiming timing_;
  Clock clock_;
  UcieLink* reverse_ = nullptr;
  std::function<void(const LinkRecord&)> sink_;
  BusyCalendar busy_;  // the transfers booked ahead
  uint64_t transactions_ = 0, bytes_ = 0, busy_ps_ = 0;
};

}  // namespace kb
