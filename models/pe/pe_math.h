// PE_MATH: the vector unit for elementwise ops and reductions; a stage
// takes math_cycles().
#pragma once

#include "models/pe/stage_engine.h"

namespace kb {

class PeMath : public StageEngine {
 public:
  PeMath(sc_core::sc_module_name name, const PeConfig& cfg) : StageEngine(name, cfg) {}
};

}  // namespace kb
