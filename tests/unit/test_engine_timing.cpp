// PE_MATH's per-op figures looked up once (MathTiming)
// give every op the cycles of docs/architecture.md's formula: pipeline latency +
// ceil(elements / lanes) x the op's cycles per vector (+ ceil(log2(row
// length)) for reductions), the reference computed here in 128 bits; a
// count past 64 bits is an error, not a wrapped figure.
#include "models/pe/engines/pe_math.h"

#include <gtest/gtest.h>

#include "models/isa/tensor_table.h"

namespace kb {
namespace {

unsigned __int128 reference(const PeConfig& cfg, MathOp op, uint64_t elements, int64_t row_len) {
  const uint64_t per = math_op_is_transcendental(op) ? cfg.math.transcendental_cycles
                                                     : cfg.math.elementwise_cycles;
  const uint64_t vectors = elements / cfg.math.lanes + (elements % cfg.math.lanes != 0);
  unsigned __int128 c = cfg.math.pipeline_latency_cycles + (unsigned __int128)vectors * per;
  if (math_op_is_reduction(op) && row_len > 1) {
    int depth = 0;  // ceil(log2(row_len)), by doubling
    while ((int64_t(1) << depth) < row_len) ++depth;
    c += uint64_t(depth);
  }
  return c;
}

TEST(MathTiming, EveryOpMatchesTheFormula) {
  uint64_t state = 7;
  auto rnd = [&](uint64_t n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (state >> 33) % n;
  };
  int checked = 0;
  for (int c = 0; c < 50; ++c) {
    PeConfig cfg;
    cfg.math.lanes = 1 + rnd(100);
    cfg.math.pipeline_latency_cycles = rnd(20);
    cfg.math.elementwise_cycles = 1 + rnd(5);
    cfg.math.transcendental_cycles = 1 + rnd(9);
    const MathTiming timing(cfg);
    for (int o = 0; o < kNumMathOps; ++o) {
      const MathOp op = MathOp(o);
      for (int i = 0; i < 20; ++i) {
        const uint64_t elements = rnd(5) ? rnd(100000) : (uint64_t(1) << 40) + rnd(1000);
        const int64_t row_len = int64_t(rnd(3) ? rnd(5000) : rnd(3));
        const unsigned __int128 want = reference(cfg, op, elements, row_len);
        ASSERT_EQ(timing.cycles(op, elements, row_len), uint64_t(want)) << to_string(op);
        ASSERT_EQ(math_cycles(cfg, op, elements, row_len), uint64_t(want)) << to_string(op);
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 50 * kNumMathOps * 20);
}

TEST(MathTiming, PastSixtyFourBitsIsAnError) {
  PeConfig cfg;
  cfg.math.lanes = 1;
  cfg.math.transcendental_cycles = 4;
  const MathTiming timing(cfg);
  try {
    timing.cycles(MathOp::kExp, UINT64_MAX / 2, 0);
    FAIL();
  } catch (const KernelError& e) {
    EXPECT_STREQ(e.what(), "MATH: the cycle count does not fit in 64 bits");
  }
  // The latency added last can overflow too.
  cfg.math.pipeline_latency_cycles = 2;
  EXPECT_THROW(MathTiming(cfg).cycles(MathOp::kAdd, UINT64_MAX / cfg.math.elementwise_cycles, 0), KernelError);
  EXPECT_EQ(MathTiming(cfg).cycles(MathOp::kAdd, UINT64_MAX - 2, 0), UINT64_MAX);
}

}  // namespace
}  // namespace kb
