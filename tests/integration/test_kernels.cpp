// The kernels and benches: docs/cost-model.md TR2 (opt3 vs opt2 per-tile
// dispatch), TR7 (live vs replay parity), TR9 (sensitivity to R), and kernel
// sanity.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "kernels/attention/gqa_decode.h"
#include "kernels/gemm/gemm_async.h"
#include "kernels/gemm/gemm_composite.h"
#include "tb/benches/bench_registry.h"
#include "tb/replay/command_stream.h"
#include "tests/sim_util.h"

namespace kb {
namespace {

using test::of_kind;

// Runs a registered bench with parameter and configuration overrides.
nlohmann::json bench_run(const std::string& name, const std::vector<std::string>& params = {},
                         const std::vector<std::string>& sets = {}) {
  register_builtin_benches();
  const Bench& b = BenchRegistry::instance().get(name);
  const BenchParams p = BenchRegistry::instance().params(b, params);
  RunSpec spec;
  spec.config = load_pe_config("", sets);
  spec.launches = b.launches(p, spec.config);
  const RunResult r = run_isolated(spec);
  EXPECT_TRUE(r.ok) << r.error;
  return r.ok ? bench_figures(b, p, spec.config, r) : nlohmann::json::object();
}

// --- docs/cost-model.md TR2

TEST(GqaDecode, Opt3PerTileDispatchExceedsOpt2ByMoreThanOneAndAHalf) {
  const nlohmann::json f = bench_run("gqa-decode");
  const double opt2 = f["opt2"]["tile_dispatch_ns"], opt3 = f["opt3"]["tile_dispatch_ns"];
  std::printf("[ info ] per-tile dispatch at defaults: opt2 %.2f ns, opt3 %.2f ns, ratio %.3fx\n",
              opt2, opt3, opt3 / opt2);
  EXPECT_GT(opt3, 1.5 * opt2);
  EXPECT_DOUBLE_EQ(double(f["tile_dispatch_ratio_opt3_over_opt2"]), opt3 / opt2);
}

// The structure behind the ratio: opt2 issues two composites per KV tile,
// opt3 sixteen single-op commands, each paying the docs/cost-model.md formula.
TEST(GqaDecode, CommandsPerTileAndFormula) {
  const nlohmann::json f = bench_run("gqa-decode", {"context=1000", "kv_tile=128"});  // tail tile
  const CostModelConfig cm;
  EXPECT_EQ(double(f["opt2"]["tiles"]), 8.0 * 8);  // 8 KV heads x ceil(1000 / 128)
  EXPECT_EQ(double(f["opt2"]["tile_commands"]), 2.0);
  EXPECT_EQ(double(f["opt3"]["tile_commands"]), 16.0);
  for (const char* v : {"opt2", "opt3"}) {
    const double cmds = f[v]["tile_commands"], bytes = f[v]["tile_logical_bytes"];
    const double fixed = double(std::string(v) == "opt2" ? cm.fixed_per_cmd_cycles
                                                         : cm.fixed_per_single_op_cmd_cycles);
    EXPECT_DOUBLE_EQ(double(f[v]["tile_dispatch_cycles_exact"]), cmds * fixed + bytes * cm.byte_cycles_recip) << v;
  }
}

// --- docs/cost-model.md TR9

TEST(GqaDecode, Opt3BeatsOpt2AtEveryRAndTheRatioRisesAsRFalls) {
  double previous_ratio = 0;
  for (const char* r : {"0.25", "0.0625", "0.03125"}) {
    const nlohmann::json f =
        bench_run("gqa-decode", {}, {std::string("pe.attrs.pe_cost_model.byte_cycles_recip=") + r});
    const double opt2 = f["opt2"]["tile_dispatch_ns"], opt3 = f["opt3"]["tile_dispatch_ns"];
    std::printf("[ info ] R = %s: opt2 %.2f ns, opt3 %.2f ns, ratio %.3fx\n", r, opt2, opt3, opt3 / opt2);
    EXPECT_GT(opt3, opt2) << "R = " << r;
    EXPECT_GT(opt3 / opt2, previous_ratio) << "R = " << r;
    previous_ratio = opt3 / opt2;
  }
}

// --- kernel sanity

TEST(GqaDecode, LatencyGrowsWithContext) {
  double previous[2] = {0, 0};
  for (const char* ctx : {"512", "1024", "2048"}) {
    const nlohmann::json f = bench_run("gqa-decode", {std::string("context=") + ctx});
    for (int i = 0; i < 2; ++i) {
      const double latency = f[i == 0 ? "opt2" : "opt3"]["latency_ns"];
      EXPECT_GT(latency, previous[i]) << "context " << ctx;
      previous[i] = latency;
    }
  }
}

TEST(GemmVariants, LatencyGrowsWithK) {
  const nlohmann::json f = bench_run("gemm-async-vs-composite", {"ks=256,512,1024"});
  for (const char* v : {"composite", "async_full", "async_tiled"}) {
    EXPECT_LT(double(f["k256"][v]["latency_ns"]), double(f["k512"][v]["latency_ns"])) << v;
    EXPECT_LT(double(f["k512"][v]["latency_ns"]), double(f["k1024"][v]["latency_ns"])) << v;
  }
}

TEST(GemmVariants, CompositeBeatsAsyncTiledAtK3072) {
  const nlohmann::json f = bench_run("gemm-async-vs-composite", {"ks=3072"});
  const double composite = f["k3072"]["composite"]["tflops"];
  const double tiled = f["k3072"]["async_tiled"]["tflops"];
  const double full = f["k3072"]["async_full"]["tflops"];
  std::printf("[ info ] K = 3072 TFLOPS: composite %.3f, async_full %.3f, async_tiled %.3f "
              "(composite / async_tiled %.2fx); async_tiled dispatch %.0f ns over %.0f commands\n",
              composite, full, tiled, composite / tiled,
              double(f["k3072"]["async_tiled"]["dispatch_ns"]),
              double(f["k3072"]["async_tiled"]["commands"]));
  EXPECT_GT(composite, tiled);
}

TEST(GemmVariants, AsyncTiledOverlapsDmaWithGemm) {
  GemmShape s;
  s.k = 1024;
  const RunResult r = test::run_kernel([s](Tl& tl) { gemm_async_tiled(tl, s); });
  const auto dma = of_kind(r, RecordKind::kDmaRead);
  const auto gemm = of_kind(r, RecordKind::kGemm);
  ASSERT_GT(gemm.size(), 4u);
  int overlapping = 0;
  for (const OpRecord& g : gemm) {
    for (const OpRecord& d : dma) {
      if (d.start_ps < g.end_ps && g.start_ps < d.end_ps) {
        ++overlapping;
        break;
      }
    }
  }
  // Every chunk's dot but the last runs while the next B chunk streams in.
  EXPECT_GE(overlapping, int(gemm.size()) - 1);
}

TEST(GemmVariants, AsyncTiledIssuesThreeCommandsPerChunk) {
  GemmShape s;
  s.k = 3072;
  s.tile_k = 64;
  const RunResult r = test::run_kernel([s](Tl& tl) { gemm_async_tiled(tl, s); });
  const LaunchResult& l = r.launches.at(0);
  // load A, 48 x (load B chunk, dot), 47 accumulates, store C
  EXPECT_EQ(l.commands, 1u + 48 * 2 + 47 + 1);
  EXPECT_EQ(l.commands_by_type[0], 1u + 48);  // DmaReadCmd
  EXPECT_EQ(l.commands_by_type[2], 48u);      // GemmCmd
  EXPECT_EQ(l.commands_by_type[3], 47u);      // MathCmd
}

// --- docs/cost-model.md TR7: live and replay paths agree

std::string csv(const RunResult& r) {
  std::string s;
  for (const OpRecord& rec : r.records) s += op_log_csv_row(rec) + "\n";
  return s;
}

void expect_parity(const std::string& name, const Kernel& k, const PeConfig& cfg = PeConfig{}) {
  const std::string path = "/tmp/kb_parity_" + std::to_string(getpid()) + "_" + name;
  RunSpec live;
  live.config = cfg;
  live.launches = {{name, k}};
  live.keep_records = true;
  live.record_path = path;
  const RunResult a = run_isolated(live);
  ASSERT_TRUE(a.ok) << a.error;
  RunSpec replay;
  replay.config = cfg;
  replay.launches = load_command_stream(path);
  replay.keep_records = true;
  const RunResult b = run_isolated(replay);
  std::remove(path.c_str());
  ASSERT_TRUE(b.ok) << b.error;
  ASSERT_EQ(a.launches.size(), 1u);
  ASSERT_EQ(b.launches.size(), 1u);
  EXPECT_GT(a.records.size(), 10u);
  EXPECT_EQ(csv(a), csv(b)) << name;
  EXPECT_EQ(a.latency_ps(), b.latency_ps()) << name;
  EXPECT_EQ(a.launches[0].dispatch_cycles_charged, b.launches[0].dispatch_cycles_charged);
  EXPECT_EQ(a.launches[0].dispatch_cycles_exact, b.launches[0].dispatch_cycles_exact);
  EXPECT_EQ(a.launches[0].commands, b.launches[0].commands);
}

GqaShape small_gqa() {
  GqaShape s;
  s.q_heads = 8;
  s.kv_heads = 2;
  s.context = 1000;  // a tail tile
  return s;
}

TEST(PathParity, GqaDecodeOpt2) {
  expect_parity("opt2", [](Tl& tl) { gqa_decode_opt2(tl, small_gqa()); });
}

TEST(PathParity, GqaDecodeOpt3) {
  expect_parity("opt3", [](Tl& tl) { gqa_decode_opt3(tl, small_gqa()); });
}

TEST(PathParity, GemmAsyncTiled) {
  GemmShape s;
  s.k = 1000;
  expect_parity("async_tiled", [s](Tl& tl) { gemm_async_tiled(tl, s); });
}

TEST(PathParity, HoldsWithAnotherCostModel) {
  const PeConfig cfg = load_pe_config("", {"pe.attrs.pe_cost_model.byte_cycles_recip=0.25",
                                           "pe.attrs.pe_cost_model.fixed_per_cmd_cycles=70"});
  expect_parity("opt2", [](Tl& tl) { gqa_decode_opt2(tl, small_gqa()); }, cfg);
}

}  // namespace
}  // namespace kb
