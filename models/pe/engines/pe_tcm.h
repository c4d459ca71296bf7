// PE_TCM: the tightly coupled SRAM. Two ports:
// - `in`: its engine port, which executes FETCH (TCM -> engine) and STORE
//   (engine -> TCM) stages of composite tile plans in tcm_cycles() =
//   latency + ceil(bytes / tcm.bytes_per_cycle). In data mode a STORE
//   writes its output block's accumulator (to staging when the output
//   lives in HBM, command_data.h); FETCH moves no values.
// - `sram`: the memory itself, a TLM target for the PE-local TCM window
//   [0, tcm.size_bytes) through the PE's bus. Accesses complete at once
//   (TLM_COMPLETED, no delay): their time is in the stage formulas of the
//   engines that make them. DMA traffic uses it too without contending
//   with FETCH/STORE (a dual-ported SRAM). Storage as HBM's: none in timing
//   mode, values in data mode; debug transport serves them.
#pragma once

#include <tlm_utils/simple_target_socket.h>

#include "models/mem/memory_access.h"
#include "models/mem/sparse_memory.h"
#include "models/pe/engines/stage_engine.h"

namespace kb {

uint64_t tcm_cycles(const PeConfig& cfg, uint64_t bytes);

class PeTcm : public StageEngine {
 public:
  tlm_utils::simple_target_socket<PeTcm> sram;

  PeTcm(sc_core::sc_module_name name, const PeConfig& cfg);
  uint64_t stored_bytes() const { return store_.bytes(); }

 protected:
  uint64_t cycles_of(const Stage& s) const override { return tcm_cycles(cfg_, s.bytes); }
  void compute(const Stage& s, CommandData& d, DataContext& ctx) override;

 private:
  void b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  unsigned transport_dbg(tlm::tlm_generic_payload& p);
  const MemoryRange range_;
  SparseMemory store_;
  SparseMemory* storage_;  // null in timing mode
};

}  // namespace kb
