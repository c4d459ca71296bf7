// docs/cost-model.md D1/D5/D7/D8 as pure functions: no simulation needed.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <random>
#include <vector>

#include "models/isa/cost_model.h"
#include "models/util/checked.h"

namespace kb {
namespace {

CompositeCmd composite_of_bytes_at_least(uint64_t target) {
  CompositeCmd c;
  c.name = "big";
  while (c.logical_bytes() < target) {
    OpSpec op;
    op.kind = "add";
    op.operands = {{"src_a", 1}, {"src_b", 2}};
    op.has_out = true;
    op.out = 3;
    c.ops.push_back(op);
  }
  return c;
}

TEST(CostModel, FixedDependsOnTypeOnly) {  // docs/cost-model.md D8
  CostModelConfig cm;
  cm.fixed_per_cmd_cycles = 77;
  cm.fixed_per_single_op_cmd_cycles = 5;
  EXPECT_EQ(fixed_cycles(DmaReadCmd{}, cm), 5u);
  EXPECT_EQ(fixed_cycles(DmaWriteCmd{}, cm), 5u);
  EXPECT_EQ(fixed_cycles(GemmCmd{}, cm), 5u);
  EXPECT_EQ(fixed_cycles(MathCmd{}, cm), 5u);
  EXPECT_EQ(fixed_cycles(CopyCmd{}, cm), 5u);
  EXPECT_EQ(fixed_cycles(CompositeCmd{}, cm), 77u);
}

TEST(CostModel, FormulaIsFixedPlusBytesTimesR) {  // docs/cost-model.md D1
  for (double r : {0.0, 0.03125, 0.0625, 0.25, 1.0 / 3.0}) {
    CostModelConfig cm;
    cm.byte_cycles_recip = r;
    for (const Command& c : {Command{DmaReadCmd{}}, Command{GemmCmd{}}, Command{MathCmd{}},
                             Command{composite_of_bytes_at_least(300)}}) {
      const DispatchCost d = dispatch_cost(c, cm);
      const double expected = double(fixed_cycles(c, cm)) + logical_bytes(c) * r;
      EXPECT_DOUBLE_EQ(d.exact_cycles, expected);
      EXPECT_EQ(d.charged_cycles, uint64_t(std::ceil(expected - 1e-9)));
      EXPECT_LE(std::abs(double(d.charged_cycles) - expected), 1.0);
    }
  }
}

TEST(CostModel, AdrAnchorIs43Point375Cycles) {  // docs/cost-model.md D3 verification
  CompositeCmd c;
  OpSpec op;
  op.kind = "gemm";
  op.operands = {{"a", 1}, {"b", 2}};
  op.has_out = true;
  op.out = 3;
  op.extra = {{"m", int64_t(1)}, {"k", int64_t(1)}, {"n", int64_t(1)}};
  c.ops = {op};
  c.rw_handles = {3};
  const DispatchCost d = dispatch_cost(c, CostModelConfig{});
  EXPECT_DOUBLE_EQ(d.exact_cycles, 43.375);
  EXPECT_EQ(d.charged_cycles, 44u);
}

TEST(CostModel, CpuOverheadBypassesTheFormula) {  // docs/cost-model.md D5, TR4
  CostModelConfig cm;
  cm.fixed_per_cmd_cycles = 1000;
  cm.fixed_per_single_op_cmd_cycles = 1000;
  cm.byte_cycles_recip = 10;
  for (uint64_t n : {0u, 1u, 13u, 100000u}) {
    const DispatchCost d = dispatch_cost(CpuOverheadCmd{n}, cm);
    EXPECT_EQ(d.charged_cycles, n);
    EXPECT_EQ(d.exact_cycles, double(n));
  }
}

// The charged cycles are ceil(exact - 1e-9) however they are computed: a
// cast below 2^53, std::ceil above it.
TEST(CostModel, ChargedIsTheCeilingAcrossTheRange) {
  MathCmd m;
  m.operands = {1, 2};
  for (uint64_t fixed : {uint64_t(0), uint64_t(1), uint64_t(8), uint64_t(1) << 52, (uint64_t(1) << 53) - 1,
                         uint64_t(1) << 53, uint64_t(1) << 60}) {
    for (double r : {0.0, 0.001, 0.0625, 0.1, 1.0 / 3.0, 0.7, 2.5}) {
      CostModelConfig cm;
      cm.fixed_per_single_op_cmd_cycles = fixed;
      cm.byte_cycles_recip = r;
      const DispatchCost d = dispatch_cost(m, cm);
      EXPECT_EQ(d.charged_cycles, uint64_t(std::ceil(d.exact_cycles - 1e-9))) << fixed << " " << r;
      EXPECT_GE(double(d.charged_cycles), d.exact_cycles - 1e-9) << fixed << " " << r;
    }
  }
}

// ceil_to_u64 (models/util/checked.h) is std::ceil wherever that fits in
// 64 bits, through its cast below 2^53 and std::ceil above; nullopt for
// what does not fit (a ceiling below zero, NaN, 2^64 and up).
TEST(Checked, CeilToU64IsStdCeil) {
  std::mt19937_64 rng(3);
  std::vector<double> xs = {0.0, -0.0, 1e-300, 0.5, 1.0, 1.0 - 1e-16, 2.0000000000000004, 4503599627370495.5,
                            9007199254740991.0, 9007199254740992.0, 9007199254740993.0, 1e19};
  for (int i = 0; i < 100000; ++i) {
    const double scale = std::ldexp(1.0, int(rng() % 64));
    xs.push_back(double(rng() >> 11) / double(uint64_t(1) << 53) * scale);
  }
  for (double x : xs) {
    const std::optional<uint64_t> c = ceil_to_u64(x);
    ASSERT_TRUE(c.has_value()) << x;
    EXPECT_EQ(double(*c), std::ceil(x)) << x;
  }
  EXPECT_EQ(ceil_to_u64(-1e-9), std::optional<uint64_t>(0));  // ceil is -0: a zero-byte transfer's cycles
  for (double x : {-1.0, std::nan(""), 18446744073709551616.0, 1e30}) EXPECT_FALSE(ceil_to_u64(x)) << x;
}

TEST(CostModel, IntegralValuesAreNotRoundedUp) {
  CostModelConfig cm;
  cm.byte_cycles_recip = 0.1;  // 20 bytes x 0.1 is 2.0000000000000004 in binary
  EXPECT_EQ(dispatch_cost(DmaReadCmd{}, cm).charged_cycles, 8u + 2u);
}

TEST(CompositeCap, OverTheCapThrowsNamingCompositeSizeAndCap) {  // docs/cost-model.md D7
  CostModelConfig cm;
  const CompositeCmd c = composite_of_bytes_at_least(cm.max_composite_logical_bytes + 1);
  try {
    check_composite_cap(c, cm, "my_kernel");
    FAIL() << "no exception";
  } catch (const CompositeTooLarge& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("my_kernel"), std::string::npos) << m;
    EXPECT_NE(m.find("'big'"), std::string::npos) << m;
    EXPECT_NE(m.find(std::to_string(c.logical_bytes())), std::string::npos) << m;
    EXPECT_NE(m.find("1024"), std::string::npos) << m;
  }
}

TEST(CompositeCap, AtAndBelowTheCapPass) {
  CostModelConfig cm;
  const CompositeCmd c = composite_of_bytes_at_least(200);
  cm.max_composite_logical_bytes = c.logical_bytes();
  EXPECT_NO_THROW(check_composite_cap(c, cm, "k"));
  cm.max_composite_logical_bytes = c.logical_bytes() + 1;
  EXPECT_NO_THROW(check_composite_cap(c, cm, "k"));
  cm.max_composite_logical_bytes = c.logical_bytes() - 1;
  EXPECT_THROW(check_composite_cap(c, cm, "k"), CompositeTooLarge);
}

}  // namespace
}  // namespace kb
