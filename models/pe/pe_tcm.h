// PE_TCM: the tightly coupled SRAM's engine port. Executes FETCH (TCM ->
// engine) and STORE (engine -> TCM) stages of composite tile plans in
// tcm_cycles(). DMA traffic uses the SRAM's separate DMA port, so it does
// not contend with FETCH/STORE (a dual-ported SRAM).
#pragma once

#include "models/pe/stage_engine.h"

namespace kb {

class PeTcm : public StageEngine {
 public:
  PeTcm(sc_core::sc_module_name name, const PeConfig& cfg) : StageEngine(name, cfg) {}
};

}  // namespace kb
