// End to end: composite ops decoded once at dispatch drive
// the tile plan and data mode by role and typed attribute; a gemm op with
// an operand other than a and b (or one twice) is refused at dispatch, in
// timing and data mode, with exit status 1 and no output under its name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/sim_util.h"
#include "tests/test_files.h"

namespace kb {
namespace {

using ::testing::HasSubstr;

namespace fs = std::filesystem;

PeConfig data_config() {
  PeConfig cfg;
  cfg.data_mode = true;
  return cfg;
}

double metric(const RunResult& r, const std::string& name) {
  for (const auto& [n, v] : r.launches.at(0).metrics)
    if (n == name) return v;
  ADD_FAILURE() << "no metric " << name;
  return NAN;
}

OpSpec gemm_spec(OpScope scope, std::vector<NamedOperand> operands, const Tensor& out, int64_t m,
                 int64_t n, int64_t k) {
  OpSpec op;
  op.kind = "gemm";
  op.scope = scope;
  op.operands = std::move(operands);
  op.has_out = true;
  op.out = out.handle;
  op.extra = {{"m", m}, {"n", n}, {"k", k}};
  return op;
}

// c = a @ b by definition, in fp32 from the rounded inputs.
std::vector<float> matmul(const std::vector<float>& a, const std::vector<float>& b, int64_t m,
                          int64_t n, int64_t k) {
  std::vector<float> c(size_t(m * n), 0.0f);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float s = 0.0f;
      for (int64_t x = 0; x < k; ++x) s += a[size_t(i * k + x)] * b[size_t(x * n + j)];
      c[size_t(i * n + j)] = s;
    }
  return c;
}

double max_abs_diff(const std::vector<float>& x, const std::vector<float>& y) {
  if (x.size() != y.size()) return INFINITY;
  double d = 0.0;
  for (size_t i = 0; i < x.size(); ++i) d = std::max(d, std::fabs(double(x[i]) - double(y[i])));
  return d;
}

// Roles come from the operand names: a gemm op listing b before a computes
// a @ b, in the tile loop and as an epilogue op, like the a-first op.
TEST(TypedOpsData, GemmOperandsByRoleNotPosition) {
  const RunResult r = test::run_kernel(
      [](Tl& tl) {
        const int64_t m = 16, n = 24, k = 40;  // a non-square b: a swap could not compute
        const Tensor a = tl.tcm("a", m, k, Dtype::kFp32), b = tl.tcm("b", k, n, Dtype::kFp32);
        const Tensor c1 = tl.tcm("c1", m, n, Dtype::kFp32), c2 = tl.tcm("c2", m, n, Dtype::kFp32);
        const Tensor c3 = tl.tcm("c3", m, n, Dtype::kFp32);
        test::init(tl, {a, b});
        tl.composite("ab", {gemm_spec(OpScope::kTile, {{"a", a.handle}, {"b", b.handle}}, c1, m, n, k)}, {c1});
        tl.composite("ba", {gemm_spec(OpScope::kTile, {{"b", b.handle}, {"a", a.handle}}, c2, m, n, k)}, {c2});
        tl.composite("ba_epilogue", {gemm_spec(OpScope::kEpilogue, {{"b", b.handle}, {"a", a.handle}}, c3, m, n, k)},
                     {c3});
        tl.wait();
        const std::vector<float> ref = matmul(tl.host_read(a), tl.host_read(b), m, n, k);
        tl.metric("ab", max_abs_diff(tl.host_read(c1), ref));
        tl.metric("ba", max_abs_diff(tl.host_read(c2), tl.host_read(c1)));
        tl.metric("ba_epilogue", max_abs_diff(tl.host_read(c3), tl.host_read(c1)));
      },
      data_config());
  ASSERT_TRUE(r.ok) << r.error;
  // fp32 sums of 40 products of values in [-1, 1): the order of the tile
  // loop's K steps is the reference's, but allow for contraction.
  EXPECT_LE(metric(r, "ab"), 1e-5);
  EXPECT_EQ(metric(r, "ba"), 0.0);
  EXPECT_EQ(metric(r, "ba_epilogue"), 0.0);
}

// scale's factor and fill's value: an int extra counts as its value, as a
// float does. (More than one extra of that name has no binary descriptor:
// a kernel error at dispatch, TypedOpsData.DuplicateFactorHasNoDescriptor.)
TEST(TypedOpsData, MathAttributesFromIntOrFloatExtras) {
  const RunResult r = test::run_kernel(
      [](Tl& tl) {
        const Tensor x = tl.tcm("x", 8, 16, Dtype::kFp32);
        const Tensor y = tl.tcm("y", 8, 16, Dtype::kFp32), z = tl.tcm("z", 8, 16, Dtype::kFp32);
        const Tensor f = tl.tcm("f", 8, 16, Dtype::kFp32);
        test::init(tl, {x});
        tl.composite("scale", {math_op(MathOp::kScale, OpScope::kPrologue, y, {x}, {{"factor", int64_t(3)}}),
                               math_op(MathOp::kScale, OpScope::kPrologue, z, {x}, {{"factor", -0.25}}),
                               math_op(MathOp::kFill, OpScope::kEpilogue, f, {}, {{"value", int64_t(-7)}})},
                     {y, z, f});
        tl.wait();
        const std::vector<float> xv = tl.host_read(x), yv = tl.host_read(y), zv = tl.host_read(z);
        std::vector<float> y_ref, z_ref;
        for (float v : xv) {
          y_ref.push_back(v * 3.0f);
          z_ref.push_back(v * -0.25f);
        }
        tl.metric("y", max_abs_diff(yv, y_ref));
        tl.metric("z", max_abs_diff(zv, z_ref));
        tl.metric("f", max_abs_diff(tl.host_read(f), std::vector<float>(8 * 16, -7.0f)));
      },
      data_config());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(metric(r, "y"), 0.0);
  EXPECT_EQ(metric(r, "z"), 0.0);
  EXPECT_EQ(metric(r, "f"), 0.0);
}

TEST(TypedOpsData, DuplicateFactorHasNoDescriptor) {
  RunSpec spec;
  spec.config = data_config();
  spec.launches = {{"dup", [](Tl& tl) {
        const Tensor x = tl.tcm("x", 8, 16, Dtype::kFp32), z = tl.tcm("z", 8, 16, Dtype::kFp32);
        test::init(tl, {x});
        tl.composite("scale", {math_op(MathOp::kScale, OpScope::kPrologue, z, {x},
                                       {{"factor", -0.25}, {"factor", 9.0}})},
                     {z});
      }}};
  const RunResult r = run_isolated(spec);
  ASSERT_FALSE(r.ok);
  EXPECT_THAT(r.error, HasSubstr("no binary descriptor: scale: extra 'factor' given twice"));
  // Refused at dispatch, before any time is charged.
  ASSERT_EQ(r.launches.size(), 1u);
  EXPECT_EQ(r.launches[0].commands, 0u);
  EXPECT_EQ(r.launches[0].dispatch_cycles_charged, 0u);
}

// --- regression: gemm ops with another operand, or one twice (replay input)

const std::string kData = "tests/data/replay/";
using kb::test::line_of;

struct Case {
  const char* file;
  int line;
  const char* what;
};

TEST(TypedOpsCli, GemmOpOperandsOtherThanAAndBAreRefusedAtDispatch) {
  const Case cases[] = {
      {"gemm_op_unexpected_operand.stream", 15,
       "kernel 'extra_operand', command #1 CompositeCmd 'g' op 0 (gemm, tile): unexpected operand "
       "'x' (a gemm op takes a and b)"},
      {"gemm_op_duplicate_operand.stream", 14,
       "kernel 'twice', command #1 CompositeCmd 'g' op 0 (gemm, tile): duplicate operand 'a'"},
  };
  for (const Case& c : cases) {
    for (bool data : {false, true}) {
      SCOPED_TRACE(std::string(c.file) + (data ? " --data" : " timing"));
      test::TempDir dir;
      const std::string json = dir.file("summary.json");
      const std::string path = kData + c.file;
      std::vector<std::string> args = {"replay", path, "--json", json};
      if (data) args.push_back("--data");
      const test::CliResult r = test::run_program(KERNBENCH_BIN, args);
      EXPECT_EQ(r.exit_code, 1) << r.err;
      EXPECT_EQ(r.err, "kernbench: replay '" + path + "' failed: " + path + ":" + std::to_string(c.line) +
                           ": " + c.what + " (" + line_of(path, c.line) + ")\n");
      EXPECT_FALSE(fs::exists(json));
    }
  }
}

}  // namespace
}  // namespace kb
