// PE_GEMM: the R x C systolic array; a stage takes gemm_cycles().
#pragma once

#include "models/pe/stage_engine.h"

namespace kb {

class PeGemm : public StageEngine {
 public:
  PeGemm(sc_core::sc_module_name name, const PeConfig& cfg) : StageEngine(name, cfg) {}
};

}  // namespace kb
