// Common shell of the PE's engines: a target socket `in` that receives one
// stage at a time from PE_SCHEDULER (the scheduler never issues a second
// stage to a busy engine) and an execute() that returns the stage's time.
//
// Loosely timed (TLM-2.0 LT, temporal decoupling): b_transport annotates the
// stage's duration onto `delay` instead of waiting, and PE_SCHEDULER keeps
// the engine busy until then. No thread switch per stage.
#pragma once

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "models/config/pe_config.h"
#include "models/pe/clock.h"
#include "models/pe/data_exec.h"
#include "models/pe/stage.h"

namespace kb {

class StageEngine : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<StageEngine> in;  // stages from PE_SCHEDULER

  StageEngine(sc_core::sc_module_name name, const PeConfig& cfg);
  // Data mode: compute the values of every stage (data_exec.h).
  void set_data(DataContext* data) { data_ = data; }

 protected:
  // The stage's duration. Default: stage_cycles() (engine_timing.h).
  virtual sc_core::sc_time execute(const Stage& s);
  const PeConfig& cfg_;
  Clock clock_;
  DataContext* data_ = nullptr;

 private:
  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
};

}  // namespace kb
