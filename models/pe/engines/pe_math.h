// PE_MATH: the vector unit for elementwise ops and reductions.
// Timing: math_cycles() = pipeline latency + ceil(elements / lanes) x op
// cost (elementwise or transcendental), + ceil(log2(row length)) tree
// depth for reductions.
// Data: every MathOp over TCM tensors, in fp32; a composite's tile math
// op works on its output block.
#pragma once

#include "models/pe/engines/stage_engine.h"

namespace kb {

uint64_t math_cycles(const PeConfig& cfg, MathOp op, uint64_t elements, int64_t row_len);

class PeMath : public StageEngine {
 public:
  PeMath(sc_core::sc_module_name name, const PeConfig& cfg) : StageEngine(name, cfg) {}

 protected:
  uint64_t cycles_of(const Stage& s) const override {
    return math_cycles(cfg_, s.op, s.elements, s.row_len);
  }
  void compute(const Stage& s, CommandData& d, DataContext& ctx) override;
};

}  // namespace kb
