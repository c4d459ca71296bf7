// PE_MATH: the vector unit for elementwise ops and reductions.
// Timing: math_cycles() = pipeline latency + ceil(elements / lanes) x op
// cost (elementwise or transcendental), + ceil(log2(row length)) tree
// depth for reductions.
// Data: every MathOp over TCM tensors, in fp32; a composite's tile math
// op works on its output block.
#pragma once

#include <array>

#include "models/pe/engines/engine_timing.h"
#include "models/pe/engines/stage_engine.h"

namespace kb {

uint64_t math_cycles(const PeConfig& cfg, MathOp op, uint64_t elements, int64_t row_len);

// math_cycles() with each op's figures looked up once per configuration:
// PE_MATH runs it per stage.
class MathTiming {
 public:
  explicit MathTiming(const PeConfig& cfg);
  uint64_t cycles(MathOp op, uint64_t elements, int64_t row_len) const {
    const char* what = "MATH";
    const Op& o = ops_[size_t(op)];
    uint64_t c = cycles_add(latency_, cycles_mul(ceil_div(elements, lanes_), o.per_vector, what), what);
    if (o.reduction && row_len > 1) {
      // ceil(log2(n)) exactly, in integers: the bit width of n - 1.
      c = cycles_add(c, uint64_t(64 - __builtin_clzll(uint64_t(row_len - 1))), what);
    }
    return c;
  }

 private:
  struct Op {
    uint64_t per_vector = 0;  // elementwise or transcendental cycles
    bool reduction = false;
  };
  uint64_t latency_, lanes_;
  std::array<Op, kNumMathOps> ops_;
};

class PeMath : public StageEngine {
 public:
  PeMath(sc_core::sc_module_name name, const PeConfig& cfg) : StageEngine(name, cfg), timing_(cfg) {}

 protected:
  uint64_t cycles_of(const Stage& s) const override { return timing_.cycles(s.op, s.elements, s.row_len); }
  void compute(const Stage& s, CommandData& d, DataContext& ctx) override;

 private:
  const MathTiming timing_;  // of cfg_, which does not change once built
};

}  // namespace kb
