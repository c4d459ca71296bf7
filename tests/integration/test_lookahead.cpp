// Look-ahead (models/util/instant_calendar.h): the instant
// calendar runs instants ahead of SystemC's time while nothing outside it
// is due. Every run here is made twice, with and without it, and must give
// the same op log byte for byte, the same end time and the same results:
// single-PE kernels at several queue depths and in data mode (kernel
// threads woken as the queue drains, PE_REGS' drained method), and meshes
// (PE_IPC, links, HBM slices shared by PEs).
#include <gtest/gtest.h>

#include <string>

#include "kernels/attention/gqa_decode.h"
#include "kernels/attention/long_ctx/long_ctx.h"
#include "kernels/ccl/all_reduce.h"
#include "kernels/gemm/gemm_composite.h"
#include "models/tl/tl.h"
#include "models/util/instant_calendar.h"
#include "tb/run/mesh_run.h"
#include "tests/sim_util.h"
#include "tests/test_files.h"

namespace kb {
namespace {

GqaShape small_gqa(int64_t context) {
  GqaShape s;
  s.q_heads = 8;
  s.kv_heads = 2;
  s.head_dim = 64;
  s.context = context;
  s.kv_tile = 128;
  return s;
}

struct PeRun {
  std::string oplog;
  RunResult result;
};

PeRun run_pe(const Kernel& kernel, const PeConfig& cfg, bool lookahead, const test::TempDir& dir) {
  RunSpec spec;
  spec.config = cfg;
  spec.launches = {{"k", kernel}};
  spec.oplog_path = dir.file(lookahead ? "on.csv" : "off.csv");
  spec.lookahead = lookahead;
  spec.timeout_s = 300;  // a look-ahead that loses time hangs: fail instead
  PeRun r;
  r.result = run_isolated(spec);
  EXPECT_TRUE(r.result.ok) << r.result.error;
  r.oplog = test::read_file(spec.oplog_path);
  return r;
}

void expect_same_pe_run(const Kernel& kernel, const PeConfig& cfg) {
  test::TempDir dir;
  const PeRun off = run_pe(kernel, cfg, false, dir), on = run_pe(kernel, cfg, true, dir);
  EXPECT_GT(off.oplog.size(), 100u);
  EXPECT_TRUE(on.oplog == off.oplog) << "the op logs differ";
  EXPECT_EQ(on.result.end_ps, off.result.end_ps);
  EXPECT_EQ(on.result.latency_ps(), off.result.latency_ps());
  ASSERT_EQ(on.result.launches.size(), off.result.launches.size());
  for (size_t i = 0; i < on.result.launches.size(); ++i) {
    EXPECT_EQ(on.result.launches[i].dispatch_ps, off.result.launches[i].dispatch_ps);
    EXPECT_EQ(on.result.launches[i].stall_ps, off.result.launches[i].stall_ps);
  }
}

class LookaheadPe : public testing::TestWithParam<int> {};  // queue depth

TEST_P(LookaheadPe, GqaDecodeOpt3GivesTheSameOpLog) {
  PeConfig cfg;
  cfg.scheduler.queue_depth = GetParam();
  expect_same_pe_run([](Tl& tl) { gqa_decode_opt3(tl, small_gqa(1000)); }, cfg);
}

TEST_P(LookaheadPe, GqaDecodeOpt2GivesTheSameOpLog) {
  PeConfig cfg;
  cfg.scheduler.queue_depth = GetParam();
  expect_same_pe_run([](Tl& tl) { gqa_decode_opt2(tl, small_gqa(1000)); }, cfg);
}

TEST_P(LookaheadPe, DataModeGivesTheSameOpLog) {
  PeConfig cfg;
  cfg.scheduler.queue_depth = GetParam();
  cfg.data_mode = true;
  expect_same_pe_run([](Tl& tl) { gqa_decode_opt3(tl, small_gqa(300)); }, cfg);
}

INSTANTIATE_TEST_SUITE_P(QueueDepths, LookaheadPe, testing::Values(1, 3, 8, 64));

// The comparisons above mean something only if look-ahead ran: the
// runner's switch reaches the calendar, which then runs most instants
// ahead of SystemC's time (opt3: all but those that wake the kernel).
TEST(LookaheadPe, TheRunnersSwitchReachesTheCalendar) {
  for (bool lookahead : {false, true}) {
    const nlohmann::json j = run_function_isolated([lookahead] {
      RunSpec spec;
      spec.launches = {{"k", [](Tl& tl) { gqa_decode_opt3(tl, small_gqa(1000)); }}};
      spec.lookahead = lookahead;
      const RunResult r = run_in_process(spec);
      nlohmann::json out;
      out["ok"] = r.ok;
      out["ahead"] = InstantCalendar::get().instants_ahead();
      out["sweeps"] = InstantCalendar::get().sweeps();
      return out;
    });
    ASSERT_FALSE(j.contains("error")) << j.dump();
    ASSERT_TRUE(j["ok"].get<bool>());
    if (!lookahead) {
      EXPECT_EQ(j["ahead"].get<uint64_t>(), 0u);
    } else {
      EXPECT_GT(j["ahead"].get<uint64_t>(), j["sweeps"].get<uint64_t>() / 2) << j.dump();
    }
  }
}

// Waveforms: PE_CPU's and PE_SCHEDULER's signal methods are processes
// outside the calendar, woken at once and after a dispatch's time (the
// state turning stalled); the VCD must not change. Here every instant
// changes a signal, so the calendar runs none ahead (the signal wakes a
// process outside it): LookaheadMesh.WaveformsAreTheSame has a run that
// does.
TEST(LookaheadPe, WaveformsAreTheSame) {
  test::TempDir dir;
  std::string vcd[2];
  for (int on = 0; on < 2; ++on) {
    RunSpec spec;
    spec.config.scheduler.queue_depth = 2;  // writes held by a full queue: the stalled state
    spec.launches = {{"k", [](Tl& tl) { gqa_decode_opt3(tl, small_gqa(500)); }}};
    spec.vcd_path = dir.file(on ? "on.vcd" : "off.vcd");
    spec.lookahead = on;
    spec.timeout_s = 300;
    const RunResult r = run_isolated(spec);
    ASSERT_TRUE(r.ok) << r.error;
    // SystemC's header carries the date: from $timescale on.
    const std::string text = test::read_file(spec.vcd_path);
    const size_t from = text.find("$timescale");
    ASSERT_NE(from, std::string::npos);
    vcd[on] = text.substr(from);
  }
  EXPECT_GT(vcd[0].size(), 1000u);
  EXPECT_TRUE(vcd[1] == vcd[0]) << "the VCDs differ";
}

// A kernel that waits for the queue to drain (tl.wait) between phases and
// spins PE_CPU (tl.cycles): the kernel thread sleeps and wakes mid-run.
TEST(LookaheadPe, WaitsAndCpuCyclesGiveTheSameOpLog) {
  expect_same_pe_run(
      [](Tl& tl) {
        const Tensor x = tl.hbm("x", 128, 128, Dtype::kBf16);
        const Tensor t = tl.tcm("t", 128, 128, Dtype::kBf16);
        test::init(tl, {x});
        for (int i = 0; i < 20; ++i) {
          tl.load(t, x);
          tl.exp(t, t);
          if (i % 3 == 0) tl.cycles(100 + uint64_t(i));
          if (i % 5 == 0) tl.wait();
        }
      },
      PeConfig{});
}

std::string mesh_oplog(const MeshRunSpec& base, bool lookahead, const test::TempDir& dir, MeshRunResult* out) {
  MeshRunSpec spec = base;
  spec.lookahead = lookahead;
  spec.timeout_s = 300;
  spec.oplog_path = dir.file(lookahead ? "mesh_on.csv" : "mesh_off.csv");
  *out = run_mesh_isolated(spec);
  EXPECT_TRUE(out->ok) << out->error;
  return test::read_file(spec.oplog_path);
}

void expect_same_mesh_run(const MeshRunSpec& spec) {
  test::TempDir dir;
  MeshRunResult off, on;
  const std::string off_log = mesh_oplog(spec, false, dir, &off), on_log = mesh_oplog(spec, true, dir, &on);
  EXPECT_GT(off_log.size(), 100u);
  EXPECT_TRUE(on_log == off_log) << "the op logs differ";
  EXPECT_EQ(on.start_ps, off.start_ps);
  EXPECT_EQ(on.end_ps, off.end_ps);
  ASSERT_EQ(on.links.size(), off.links.size());
  for (size_t i = 0; i < on.links.size(); ++i) {
    EXPECT_EQ(on.links[i].busy_ps, off.links[i].busy_ps) << on.links[i].name;
    EXPECT_EQ(on.links[i].transactions, off.links[i].transactions) << on.links[i].name;
  }
}

// An all-reduce of 16384 fp32 per PE on a 2 x 2 x 4 mesh.
MeshRunSpec all_reduce_spec(bool ring) {
  MeshRunSpec spec;
  spec.config = test::mesh_config(2, 2, 4);
  spec.kernel_name = ring ? "ring" : "lrab";
  spec.kernel = [ring](Tl& tl) {
    const Tensor x = tl.hbm("x", 1, 16384, Dtype::kFp32);
    test::init(tl, {x});
    AllReduceOptions opt;
    opt.chunk_elems = 1024;
    if (ring) all_reduce_ring(tl, x, opt);
    else all_reduce_lrab(tl, x, opt);
  };
  return spec;
}

TEST(LookaheadMesh, AllReduceGivesTheSameOpLog) {
  for (bool ring : {false, true}) {
    const MeshRunSpec spec = all_reduce_spec(ring);
    SCOPED_TRACE(spec.kernel_name);
    expect_same_mesh_run(spec);
  }
}

// A mesh's waveforms with and without look-ahead. The LRAB all-reduce
// has instants the calendar runs ahead of SystemC's time (31 of 1412
// sweeps when written), and the signal changes they make wait for
// SystemC's time to get there: the test asserts that some instant ran
// ahead. (Waking the waveform methods at once instead makes these VCDs
// differ; LookaheadPe.WaveformsAreTheSame does not see it.)
TEST(LookaheadMesh, WaveformsAreTheSame) {
  test::TempDir dir;
  std::string vcd[2];
  uint64_t ahead[2] = {};
  for (int on = 0; on < 2; ++on) {
    const std::string path = dir.file(on ? "on.vcd" : "off.vcd");
    const nlohmann::json j = run_function_isolated([&path, on] {
      MeshRunSpec spec = all_reduce_spec(false);  // LRAB
      spec.vcd_path = path;
      spec.lookahead = on;
      const MeshRunResult r = run_mesh_in_process(spec);
      nlohmann::json out;
      out["ok"] = r.ok;
      out["error"] = r.error;
      out["ahead"] = InstantCalendar::get().instants_ahead();
      return out;
    });
    ASSERT_TRUE(j["ok"].get<bool>()) << j.dump();
    ahead[on] = j["ahead"].get<uint64_t>();
    const std::string text = test::read_file(path);
    const size_t from = text.find("$timescale");  // SystemC's header carries the date
    ASSERT_NE(from, std::string::npos);
    vcd[on] = text.substr(from);
  }
  EXPECT_EQ(ahead[0], 0u);
  EXPECT_GT(ahead[1], 0u) << "no instant ran ahead: the comparison shows nothing";
  EXPECT_GT(vcd[0].size(), 1000u);
  EXPECT_TRUE(vcd[1] == vcd[0]) << "the VCDs differ";
}

TEST(LookaheadMesh, LongContextDecodeGivesTheSameOpLog) {
  for (LongCtxCase c : kLongCtxCases) {
    MeshRunSpec spec;
    spec.config = test::mesh_config(2, 2, 2, /*data=*/c == LongCtxCase::kCubeSpPeSp);
    spec.kernel_name = long_ctx_case_name(c);
    spec.kernel = [c](Tl& tl) { gqa_long_ctx(tl, c, small_gqa(2048)); };
    SCOPED_TRACE(spec.kernel_name);
    expect_same_mesh_run(spec);
  }
}

}  // namespace
}  // namespace kb
