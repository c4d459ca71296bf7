// docs/cost-model.md test requirements checked on the running model: TR1
// formula preservation, TR3 YAML override, TR4 tl.cycles bypass, TR5 no
// double count, TR6 determinism. Written against the formula, not against
// default numbers.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "models/isa/cost_model.h"
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
// docs/cost-model.md D2 sizes, counted by hand from the field table.
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

// TR1: the recorded dispatch equals FIXED(type) + logical_bytes x R
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
                         [](const auto& tp) {  // not `info`: gtest's own parameter name
                           return std::string(name(tp.param.kind)) + "_" +
                                  std::to_string(tp.param.size) + "_" +
                                  (tp.param.clock_ghz == 1.0 ? "1GHz" : "2GHz");
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

// TR3: a pe_cost_model block in the topology YAML changes the dispatch
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

// TR3: without the block, the defaults come back (other blocks may still
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

// TR4: tl.cycles(n) costs exactly n cycles, never n + dispatch.
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

// mixed_kernel, then two composites: a tile-scope GEMM streaming its
// operands from HBM (DMA_READ, FETCH, GEMM, STORE, DMA_WRITE stages) and a
// prologue math chain.
void mixed_with_composites(Tl& tl) {
  mixed_kernel(tl);
  const Tensor p = tl.hbm("p", 96, 80, Dtype::kBf16), q = tl.hbm("q", 80, 144, Dtype::kBf16);
  const Tensor r = tl.hbm("r", 96, 144, Dtype::kFp32);
  const Tensor s = tl.tcm("s", 96, 144, Dtype::kFp32), mx = tl.tcm("mx", 96, 1, Dtype::kFp32);
  test::init(tl, {p, q, s});
  tl.composite("gemm", {gemm_op(OpScope::kTile, r, p, q)}, {r});
  tl.composite("norm",
               {math_op(MathOp::kRowMax, OpScope::kPrologue, mx, {s}),
                math_op(MathOp::kSubBcast, OpScope::kPrologue, s, {s, mx}),
                math_op(MathOp::kExp, OpScope::kPrologue, s, {s})},
               {s});
}

bool is_composite(const OpRecord& rec) { return std::string(rec.cmd_type) == "CompositeCmd"; }

// TR5: dispatch cost is PE_CPU time only; no engine stage changes length
// when any cost-model knob changes, composites included, while each knob
// visibly changes the dispatch it governs.
TEST(NoDoubleCount, CostModelKnobsLeaveEveryStageDurationIdentical) {
  const PeConfig base;
  const RunResult ref = run_kernel(mixed_with_composites, base);
  const auto reference = stage_durations(ref);
  const auto ref_dispatch = of_kind(ref, RecordKind::kDispatch);
  ASSERT_FALSE(reference.empty());
  // Composites and their tile stages are there for the composite knobs to act on.
  uint32_t largest_composite = 0;
  for (const OpRecord& d : ref_dispatch)
    if (is_composite(d)) largest_composite = std::max(largest_composite, d.logical_bytes);
  ASSERT_GT(largest_composite, 0u);
  ASSERT_FALSE(of_kind(ref, RecordKind::kFetch).empty());
  ASSERT_FALSE(of_kind(ref, RecordKind::kStore).empty());
  std::vector<PeConfig> variants(5, base);
  variants[0].cost_model.fixed_per_single_op_cmd_cycles = 0;
  variants[0].cost_model.byte_cycles_recip = 0;
  variants[1].cost_model.fixed_per_single_op_cmd_cycles = 400;
  variants[2].cost_model.byte_cycles_recip = 3.0;
  variants[3].cost_model.fixed_per_cmd_cycles = 1;
  variants[3].cost_model.max_composite_logical_bytes = largest_composite;  // at the cap: accepted
  variants[4].cost_model.fixed_per_cmd_cycles = 977;
  for (size_t i = 0; i < variants.size(); ++i) {
    const CostModelConfig& cm = variants[i].cost_model;
    const RunResult r = run_kernel(mixed_with_composites, variants[i]);
    EXPECT_EQ(stage_durations(r), reference) << "variant " << i;
    // The knob took effect: with R unchanged, a command's dispatch moves by
    // exactly the change of its FIXED (e.g. composites 40 -> 1: 39 cycles less).
    const auto d = of_kind(r, RecordKind::kDispatch);
    ASSERT_EQ(d.size(), ref_dispatch.size()) << "variant " << i;
    if (cm.byte_cycles_recip != base.cost_model.byte_cycles_recip) continue;
    for (size_t j = 0; j < d.size(); ++j) {
      const bool comp = is_composite(d[j]);
      const int64_t fixed_change =
          comp ? int64_t(cm.fixed_per_cmd_cycles) - int64_t(base.cost_model.fixed_per_cmd_cycles)
               : int64_t(cm.fixed_per_single_op_cmd_cycles) -
                     int64_t(base.cost_model.fixed_per_single_op_cmd_cycles);
      EXPECT_EQ(int64_t(d[j].dispatch_cycles_charged) - int64_t(ref_dispatch[j].dispatch_cycles_charged),
                fixed_change)
          << "variant " << i << ", " << d[j].cmd_type << " #" << d[j].cmd_id;
    }
  }
  // The cap is live for these composites: one byte below the largest fails.
  PeConfig below = base;
  below.cost_model.max_composite_logical_bytes = largest_composite - 1;
  RunSpec spec;
  spec.config = below;
  spec.launches = {{"capped", mixed_with_composites}};
  const RunResult capped = run_isolated(spec);
  EXPECT_FALSE(capped.ok);
  EXPECT_NE(capped.error.find("over the cap of " + std::to_string(largest_composite - 1)),
            std::string::npos)
      << capped.error;
}

// A kernel whose shapes make every ceil of the engine formulas round up.
void odd_shapes(Tl& tl) {
  const Tensor x = tl.hbm("x", 100, 70, Dtype::kBf16), y = tl.hbm("y", 100, 70, Dtype::kBf16);
  const Tensor a = tl.tcm("a", 100, 70, Dtype::kBf16), a2 = tl.tcm("a2", 100, 70, Dtype::kBf16);
  const Tensor w = tl.tcm("w", 70, 50, Dtype::kBf16), c = tl.tcm("c", 100, 50, Dtype::kBf16);
  const Tensor m = tl.tcm("m", 100, 1, Dtype::kFp32);
  test::init(tl, {x, w});
  tl.load(a, x);         // 1
  tl.dot(c, a, w);       // 2
  tl.rowmax(m, c);       // 3
  tl.sub_bcast(c, c, m); // 4
  tl.exp(c, c);          // 5
  tl.copy(a2, a);        // 6
  tl.store(y, a2);       // 7
}

// TR5: and each stage lasts exactly its engine formula, worked out here by
// hand from the formulas of docs/architecture.md ("Engine formulas") at the default parameters (not by calling
// the model's engine_timing functions):
//   DMA   setup 16 + HBM latency 100 + ceil(bytes / 204.8)
//         (B = 8 channels x 32 GB/s x 0.8 / 1 GHz = 204.8 bytes per cycle)
//   COPY  (TCM to TCM) setup 16 + ceil(bytes / 128)
//   GEMM  ceil(m / 32) x ceil(n / 32) x k + 32 + 32, and a single-op GEMM
//         adds TCM fetch 2 + ceil((a + b) / 128) and drain 2 + ceil(c / 128)
//   MATH  4 + ceil(elements / 64) x cost (1, exp 4); rowmax adds
//         ceil(log2(row length))
TEST(NoDoubleCount, StageDurationsAreTheEngineFormulas) {
  const PeConfig cfg;
  const RunResult r = run_kernel(odd_shapes, cfg);
  const std::map<uint64_t, uint64_t> cycles = {
      // load 100 x 70 bf16 = 14000 bytes: 14000 / 204.8 = 68.36 -> 69; 16 + 100 + 69
      {1, 185},
      // dot m 100, n 50, k 70: 4 x 2 x 70 + 64 = 624; fetch a 14000 + w 7000 =
      // 21000 bytes: 2 + ceil(164.06) = 167; drain c 10000 bytes: 2 + ceil(78.13) = 81
      {2, 624 + 167 + 81},
      // rowmax over 100 x 50 = 5000 elements, rows of 50: 4 + ceil(78.13) + ceil(5.64)
      {3, 4 + 79 + 6},
      // sub_bcast, 5000 elements: 4 + 79 x 1
      {4, 83},
      // exp, 5000 elements: 4 + 79 x 4
      {5, 320},
      // copy 14000 bytes TCM to TCM: 16 + ceil(109.38)
      {6, 126},
      // store 14000 bytes: as the load
      {7, 185}};
  const uint64_t p = 1000;  // ps per cycle at 1 GHz
  ASSERT_EQ(period_ps(cfg), p);
  size_t checked = 0;
  for (const OpRecord& rec : r.records) {
    if (rec.component == Component::kPeCpu) continue;
    ASSERT_TRUE(cycles.count(rec.cmd_id)) << rec.cmd_id;
    EXPECT_EQ(rec.end_ps - rec.start_ps, cycles.at(rec.cmd_id) * p)
        << "command " << rec.cmd_id << " " << to_string(rec.kind) << " " << rec.op;
    ++checked;
  }
  EXPECT_EQ(checked, cycles.size());
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// TR6: identical inputs give a byte-identical op log and latency.
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
