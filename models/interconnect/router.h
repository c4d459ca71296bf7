// An address-decoding interconnect: N initiators on `in`, one initiator
// socket per region on `out`. The first region that holds a transaction's
// whole address range (up to the streaming width) takes it; addresses pass unchanged (the map is
// global, models/mem/address_map.h). A transaction no region holds gets
// TLM_ADDRESS_ERROR_RESPONSE. b_transport, nb_transport (both directions,
// the response routed back to the initiator that sent the request),
// transport_dbg and DMI requests are forwarded; a DMI region is clipped to
// the routed region and invalidations go to every initiator. The router
// adds no time unless set_latency() gives it a latency per (initiator,
// region) (a cube's interconnect), added to the annotated
// delay of every request it forwards (b_transport, nb BEGIN_REQ).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>

#include "models/mem/memory_access.h"
#include "models/util/clock.h"

namespace kb {

class Router : public sc_core::sc_module {
 public:
  struct Region {
    std::string name;   // the out socket's name
    MemoryRange range;  // {0, 0}: every address (a default route, put last)
  };

  tlm_utils::multi_passthrough_target_socket<Router> in;
  sc_core::sc_vector<tlm_utils::simple_initiator_socket_tagged<Router>> out;  // out[i]: regions[i]

  // Cycles a request from initiator `from` (in's binding order) to region
  // `region` takes, in a clock of `clock_freq_ghz`.
  using LatencyCycles = std::function<uint64_t(int from, int region)>;

  Router(sc_core::sc_module_name name, std::vector<Region> regions);
  uint64_t address_errors() const { return address_errors_; }
  void set_latency(double clock_freq_ghz, LatencyCycles cycles);

 protected:
  // The out socket a request takes; -1: no region. A subclass may decode
  // differently (models/mesh/mesh_router.h routes by destination cube).
  virtual int route(const tlm::tlm_generic_payload& p) const;

 private:
  void add_latency(int from, int to, sc_core::sc_time& delay) const;
  void b_transport(int from, tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_fw(int from, tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_bw(int to, tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  unsigned transport_dbg(int from, tlm::tlm_generic_payload& p);
  bool get_direct_mem_ptr(int from, tlm::tlm_generic_payload& p, tlm::tlm_dmi& dmi);
  void invalidate_direct_mem_ptr(int to, sc_dt::uint64 start, sc_dt::uint64 end);

  const std::vector<Region> regions_;
  // nb transactions under way: which initiator and which region (few at a
  // time: a linear list beats a hash map here).
  struct Open {
    const tlm::tlm_generic_payload* p;
    int from, to;
  };
  std::vector<Open> open_;
  uint64_t address_errors_ = 0;
  std::optional<Clock> clock_;
  LatencyCycles latency_;
  Open* find(const tlm::tlm_generic_payload& p);
  void close(const tlm::tlm_generic_payload& p);
};

}  // namespace kb
