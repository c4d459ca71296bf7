// ADR-0064 Test Requirements checked on the running model: #1 formula
// preservation, #3 YAML override, #4 tl.cycles bypass, #5 no double count,
// #6 determinism. Written against the formula, not against default numbers.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "models/pe/cost_model.h"
#include "models/pe/engine_timing.h"
#include "tests/sim_util.h"

namespace kb {
namespace {

using test::of_kind;
using test::period_ps;
using test::run_kernel;

enum class Kind { kDmaRead, kDmaWrite, kGemm, kMath, kCopy };
const char* name(Kind k) {
  const char* n[] = {"DmaRead", "DmaWrite", "Gemm", "Math", "Copy"};
  return n[int(k)];
}
// ADR-0064 D2 sizes, counted by hand from the field table.
uint32_t expected_logical_bytes(Kind k) {
  switch (k) {
    case Kind::kGemm: return 4 + 3 * 8 + 3 * 4 + 2;       // 42
    case Kind::kMath: return 4 + 1 + (1 + 2 * 8) + 8 + 1;  // add: 31
    default: return 4 + 8 + 8;                             // 20
  }
}

// One command of kind `k` on [s, s] tensors.
Kernel single_command(Kind k, int64_t s) {
  return [k, s](Tl& tl) {
    const Tensor h = tl.hbm("h", s, s, Dtype::kBf16);
    const Tensor a = tl.tcm("a", s, s, Dtype::kBf16);
    const Tensor b = tl.tcm("b", s, s, Dtype::kBf16);
    const Tensor c = tl.tcm("c", s, s, Dtype::kBf16);
    test::init(tl, {h, a, b});
    switch (k) {
      case Kind::kDmaRead: tl.load(a, h); break;
      case Kind::kDmaWrite: tl.store(h, a); break;
      case Kind::kGemm: tl.dot(c, a, b); break;
      case Kind::kMath: tl.add(c, a, b); break;
      case Kind::kCopy: tl.copy(c, a); break;
    }
  };
}

struct FormulaCase {
  Kind kind;
  int64_t size;
  double clock_ghz;
};

class FormulaPreservation : public ::testing::TestWithParam<FormulaCase> {};

// TR 1: the recorded dispatch equals FIXED(type) + logical_bytes x R
// (within one cycle), whatever the tensor size, and takes that many cycles.
TEST_P(FormulaPreservation, DispatchEqualsFormula) {
  const FormulaCase p = GetParam();
  PeConfig cfg;
  cfg.clock_freq_ghz = p.clock_ghz;
  const RunResult r = run_kernel(single_command(p.kind, p.size), cfg);
  const auto d = of_kind(r, RecordKind::kDispatch);
  ASSERT_EQ(d.size(), 1u);
  const double formula = double(cfg.cost_model.fixed_per_single_op_cmd_cycles) +
                         expected_logical_bytes(p.kind) * cfg.cost_model.byte_cycles_recip;
  EXPECT_EQ(d[0].logical_bytes, expected_logical_bytes(p.kind));
  EXPECT_DOUBLE_EQ(d[0].dispatch_cycles_exact, formula);
  EXPECT_LE(std::abs(double(d[0].dispatch_cycles_charged) - formula), 1.0);
  EXPECT_GE(double(d[0].dispatch_cycles_charged), formula);
  EXPECT_EQ(d[0].end_ps - d[0].start_ps, d[0].dispatch_cycles_charged * period_ps(cfg));
  ASSERT_EQ(r.launches.size(), 1u);
  EXPECT_EQ(r.launches[0].dispatch_ps, d[0].end_ps - d[0].start_ps);
}

std::vector<FormulaCase> formula_cases() {
  std::vector<FormulaCase> v;
  for (Kind k : {Kind::kDmaRead, Kind::kDmaWrite, Kind::kGemm, Kind::kMath, Kind::kCopy})
    for (int64_t s : {8, 64, 256})
      for (double ghz : {1.0, 2.0}) v.push_back({k, s, ghz});
  return v;
}

INSTANTIATE_TEST_SUITE_P(AllSingleOpTypes, FormulaPreservation, ::testing::ValuesIn(formula_cases()),
                         [](const auto& info) {
                           return std::string(name(info.param.kind)) + "_" +
                                  std::to_string(info.param.size) + "_" +
                                  (info.param.clock_ghz == 1.0 ? "1GHz" : "2GHz");
                         });

// A kernel with every single-op type, independent and dependent commands.
void mixed_kernel(Tl& tl) {
  const Tensor x = tl.hbm("x", 128, 128, Dtype::kBf16);
  const Tensor y = tl.hbm("y", 128, 128, Dtype::kBf16);
  const Tensor a = tl.tcm("a", 128, 128, Dtype::kBf16);
  const Tensor b = tl.tcm("b", 128, 128, Dtype::kBf16);
  const Tensor c = tl.tcm("c", 128, 128, Dtype::kBf16);
  const Tensor m = tl.tcm("m", 128, 1, Dtype::kFp32);
  test::init(tl, {x});
  tl.load(a, x);
  tl.load(b, x);
  tl.dot(c, a, b);
  tl.rowmax(m, c);
  tl.sub_bcast(c, c, m);
  tl.exp(c, c);
  tl.copy(a, c);
  tl.cycles(25);
  tl.store(y, a);
}

std::string write_temp(const std::string& text) {
  char path[] = "/tmp/kb_cfg_XXXXXX";
  const int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << text;
  return path;
}

void expect_every_dispatch_matches(const RunResult& r, const CostModelConfig& cm) {
  const auto d = of_kind(r, RecordKind::kDispatch);
  ASSERT_FALSE(d.empty());
  for (const OpRecord& rec : d) {
    const double fixed = std::string(rec.cmd_type) == "CompositeCmd"
                             ? double(cm.fixed_per_cmd_cycles)
                             : double(cm.fixed_per_single_op_cmd_cycles);
    const double formula = fixed + rec.logical_bytes * cm.byte_cycles_recip;
    EXPECT_DOUBLE_EQ(rec.dispatch_cycles_exact, formula) << rec.cmd_type;
    EXPECT_LE(std::abs(double(rec.dispatch_cycles_charged) - formula), 1.0) << rec.cmd_type;
  }
}

// TR 3: a pe_cost_model block in the topology YAML changes the dispatch
// cost; the formula holds with the override values.
TEST(YamlOverride, CostModelBlockChangesDispatchAndFormulaHolds) {
  const std::string path = write_temp(
      "pe:\n  attrs:\n    pe_cost_model:\n      fixed_per_cmd_cycles: 100\n"
      "      fixed_per_single_op_cmd_cycles: 21\n      byte_cycles_recip: 0.5\n");
  const PeConfig over = load_pe_config(path);
  std::remove(path.c_str());
  EXPECT_EQ(over.cost_model.fixed_per_single_op_cmd_cycles, 21u);
  const RunResult r_over = run_kernel(mixed_kernel, over);
  const RunResult r_def = run_kernel(mixed_kernel, PeConfig{});
  expect_every_dispatch_matches(r_over, over.cost_model);
  expect_every_dispatch_matches(r_def, CostModelConfig{});
  EXPECT_GT(r_over.launches.at(0).dispatch_cycles_charged, r_def.launches.at(0).dispatch_cycles_charged);
}

// TR 3: without the block, the defaults come back (other blocks may still
// be overridden).
TEST(YamlOverride, MissingBlockRecoversDefaults) {
  const std::string path = write_temp("pe:\n  attrs:\n    scheduler:\n      queue_depth: 4\n");
  const PeConfig cfg = load_pe_config(path);
  std::remove(path.c_str());
  const CostModelConfig def;
  EXPECT_EQ(cfg.cost_model.fixed_per_cmd_cycles, def.fixed_per_cmd_cycles);
  EXPECT_EQ(cfg.cost_model.fixed_per_single_op_cmd_cycles, def.fixed_per_single_op_cmd_cycles);
  EXPECT_EQ(cfg.cost_model.byte_cycles_recip, def.byte_cycles_recip);
  EXPECT_EQ(cfg.cost_model.max_composite_logical_bytes, def.max_composite_logical_bytes);
  const RunResult r = run_kernel(mixed_kernel, cfg);
  expect_every_dispatch_matches(r, def);
}

// TR 4: tl.cycles(n) costs exactly n cycles, never n + dispatch.
TEST(CyclesBypass, CyclesCostExactlyN) {
  for (uint64_t n : {1u, 7u, 1000u}) {
    PeConfig cfg;
    cfg.cost_model.fixed_per_cmd_cycles = 500;
    cfg.cost_model.fixed_per_single_op_cmd_cycles = 500;
    const RunResult r = run_kernel([n](Tl& tl) { tl.cycles(n); }, cfg);
    const auto c = of_kind(r, RecordKind::kCpuCycles);
    ASSERT_EQ(c.size(), 1u);
    EXPECT_EQ(c[0].end_ps - c[0].start_ps, n * period_ps(cfg));
    EXPECT_TRUE(of_kind(r, RecordKind::kDispatch).empty());
    EXPECT_EQ(r.launches.at(0).latency_ps(), n * period_ps(cfg));
    EXPECT_EQ(r.launches.at(0).commands, 0u);
    EXPECT_EQ(r.launches.at(0).dispatch_cycles_charged, 0u);
  }
}

TEST(CyclesBypass, CyclesAddToDispatchOnPeCpu) {
  const PeConfig cfg;
  const RunResult r = run_kernel(
      [](Tl& tl) {
        const Tensor a = tl.tcm("a", 8, 8, Dtype::kFp32);
        tl.fill(a, 1.0);
        tl.cycles(40);
        tl.fill(a, 2.0);
      },
      cfg);
  const auto d = of_kind(r, RecordKind::kDispatch);
  const auto c = of_kind(r, RecordKind::kCpuCycles);
  ASSERT_EQ(d.size(), 2u);
  ASSERT_EQ(c.size(), 1u);
  // The cycles sit between the two dispatches, back to back on PE_CPU.
  EXPECT_EQ(c[0].start_ps, d[0].end_ps);
  EXPECT_EQ(d[1].start_ps, c[0].end_ps);
  EXPECT_EQ(c[0].end_ps - c[0].start_ps, 40 * period_ps(cfg));
}

// Engine stages as (command, kind, tile, duration), in a stable order.
std::vector<std::tuple<uint64_t, int, int64_t, uint64_t>> stage_durations(const RunResult& r) {
  std::vector<std::tuple<uint64_t, int, int64_t, uint64_t>> v;
  for (const OpRecord& rec : r.records) {
    if (rec.component == Component::kPeCpu) continue;
    v.emplace_back(rec.cmd_id, int(rec.kind), rec.tile, rec.end_ps - rec.start_ps);
  }
  std::sort(v.begin(), v.end());
  return v;
}

// TR 5: dispatch cost is PE_CPU time only; no engine stage changes length
// when any cost-model knob changes.
TEST(NoDoubleCount, CostModelKnobsLeaveEveryStageDurationIdentical) {
  const PeConfig base;
  const auto reference = stage_durations(run_kernel(mixed_kernel, base));
  ASSERT_FALSE(reference.empty());
  std::vector<PeConfig> variants(4, base);
  variants[0].cost_model.fixed_per_single_op_cmd_cycles = 0;
  variants[0].cost_model.byte_cycles_recip = 0;
  variants[1].cost_model.fixed_per_single_op_cmd_cycles = 400;
  variants[2].cost_model.byte_cycles_recip = 3.0;
  variants[3].cost_model.fixed_per_cmd_cycles = 1;
  variants[3].cost_model.max_composite_logical_bytes = 64;
  for (size_t i = 0; i < variants.size(); ++i) {
    EXPECT_EQ(stage_durations(run_kernel(mixed_kernel, variants[i])), reference) << "variant " << i;
  }
}

// TR 5: and each stage lasts exactly its engine formula.
TEST(NoDoubleCount, StageDurationsAreTheEngineFormulas) {
  const PeConfig cfg;
  const RunResult r = run_kernel(mixed_kernel, cfg);
  const uint64_t p = period_ps(cfg);
  for (const OpRecord& rec : r.records) {
    Stage s;
    s.bytes = rec.bytes;
    uint64_t cycles = 0;
    switch (rec.kind) {
      case RecordKind::kDmaRead:
      case RecordKind::kDmaWrite: cycles = dma_cycles(cfg, s); break;
      case RecordKind::kCopy: s.tcm_only = true; cycles = dma_cycles(cfg, s); break;
      case RecordKind::kGemm:  // single-op: serial fetch of a, b and drain of c (bf16)
        cycles = gemm_cycles(cfg, 128, 128, 128) + tcm_cycles(cfg, 2 * 128 * 128 * 2) +
                 tcm_cycles(cfg, 128 * 128 * 2);
        break;
      case RecordKind::kMath: {
        MathOp op{};
        ASSERT_TRUE(math_op_from_string(rec.op, &op));
        cycles = math_cycles(cfg, op, rec.elements, math_op_is_reduction(op) ? 128 : 0);
        break;
      }
      default: continue;
    }
    EXPECT_EQ(rec.end_ps - rec.start_ps, cycles * p) << to_string(rec.kind) << " " << rec.op;
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// TR 6: identical inputs give a byte-identical op log and latency.
TEST(Determinism, TwoRunsGiveIdenticalOpLogAndLatency) {
  std::string logs[2];
  uint64_t latency[2];
  for (int i = 0; i < 2; ++i) {
    RunSpec spec;
    spec.launches = {{"mixed", mixed_kernel}};
    const std::string path = "/tmp/kb_det_" + std::to_string(getpid()) + "_" + std::to_string(i);
    spec.oplog_path = path;
    const RunResult r = run_isolated(spec);
    ASSERT_TRUE(r.ok) << r.error;
    latency[i] = r.latency_ps();
    logs[i] = read_file(path);
    std::remove(path.c_str());
  }
  EXPECT_GT(logs[0].size(), 100u);
  EXPECT_EQ(logs[0], logs[1]);
  EXPECT_EQ(latency[0], latency[1]);
}

}  // namespace
}  // namespace kb
