// PE_GEMM: the R x C systolic array.
// Timing: gemm_cycles() = ceil(m/R) x ceil(n/C) x k + R + C (fill and
// drain); a single-op GemmCmd stage also fetches its operands from TCM and
// drains its result serially (gemm_stage_cycles), where a composite
// pipelines those as FETCH/STORE stages on PE_TCM.
// Data: out (+)= a @ b in fp32, k ascending; a composite's tile GEMM adds
// its K slice into the output block's accumulator (command_data.h).
#pragma once

#include "models/pe/engines/stage_engine.h"

namespace kb {

uint64_t gemm_cycles(const PeConfig& cfg, int64_t m, int64_t n, int64_t k);
uint64_t gemm_stage_cycles(const PeConfig& cfg, const Stage& s);

class PeGemm : public StageEngine {
 public:
  PeGemm(sc_core::sc_module_name name, const PeConfig& cfg) : StageEngine(name, cfg) {}

 protected:
  uint64_t cycles_of(const Stage& s) const override { return gemm_stage_cycles(cfg_, s); }
  void compute(const Stage& s, CommandData& d, DataContext& ctx) override;
};

}  // namespace kb
