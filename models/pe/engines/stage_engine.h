// Common shell of the PE's engines: a target socket `in` that receives one
// stage at a time from PE_SCHEDULER (the scheduler never issues a second
// stage to a busy engine), and in data mode a `data` socket through which
// the engine reads and writes TCM (data_port.h).
//
// Protocol (TLM-2.0 base protocol, non-blocking, so that PE_SCHEDULER's
// methods may call it): a stage is a BEGIN_REQ on `in`. An engine that
// knows the stage's duration at once answers TLM_COMPLETED with the
// duration added to the delay (loosely timed: no thread switch per stage;
// PE_SCHEDULER keeps the engine busy until then). PE_DMA, when its memory
// answers later, returns TLM_ACCEPTED and sends BEGIN_RESP on the backward
// path when its transfer ends.
//
// The payload is a WRITE of the stage's identity (StageWord) to the
// engine's stage register; the StageExtension carries the decoded stage.
#pragma once

#include <optional>
#include <string>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "models/config/pe_config.h"
#include "models/isa/pe_place.h"
#include "models/util/clock.h"
#include "models/pe/stage/command_data.h"
#include "models/pe/engines/data_port.h"
#include "models/pe/stage/stage.h"

namespace kb {

class StageEngine : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<StageEngine> in;        // stages from PE_SCHEDULER
  tlm_utils::simple_initiator_socket<StageEngine> data;   // data mode: TCM values

  StageEngine(sc_core::sc_module_name name, const PeConfig& cfg);
  // Data mode: the engines compute values, naming tensors through `table`.
  void set_data(const TensorTable* table) { table_ = table; }
  // Where the engine's PE sits; an engine that orders its work among the
  // PEs' (the instant calendar) or names its PE overrides it.
  virtual void set_place(const PePlace& place) { (void)place; }
  // The engine's own path to memory past the TCM (the PE binds it to its
  // bus), or null: most engines reach only the TCM, through `data`.
  virtual tlm::tlm_initiator_socket<32>* mem_port() { return nullptr; }

 protected:
  // The stage's cycles: the engine's formula.
  virtual uint64_t cycles_of(const Stage& s) const = 0;
  // Data mode: the engine's values for the stage (nothing by default).
  virtual void compute(const Stage& s, CommandData& d, DataContext& ctx) { (void)s, (void)d, (void)ctx; }
  // Runs the stage: its duration, or nullopt when the engine will call
  // finish() later. Default: cycles_of(), and in data mode compute().
  virtual std::optional<sc_core::sc_time> execute(const Stage& s, CommandData* d);
  // Ends the stage under way `delay` from now (BEGIN_RESP on `in`); an
  // error response when `ok` is false.
  void finish(const sc_core::sc_time& delay, bool ok);
  bool data_mode() const { return table_ != nullptr; }
  DataContext context() { return DataContext{port_, *table_}; }

  const PeConfig& cfg_;
  Clock clock_;
  std::string error_;  // why the last late stage failed (finish(.., false))
  DataPort port_;
  const TensorTable* table_ = nullptr;

 private:
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& payload, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  tlm::tlm_generic_payload* pending_ = nullptr;  // a stage that finishes later
};

}  // namespace kb
