// The gqa-long-ctx bench and its roofline: the
// CLI's figures obey their formulas for every case and context, the
// roofline (tb/benches/long_ctx_model.h) is a lower bound of simulated runs on
// several meshes, and bad parameters are bad input (exit 2).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/test_files.h"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/attention/long_ctx/long_ctx.h"
#include "tb/benches/long_ctx_model.h"
#include "tb/run/mesh_run.h"
#include "tests/sim_util.h"

namespace kb {
namespace {

using kb::test::CliResult;
using kb::test::read_file;
using kb::test::TempDir;
using ::testing::HasSubstr;

CliResult run_cli(const std::vector<std::string>& args) { return kb::test::run_program(KERNBENCH_BIN, args); }

using kb::test::mesh_config;

double num(const nlohmann::json& row, const char* key) { return row.at(key).get<double>(); }

// Every case and context of a small run has every figure, and each figure
// is the formula docs/long-context.md gives (relative tolerance for the JSON's doubles).
TEST(LongCtxBench, JsonHasEveryCaseAndContextAndTheFiguresFollowTheirFormulas) {
  TempDir dir;
  const std::string json = dir.file("f.json");
  const std::vector<int64_t> contexts = {512, 1000};
  const CliResult r = run_cli({"run", "gqa-long-ctx", "--param", "contexts=512,1000", "--param", "q_heads=8",
                               "--param", "kv_heads=4", "--param", "head_dim=64", "--set", "topology.mesh.h=1",
                               "--set", "topology.mesh.w=2", "--set", "topology.cube.pes=2", "--json", json});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("1 x 2 mesh of 2-PE cubes (4 PEs), LRAB root cube 1"));
  const nlohmann::json f = nlohmann::json::parse(read_file(json)).at("figures");
  const double pes = 4, peak_Bps = pes * PeConfig{}.hbm_bytes_per_cycle() * PeConfig{}.clock_freq_ghz * 1e9;
  EXPECT_NEAR(num(f.at("mesh"), "peak_hbm_GBps") * 1e9, peak_Bps, peak_Bps * 1e-12);
  for (LongCtxCase c : kLongCtxCases) {
    const std::string name = long_ctx_case_name(c);
    ASSERT_TRUE(f.contains(name)) << name;
    for (int64_t context : contexts) {
      SCOPED_TRACE(name + " " + std::to_string(context));
      const nlohmann::json& row = f.at(name).at(std::to_string(context));
      const double latency = num(row, "latency_us"), requests = num(row, "requests");
      ASSERT_GT(latency, 0);
      EXPECT_EQ(requests, c == LongCtxCase::kCubeReplPeSp ? 2.0 : 1.0);  // one request per cube
      EXPECT_NEAR(num(row, "tokens_per_s"), requests / (latency * 1e-6), 1e-9 * num(row, "tokens_per_s"));
      const double kv = 2.0 * 4 * double(context) * 64 * 2 * requests;  // K and V, bf16
      EXPECT_EQ(num(row, "kv_bytes"), kv);
      EXPECT_NEAR(num(row, "hbm_fraction"), kv / (latency * 1e-6) / peak_Bps, 1e-9);
      // The attention phase alone is part of the whole run.
      EXPECT_GT(num(row, "attention_us"), 0);
      EXPECT_LE(num(row, "attention_us"), latency);
      EXPECT_NEAR(num(row, "attention_us") + num(row, "merge_us"), latency, 1e-9 * latency);
      EXPECT_GT(num(row, "dispatch_us"), 0);
      EXPECT_LE(num(row, "dispatch_us"), latency);
      EXPECT_NEAR(num(row, "dispatch_fraction"), num(row, "dispatch_us") / latency, 1e-12);
      // The roofline is a lower bound: the run never beats it.
      EXPECT_GT(num(row, "bound_us"), 0);
      EXPECT_LE(num(row, "bound_us"), latency);
      EXPECT_LE(num(row, "roofline_fraction"), 1.0);
      EXPECT_NEAR(num(row, "roofline_fraction"), num(row, "bound_us") / latency, 1e-12);
      EXPECT_NEAR(num(row, "bound_hbm_us") + num(row, "bound_collective_us"), num(row, "bound_us"), 1e-9);
      // cube_tp_pe_sp and cube_repl_pe_sp merge inside a cube: no link traffic.
      const bool across_cubes = c == LongCtxCase::kCubeSpPeTp || c == LongCtxCase::kCubeSpPeSp;
      if (across_cubes) EXPECT_GT(num(row, "link_bytes"), 0);
      else EXPECT_EQ(num(row, "link_bytes"), 0);
      const std::string verdict = row.at("verdict");
      if (num(row, "merge_us") > num(row, "attention_us")) {
        EXPECT_EQ(verdict, across_cubes ? "link-bound" : "merge-bound (pe_ipc)");
      }
      if (num(row, "merge_us") <= num(row, "attention_us")) {
        EXPECT_TRUE(verdict == "CPU-bound" || verdict.rfind("engine-bound (pe_", 0) == 0) << verdict;
      }
      EXPECT_LT(num(row, "critical_pe"), pes);
    }
  }
  // The human table: a row per case and context.
  for (LongCtxCase c : kLongCtxCases) EXPECT_THAT(r.out, HasSubstr(std::string(long_ctx_case_name(c)) + "     "));
}

// The roofline against simulations: no case on any mesh, with a context
// that divides evenly by nothing, beats its bound; on one PE the bound is
// the HBM time alone.
TEST(LongCtxModel, NoRunBeatsTheBound) {
  struct Mesh {
    uint32_t h, w, pes;
  };
  GqaShape s;
  s.q_heads = 8;
  s.kv_heads = 4;
  s.head_dim = 64;
  s.context = 777;
  // The configuration's default, then a slow IPC port and slow links, where
  // the collective's chains dominate and an overcounted term would show.
  const std::vector<std::function<void(PeConfig&)>> tweaks = {
      [](PeConfig&) {}, [](PeConfig& c) { c.tcm.bytes_per_cycle = 4; },
      [](PeConfig& c) { c.topology.link.latency_cycles = 2000; }};
  for (const Mesh m : {Mesh{1, 1, 1}, Mesh{1, 1, 4}, Mesh{1, 2, 2}, Mesh{2, 3, 1}}) {
    for (size_t t = 0; t < tweaks.size(); ++t) {
      for (LongCtxCase c : kLongCtxCases) {
        SCOPED_TRACE(std::string(long_ctx_case_name(c)) + " on " + std::to_string(m.h) + " x " + std::to_string(m.w) +
                     " x " + std::to_string(m.pes) + ", configuration " + std::to_string(t));
        MeshRunSpec spec;
        spec.config = mesh_config(m.h, m.w, m.pes);
        tweaks[t](spec.config);
        spec.kernel_name = "bound";
        spec.kernel = [=](Tl& tl) { gqa_long_ctx(tl, c, s); };
        const MeshRunResult r = run_mesh_isolated(spec);
        ASSERT_TRUE(r.ok) << r.error;
        const LongCtxBound b = long_ctx_bound(c, s, spec.config);
        EXPECT_GT(b.hbm_ps, 0);
        EXPECT_GE(b.collective_ps, 0);
        EXPECT_LE(b.total_ps(), double(r.latency_ps()));
        if (m.h * m.w * m.pes == 1) {
          EXPECT_EQ(b.collective_ps, 0);
        }
        const double pes = double(m.h * m.w * m.pes);
        EXPECT_DOUBLE_EQ(b.hbm_ps, long_ctx_kv_bytes(c, s, spec.config) /
                                       (pes * spec.config.hbm_bytes_per_cycle()) * 1000.0 /
                                       spec.config.clock_freq_ghz);
        // 2000-cycle links: a state crossing one takes at least 2 x 2000
        // cycles (HEADER, then DATA), which the bound must count.
        const bool crosses = m.h * m.w > 1 && (c == LongCtxCase::kCubeSpPeTp || c == LongCtxCase::kCubeSpPeSp);
        if (t == 2 && crosses) {
          EXPECT_GE(b.collective_ps, 2 * 2000 * 1000.0 / spec.config.clock_freq_ghz);
        }
      }
    }
  }
}

// More context never lowers the bound, and the merge's part of it does not
// depend on the context (the states are [rows, d] whatever the context).
TEST(LongCtxModel, HbmTermGrowsWithContextAndTheCollectiveDoesNot) {
  const PeConfig cfg;  // 2 x 4 x 8
  GqaShape s;
  for (LongCtxCase c : kLongCtxCases) {
    s.context = 8192;
    const LongCtxBound small = long_ctx_bound(c, s, cfg);
    s.context = 65536;
    const LongCtxBound big = long_ctx_bound(c, s, cfg);
    EXPECT_NEAR(big.hbm_ps, 8 * small.hbm_ps, 1e-6 * big.hbm_ps) << long_ctx_case_name(c);
    EXPECT_NEAR(big.collective_ps, small.collective_ps, 1e-6 * big.hbm_ps) << long_ctx_case_name(c);
    EXPECT_GT(small.collective_ps, 0) << long_ctx_case_name(c);  // 64 PEs: every case merges
  }
}

void expect_bad_input(const CliResult& r, const std::vector<std::string>& needles) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  for (const std::string& n : needles) EXPECT_THAT(r.err, HasSubstr(n));
}

