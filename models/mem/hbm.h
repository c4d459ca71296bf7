// The PE's share of HBM: a TLM target that adds latency + transfer time to
// the annotated delay of each access (pseudo_channels x channel_gbps x efficiency). Data mode
// will add a backing store here.
#pragma once

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "models/config/pe_config.h"
#include "models/pe/clock.h"

namespace kb {

class Hbm : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<Hbm> in;  // from PE_DMA

  Hbm(sc_core::sc_module_name name, const PeConfig& cfg);

 private:
  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
  const PeConfig& cfg_;
  Clock clock_;
};

}  // namespace kb