TEST(LongCtxBench, BadParametersAreBadInputNamingWhatIsWrong) {
  const std::vector<std::string> small = {"--set", "topology.mesh.h=1", "--set", "topology.mesh.w=2",
                                          "--set", "topology.cube.pes=2"};
  auto run = [&](std::vector<std::string> params) {
    std::vector<std::string> args = {"run", "gqa-long-ctx"};
    for (const std::string& p : params) {
      args.push_back("--param");
      args.push_back(p);
    }
    args.insert(args.end(), small.begin(), small.end());
    return run_cli(args);
  };
  expect_bad_input(run({"contexts=512", "cases=cube_sp_pe_tp,ring"}),
                   {"unknown case 'ring'", "cube_sp_pe_tp, cube_tp_pe_sp, cube_repl_pe_sp, cube_sp_pe_sp"});
  expect_bad_input(run({"contexts=512", "cases=cube_sp_pe_sp,cube_sp_pe_sp"}), {"listed twice"});
  expect_bad_input(run({"contexts=512,512"}), {"listed twice"});
  expect_bad_input(run({"contexts=512", "q_heads=6", "kv_heads=4"}), {"q_heads=6", "multiple of kv_heads"});
  expect_bad_input(run({"contexts=0"}), {"contexts"});
  expect_bad_input(run({"contexts=512", "head_dim=-1"}), {"head_dim"});
  expect_bad_input(run({"contexts=512", "dtype=fp64"}), {"dtype"});
  // cube_sp_pe_sp splits the context over all 4 PEs: 3 tokens leave one without.
  expect_bad_input(run({"contexts=3", "cases=cube_sp_pe_sp"}), {"context 3", "4 token parts", "cube_sp_pe_sp"});
  expect_bad_input(run({"contexts=1", "cases=cube_sp_pe_tp"}), {"context 1", "2 token parts"});
  expect_bad_input(run({"contexts=16777217", "cases=cube_sp_pe_tp"}), {"16777217 tokens", "at most 16777216"});
  expect_bad_input(run({"contexts=16777216", "kv_heads=4611686018427387904", "q_heads=4611686018427387904"}),
                   {"KV cache would exceed 2^63 - 1 bytes"});
  expect_bad_input(run({"contexts=512", "kv_tile=9223372036854775800"}), {"context + kv_tile"});
  // Timing mode only.
  std::vector<std::string> data = {"run", "gqa-long-ctx", "--data", "--param", "contexts=512"};
  data.insert(data.end(), small.begin(), small.end());
  expect_bad_input(run_cli(data), {"timing mode"});
  // Outputs record one run.
  TempDir dir;
  const CliResult two = run_cli({"run", "gqa-long-ctx", "--param", "contexts=512,1024", "--stats", dir.file("s.json"),
                                 "--set", "topology.mesh.h=1"});
  expect_bad_input(two, {"one case and one context"});
}

}  // namespace
}  // namespace kb
