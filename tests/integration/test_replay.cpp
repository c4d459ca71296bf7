// The recorded command stream: docs/cost-model.md TR7
// (live and replay give identical dispatch accounting, op logs and latency),
// deterministic recording, a hand-written stream, and loader errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/test_files.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "kernels/gemm/gemm_composite.h"
#include "kernels/gemm/gemm_tiled_single_op.h"
#include "kernels/recipes/softmax_merge.h"
#include "models/util/asan_stack.h"  // KB_ASAN
#include "tb/replay/command_stream.h"
#include "tests/sim_util.h"


namespace kb {
namespace {

namespace fs = std::filesystem;
using kb::test::TempDir;
using kb::test::read_file;
using kb::test::write_file;
using test::of_kind;
using test::period_ps;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const char kData[] = "tests/data/replay/";

using Launches = std::vector<std::pair<std::string, Kernel>>;

RunResult run(const Launches& launches, const PeConfig& cfg, const std::string& record = "") {
  RunSpec spec;
  spec.config = cfg;
  spec.launches = launches;
  spec.keep_records = true;
  spec.record_path = record;
  return run_isolated(spec);
}

std::vector<std::string> csv_rows(const RunResult& r) {
  std::vector<std::string> rows;
  for (const OpRecord& rec : r.records) rows.push_back(op_log_csv_row(rec));
  return rows;
}

// TR7: the same op log row for row, the same latency, the same dispatch
// totals (exact and charged) per launch.
void expect_same_run(const RunResult& live, const RunResult& replay) {
  ASSERT_TRUE(live.ok) << live.error;
  ASSERT_TRUE(replay.ok) << replay.error;
  const auto a = csv_rows(live), b = csv_rows(replay);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[i]) << "op-log row " << i;
  EXPECT_EQ(live.latency_ps(), replay.latency_ps());
  EXPECT_EQ(live.end_ps, replay.end_ps);
  ASSERT_EQ(live.launches.size(), replay.launches.size());
  for (size_t i = 0; i < live.launches.size(); ++i) {
    const LaunchResult &l = live.launches[i], &p = replay.launches[i];
    EXPECT_EQ(l.kernel, p.kernel);
    EXPECT_EQ(l.start_ps, p.start_ps);
    EXPECT_EQ(l.end_ps, p.end_ps);
    EXPECT_EQ(l.commands, p.commands);
    for (int t = 0; t < 7; ++t) EXPECT_EQ(l.commands_by_type[t], p.commands_by_type[t]) << t;
    EXPECT_EQ(l.logical_bytes, p.logical_bytes);
    EXPECT_EQ(l.dispatch_cycles_exact, p.dispatch_cycles_exact);  // exact, not near
    EXPECT_EQ(l.dispatch_cycles_charged, p.dispatch_cycles_charged);
    EXPECT_EQ(l.dispatch_ps, p.dispatch_ps);
    EXPECT_EQ(l.stall_ps, p.stall_ps);
    EXPECT_EQ(l.cpu_cycles_ps, p.cpu_cycles_ps);
  }
}

// --- kernels

void tiled(Tl& tl) {  // partial tiles: views with a row stride > cols
  gemm_tiled_single_op(tl, GemmShape{160, 128, 96, Dtype::kBf16, 64, 64, 64});
}

void composite(Tl& tl) { gemm_composite(tl, GemmShape{}); }

// The softmax_merge recipe over a few KV tiles, with the scores scaled by
// 1/sqrt(d) (a float extra that is not a short decimal), -inf fills,
// host-initialised V, tl.cycles and a tl.wait in the middle.
void merge_stream(Tl& tl) {
  const int64_t g = 8, d = 128, t = 64, tiles = 3;
  const Tensor v = tl.hbm("V", t * tiles, d, Dtype::kBf16);
  const Tensor out = tl.hbm("O out", g, d, Dtype::kFp32);
  tl.host_random(v, 11);
  const Tensor s = tl.tcm("S", g, t, Dtype::kFp32);
  const Tensor m[2] = {tl.tcm("m0", g, 1, Dtype::kFp32), tl.tcm("m1", g, 1, Dtype::kFp32)};
  SoftmaxMergeState st{m[0], m[1], tl.tcm("l", g, 1, Dtype::kFp32),
                       tl.tcm("O", g, d, Dtype::kFp32)};
  const SoftmaxMergeScratch x{tl.tcm("m_tile", g, 1, Dtype::kFp32),
                              tl.tcm("corr", g, 1, Dtype::kFp32),
                              tl.tcm("P", g, t, Dtype::kFp32), tl.tcm("row_sum", g, 1, Dtype::kFp32)};
  tl.fill(s, 1.0);
  tl.fill(m[0], -std::numeric_limits<double>::infinity());
  tl.fill(st.l, 0.0);
  tl.fill(st.o, 0.0);
  tl.cycles(37);
  for (int64_t i = 0; i < tiles; ++i) {
    st.m_in = m[i % 2];
    st.m_out = m[(i + 1) % 2];
    tl.scale(s, s, 1.0 / std::sqrt(double(d)));
    softmax_merge(tl, s, tl.rows(v, i * t, t), st, x);
    if (i == 0) tl.wait();
  }
  tl.cycles(5);
  tl.store(out, st.o);
}

struct ParityCase {
  const char* name;
  Launches launches;
};

std::vector<ParityCase> parity_cases() {
  return {{"gemm_tiled_single_op", {{"gemm_tiled_single_op", tiled}}},
          {"gemm_composite", {{"gemm_composite", composite}}},
          {"softmax_merge", {{"softmax_merge stream", merge_stream}}},
          // Several launches in one run: IDs stay valid across sections.
          {"all_three", {{"tiled", tiled}, {"composite", composite}, {"merge", merge_stream}}}};
}

PeConfig cost_model(double r) {
  PeConfig cfg;
  cfg.cost_model.byte_cycles_recip = r;
  return cfg;
}

class PathParity : public ::testing::TestWithParam<std::tuple<ParityCase, double>> {};

// docs/cost-model.md TR7: record a live run, replay the file, compare everything.
TEST_P(PathParity, LiveAndReplayAreIdentical) {
  const auto& [c, r] = GetParam();
  const PeConfig cfg = cost_model(r);
  TempDir dir;
  const std::string path = dir.file("live.stream");
  const RunResult live = run(c.launches, cfg, path);
  ASSERT_TRUE(live.ok) << live.error;
  ASSERT_GT(live.launches.at(0).commands, 0u);

  const Launches loaded = load_command_stream(path);
  ASSERT_EQ(loaded.size(), c.launches.size());
  const RunResult replay = run(loaded, cfg);
  expect_same_run(live, replay);
  std::printf("[ info ] %s R=%g: %zu op-log rows, latency %llu ps, dispatch %.4f cycles\n", c.name,
              r, live.records.size(), (unsigned long long)live.latency_ps(),
              live.launches.at(0).dispatch_cycles_exact);
}

INSTANTIATE_TEST_SUITE_P(Kernels, PathParity,
                         ::testing::Combine(::testing::ValuesIn(parity_cases()),
                                            ::testing::Values(0.0625, 0.25)),
                         [](const auto& param_info) {
                           return std::string(std::get<0>(param_info.param).name) +
                                  (std::get<1>(param_info.param) == 0.0625 ? "_default" : "_R0_25");
                         });

// Replay reads the cost model of the run it is in, not the recording's: a
// stream recorded at the default R replays at R = 0.25 exactly like the live
// kernel at R = 0.25.
TEST(CostModel, ReplayUsesTheRunsCostModel) {
  TempDir dir;
  const std::string path = dir.file("default_r.stream");
  const Launches live = {{"softmax_merge stream", merge_stream}};
  ASSERT_TRUE(run(live, cost_model(0.0625), path).ok);
  const RunResult live_q = run(live, cost_model(0.25));
  const RunResult replay_q = run(load_command_stream(path), cost_model(0.25));
  expect_same_run(live_q, replay_q);
  const RunResult replay_d = run(load_command_stream(path), cost_model(0.0625));
  ASSERT_TRUE(replay_d.ok) << replay_d.error;
  EXPECT_GT(replay_q.launches.at(0).dispatch_cycles_exact,
            replay_d.launches.at(0).dispatch_cycles_exact);
}

// --- the stream file itself

TEST(Recording, TwiceGivesByteIdenticalFiles) {
  TempDir dir;
  const Launches k = {{"tiled", tiled}, {"merge", merge_stream}};
  ASSERT_TRUE(run(k, PeConfig{}, dir.file("a.stream")).ok);
  ASSERT_TRUE(run(k, PeConfig{}, dir.file("b.stream")).ok);
  const std::string a = read_file(dir.file("a.stream"));
  EXPECT_EQ(a, read_file(dir.file("b.stream")));
  // A replay records the same file again.
  ASSERT_TRUE(run(load_command_stream(dir.file("a.stream")), PeConfig{}, dir.file("c.stream")).ok);
  EXPECT_EQ(a, read_file(dir.file("c.stream")));
  // What the file holds, in the documented form.
  EXPECT_THAT(a, StartsWith("# kernbench command stream v1\n"));
  EXPECT_THAT(a, HasSubstr("\nkernel merge\n"));
  EXPECT_THAT(a, HasSubstr(" O%20out hbm fp32 8x128 @0x"));  // escaped space
  EXPECT_THAT(a, HasSubstr("extra=factor:float:0.08838834764831843\n"));
  EXPECT_THAT(a, HasSubstr("extra=value:float:-inf\n"));
  EXPECT_THAT(a, HasSubstr("\ncycles 37\n"));
  EXPECT_THAT(a, HasSubstr("\nwait\n"));
  EXPECT_THAT(a, HasSubstr("\nhost_random 70 seed=11 lo=-1 hi=1\n"));
  EXPECT_THAT(a, HasSubstr("\ncomposite softmax_merge rw="));
  EXPECT_THAT(a, HasSubstr(" accumulate\n"));  // single-op gemm flag
  EXPECT_THAT(a, HasSubstr("extra=accumulate:bool:1\nend\n"));
  std::printf("[ info ] recorded stream: %zu bytes\n", a.size());
}

// Every extra type and awkward names survive record -> load -> replay ->
// record unchanged (the second recording is the first byte for byte).
TEST(Recording, ExtrasAndNamesRoundTrip) {
  const Kernel k = [](Tl& tl) {
    const Tensor a = tl.tcm("a b%c=\"d", 16, 16, Dtype::kFp32);
    const Tensor e = tl.tcm("", 16, 16, Dtype::kFp32);
    tl.host_random(a, 3, -2.5, 0.1);
    tl.math(MathOp::kScale, e, {a}, {{"factor", 0.1}});
    // Operand names that collide with the `op` line's keys or hold a space.
    OpSpec op = math_op(MathOp::kAdd, OpScope::kPrologue, e, {a, e}, {});
    op.operands[0].name = "out";
    op.operands[1].name = "second operand";
    tl.composite(CompositeCmd{"my composite", {op}, {e.handle, a.handle}});
  };
  TempDir dir;
  const RunResult live = run({{"odd kernel", k}}, PeConfig{}, dir.file("a.stream"));
  ASSERT_TRUE(live.ok) << live.error;
  const std::string a = read_file(dir.file("a.stream"));
  EXPECT_THAT(a, HasSubstr("\nkernel odd%20kernel\n"));
  EXPECT_THAT(a, HasSubstr(" a%20b%25c%3D%22d tcm fp32 16x16 @0x0 stride=16\n"));
  EXPECT_THAT(a, HasSubstr(" \"\" tcm fp32 16x16 @0x"));
  EXPECT_THAT(a, HasSubstr("\nhost_random 1 seed=3 lo=-2.5 hi=0.1\n"));
  EXPECT_THAT(a, HasSubstr(" extra=factor:float:0.1\n"));
  EXPECT_THAT(a, HasSubstr("\ncomposite my%20composite rw=2,1\n"
                           "  op add prologue out=2 %6Fut=1 second%20operand=2\n"
                           "end\n"));
  const RunResult replay = run(load_command_stream(dir.file("a.stream")), PeConfig{},
                               dir.file("b.stream"));
  expect_same_run(live, replay);
  EXPECT_EQ(a, read_file(dir.file("b.stream")));
}

// Every extra type is written and parsed back; a command whose extras have no
// field in its binary descriptor is refused at dispatch (PE_CPU writes the
// descriptor's bytes), so the recorder is driven directly.
TEST(Recording, EveryExtraTypeIsWrittenAndParsedButHasNoDescriptor) {
  TempDir dir;
  TensorDesc a, e;
  a.handle = 11, a.space = MemSpace::kTcm, a.rows = a.cols = a.row_stride = 16, a.address = kTcmBase;
  e = a, e.handle = 12, e.address = kTcmBase + 1024;
  {
    StreamRecorder rec(dir.file("a.stream"));
    rec.on_launch("odd kernel");
    rec.on_tensor(a, "a");
    rec.on_tensor(e, "e");
    rec.on_command(MathCmd{MathOp::kExp, {a.handle}, e.handle,
                           {{"flag", true},
                            {"no", false},
                            {"n", int64_t(-7)},
                            {"f", 0.1},
                            {"tiny", 5e-324},
                            {"list", std::vector<int64_t>{64, -1, 3}},
                            {"none", std::vector<int64_t>{}},
                            {"s", std::string("two words:%")},
                            {"empty", std::string()},
                            {"odd:name", 1.5}}});
    rec.close();
  }
  const std::string s = read_file(dir.file("a.stream"));
  EXPECT_THAT(s, HasSubstr(" extra=flag:bool:1 extra=no:bool:0 extra=n:int:-7 extra=f:float:0.1"
                           " extra=tiny:float:5e-324 extra=list:ints:64,-1,3 extra=none:ints:"
                           " extra=s:str:two%20words:%25 extra=empty:str:\"\""
                           " extra=odd%3Aname:float:1.5\n"));
  const RunResult replay = run(load_command_stream(dir.file("a.stream")), PeConfig{}, "");
  EXPECT_FALSE(replay.ok);
  EXPECT_THAT(replay.error, HasSubstr("no binary descriptor: exp: extra 'flag' has no field in the descriptor"));
}

TEST(Recording, UnwritablePathFailsTheRunNamingIt) {
  const std::string path = "/nonexistent-dir/x.stream";
  EXPECT_THROW(
      {
        try {
          StreamRecorder rec(path);
        } catch (const std::runtime_error& e) {
          EXPECT_THAT(e.what(), HasSubstr(path));
          throw;
        }
      },
      std::runtime_error);
  const RunResult r = run({{"k", composite}}, PeConfig{}, path);
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.error, HasSubstr(path));
}

// --- a hand-written stream

// docs/cost-model.md D2 sizes of the fixture's commands, counted by hand.
TEST(HandWritten, ReplaysWithTheFormulaDispatch) {
  const std::string path = std::string(kData) + "hand_written.stream";
  const Launches k = load_command_stream(path);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].first, "hand_written");
  const PeConfig cfg;
  const RunResult r = run(k, cfg);
  ASSERT_TRUE(r.ok) << r.error;

  const uint32_t rowmax = 1 + 1 + (1 + 8) + 8 + 1;         // 20
  const uint32_t sub_bcast = 1 + 1 + (1 + 2 * 8) + 8 + 1;  // 28
  struct Expected {
    const char* type;
    uint32_t bytes;
    uint64_t fixed;
  };
  const uint64_t single = cfg.cost_model.fixed_per_single_op_cmd_cycles;
  const Expected expected[] = {
      {"DmaReadCmd", 4 + 8 + 8, single},
      {"DmaReadCmd", 4 + 8 + 8, single},
      {"GemmCmd", 4 + 3 * 8 + 3 * 4 + 2, single},
      {"MathCmd", 4 + 1 + (1 + 8) + 8 + (1 + 4), single},  // scale, one float extra
      {"CompositeCmd", 4 + (1 + rowmax + sub_bcast) + (1 + 8), cfg.cost_model.fixed_per_cmd_cycles},
      {"DmaWriteCmd", 4 + 8 + 8, single},
  };
  const auto d = of_kind(r, RecordKind::kDispatch);
  ASSERT_EQ(d.size(), std::size(expected));
  EXPECT_EQ(r.launches.at(0).commands, std::size(expected));
  double total = 0;
  for (size_t i = 0; i < d.size(); ++i) {
    const double formula = double(expected[i].fixed) +
                           expected[i].bytes * cfg.cost_model.byte_cycles_recip;
    EXPECT_STREQ(d[i].cmd_type, expected[i].type) << i;
    EXPECT_EQ(d[i].cmd_id, i + 1);
    EXPECT_EQ(d[i].logical_bytes, expected[i].bytes) << i;
    EXPECT_EQ(d[i].dispatch_cycles_exact, formula) << i;
    EXPECT_EQ(d[i].dispatch_cycles_charged, uint64_t(std::ceil(formula))) << i;
    total += formula;
  }
  EXPECT_EQ(r.launches.at(0).dispatch_cycles_exact, total);
  // `cycles 100`: exactly 100 cycles, no command.
  const auto cyc = of_kind(r, RecordKind::kCpuCycles);
  ASSERT_EQ(cyc.size(), 1u);
  EXPECT_EQ(cyc[0].end_ps - cyc[0].start_ps, 100 * period_ps(cfg));
  // `wait`: the store is dispatched only after every earlier stage ended.
  uint64_t last_stage = 0;
  for (const OpRecord& rec : r.records)
    if (rec.component != Component::kPeCpu && rec.cmd_id < 6) last_stage = std::max(last_stage, rec.end_ps);
  EXPECT_GE(d[5].start_ps, last_stage);
  EXPECT_GE(d[5].start_ps, cyc[0].end_ps);
}

// Well-formed but wrong: PE_CPU rejects it at dispatch with the message a
// live kernel gets, after the stream's FILE:LINE and before the line.
TEST(HandWritten, SemanticErrorFailsLikeALiveKernel) {
  const std::string path = std::string(kData) + "dma_read_from_tcm.stream";
  const RunResult replay = run(load_command_stream(path), PeConfig{});
  EXPECT_FALSE(replay.ok);
  EXPECT_THAT(replay.error, HasSubstr("DmaReadCmd"));
  const RunResult live = run({{"bad_load",
                               [](Tl& tl) {
                                 const Tensor src = tl.tcm("src", 64, 64, Dtype::kBf16);
                                 const Tensor dst = tl.tcm("dst", 64, 64, Dtype::kBf16);
                                 tl.load(dst, src);
                               }}},
                             PeConfig{});
  EXPECT_FALSE(live.ok);
  EXPECT_EQ(replay.error, path + ":7: " + live.error + " (dma_read dst=2 src=1)");
}

// --- loader errors: FILE:LINE: what (the offending line), before any run

struct Malformed {
  const char* name;
  std::string text;
  int line;
  const char* what;
};

const char kHead[] = "# kernbench command stream v1\n";
const char kTensors[] =
    "kernel k\n"
    "tensor 1 x hbm bf16 64x64 @0x10000000000\n"
    "tensor 2 a tcm bf16 64x64 @0x0\n";

std::vector<Malformed> malformed_cases() {
  const std::string h = kHead, t = kTensors;
  return {
      {"UnknownKeyword", h + t + "dma_reed dst=2 src=1\n", 5,
       "unknown keyword 'dma_reed' (dma_reed dst=2 src=1)"},
      {"UnknownId", h + t + "dma_read dst=2 src=9\n", 5,
       "unknown tensor ID 9 in 'src=9' (dma_read dst=2 src=9)"},
      {"BadNumber", h + t + "cycles 12x\n", 5, "bad number '12x' for cycles (cycles 12x)"},
      {"BadShape", h + "kernel k\ntensor 1 x hbm bf16 64xq4 @0x0\n", 3,
       "bad number 'q4' for cols in '64xq4'"},
      {"CompositeWithoutEndAtEof",
       h + t + "composite c rw=2\n  op exp prologue out=2 src_a=2\n", 5,
       "composite has no 'end' before end of file (composite c rw=2)"},
      {"CompositeWithoutEndBeforeKernel",
       h + t + "composite c rw=2\n  op exp prologue out=2 src_a=2\nkernel k2\n", 5,
       "composite has no 'end' before 'kernel' on line 7 (composite c rw=2)"},
      {"CommandInsideComposite", h + t + "composite c\ncycles 3\nend\n", 6,
       "expected 'op' or 'end' inside composite 'c' (cycles 3)"},
      {"MissingHeader", t + "cycles 3\n", 1, "missing header '# kernbench command stream v1' (kernel k)"},
      {"EmptyFile", "", 1, "missing header"},
      {"UnknownVersion", "# kernbench command stream v2\n" + t, 1,
       "unsupported command stream version"},
      {"UnknownMathOp", h + t + "math sqrt out=2 src_a=2\n", 5,
       "unknown math op 'sqrt' (math sqrt out=2 src_a=2)"},
      {"UnknownOpKind", h + t + "composite c\n  op conv tile out=2\nend\n", 6,
       "unknown op kind 'conv'"},
      {"UnknownScope", h + t + "composite c\n  op exp tiles out=2 src_a=2\nend\n", 6,
       "unknown scope 'tiles'"},
      {"UnknownDtype", h + "kernel k\ntensor 1 x hbm fp64 4x4 @0x0\n", 3, "unknown dtype 'fp64'"},
      {"UnknownSpace", h + "kernel k\ntensor 1 x sram fp32 4x4 @0x0\n", 3, "unknown space 'sram'"},
      {"MissingField", h + t + "dma_write dst=1\n", 5, "missing field 'src=' (dma_write dst=1)"},
      {"UnknownField", h + t + "copy dst=2 src=2 size=4\n", 5, "unknown field 'size=4'"},
      {"DuplicateId", h + t + "tensor 2 b tcm bf16 64x64 @0x2000\n", 5,
       "tensor ID 2 is already declared"},
      {"LineBeforeKernel", h + "cycles 3\n", 2, "'cycles' before the first 'kernel' line (cycles 3)"},
      {"EndWithoutComposite", h + t + "end\n", 5, "'end' without 'composite'"},
      {"BadExtra", h + t + "math scale out=2 src_a=2 extra=factor:0.5\n", 5,
       "extra 'extra=factor:0.5' must be extra=NAME:TYPE:VALUE"},
      {"BadExtraType", h + t + "math scale out=2 src_a=2 extra=factor:double:0.5\n", 5,
       "unknown extra type 'double'"},
      {"BadFloat", h + t + "math scale out=2 src_a=2 extra=factor:float:0.5.1\n", 5,
       "bad number '0.5.1' for extra=factor:float:0.5.1"},
      {"HostRandomUnknownId", h + t + "host_random 3 seed=1\n", 5,
       "unknown tensor ID 3 in 'host_random 3' (host_random 3 seed=1)"},
      {"HostRandomMissingSeed", h + t + "host_random 1 lo=0\n", 5, "missing field 'seed='"},
      {"BadEscape", h + "kernel k%2\n", 2, "bad %XX escape in name 'k%2'"},
  };
}

class LoaderError : public ::testing::TestWithParam<Malformed> {};

TEST_P(LoaderError, NamesFileLineAndProblem) {
  const Malformed& m = GetParam();
  TempDir dir;
  const std::string path = dir.file(std::string(m.name) + ".stream");
  write_file(path, m.text);
  try {
    load_command_stream(path);
    FAIL() << "no error for:\n" << m.text;
  } catch (const StreamError& e) {
    EXPECT_THAT(e.what(), StartsWith(path + ":" + std::to_string(m.line) + ": "));
    EXPECT_THAT(e.what(), HasSubstr(m.what));
  }
}

INSTANTIATE_TEST_SUITE_P(Malformed, LoaderError, ::testing::ValuesIn(malformed_cases()),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(LoaderErrors, MissingFileNamesIt) {
  try {
    load_command_stream("tests/data/replay/no_such.stream");
    FAIL();
  } catch (const StreamError& e) {
    EXPECT_THAT(e.what(), HasSubstr("tests/data/replay/no_such.stream"));
  }
}

// An ID declared by an earlier section is usable later (IDs are file-wide);
// running the later section without it fails naming the line.
TEST(LoaderErrors, IdFromASectionThatDidNotRun) {
  TempDir dir;
  const std::string path = dir.file("two.stream");
  write_file(path, std::string(kHead) + kTensors +
                       "host_random 1 seed=5\n"
                       "kernel k2\n"
                       "dma_read dst=2 src=1\n");
  const Launches k = load_command_stream(path);
  ASSERT_EQ(k.size(), 2u);
  EXPECT_TRUE(run(k, PeConfig{}).ok);
  const RunResult alone = run({k[1]}, PeConfig{});
  EXPECT_FALSE(alone.ok);
  EXPECT_THAT(alone.error, HasSubstr(path + ":7: tensor ID 2 was declared by a kernel section"));
}


// --- tensors the descriptor table rejects: each was accepted
// before (exit 0; in data mode the misaligned one wrote past a 64 KiB page).
// The same validation as a live kernel's tl.hbm/tl.tcm, reported at the
// stream's FILE:LINE with the line, in timing and data mode alike.

// A stream that fails at one of its lines.
struct StreamCase {
  const char* file;
  int line;
  const char* what;  // the message between "FILE:LINE: " and " (the line)"
};

void PrintTo(const StreamCase& c, std::ostream* os) { *os << c.file; }

// The error a replayed stream's failure carries: "FILE:LINE: what (the
// offending line, as the file has it)".
std::string stream_error(const std::string& path, const StreamCase& c) {
  std::istringstream in(read_file(path));
  std::string line;
  for (int i = 0; i < c.line; ++i) std::getline(in, line);
  return path + ":" + std::to_string(c.line) + ": " + c.what + " (" + line + ")";
}

using BadTensor = StreamCase;

class RejectedTensor : public ::testing::TestWithParam<std::tuple<BadTensor, bool>> {};

TEST_P(RejectedTensor, FailsTheRunNamingFileLineKernelAndTensor) {
  const auto& [c, data] = GetParam();
  const std::string path = std::string(kData) + c.file;
  PeConfig cfg;
  cfg.data_mode = data;
  const RunResult r = run(load_command_stream(path), cfg);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, stream_error(path, c));
  EXPECT_EQ(r.launches.at(0).commands, 0u);  // nothing dispatched
}

const BadTensor kBadTensors[] = {
    {"misaligned_fp32_straddles_page.stream", 6,
     "kernel 'misaligned': tensor 'x' [4, 4] fp32 hbm at 0x1000000fffe: address must be a multiple of "
     "4 bytes (fp32 alignment)"},
    {"hbm_near_2_64.stream", 5,
     "kernel 'near_top': tensor 'x' [1, 2] fp32 hbm at 0xfffffffffffffffc: its 8 bytes run "
     "past the end of the 64-bit address space"},
    {"hbm_range_wraps.stream", 4,
     "kernel 'wraps': tensor 'x' [64, 64] bf16 hbm at 0xfffffffffffff000: its 8192 bytes run "
     "past the end of the 64-bit address space"},
    {"tcm_beyond_capacity.stream", 4,
     "kernel 'tcm_high': tensor 'a' [64, 64] bf16 tcm at 0xffff0000: bytes [0xffff0000, 0xffff2000) "
     "must lie inside TCM [0x0, 0x400000) (pe.attrs.tcm.size_bytes = 4194304)"},
    {"tcm_one_element_over.stream", 4,
     "kernel 'tcm_over': tensor 'a' [1, 1048577] fp32 tcm at 0x0: bytes [0x0, 0x400004) must lie "
     "inside TCM [0x0, 0x400000) (pe.attrs.tcm.size_bytes = 4194304)"},
    {"tcm_huge.stream", 4,
     "kernel 'tcm_huge': tensor 'a' [1000000000000, 250000000000] fp32 tcm at 0x0: spans more than "
     "2^63 - 1 elements ((rows - 1) x row stride 250000000000 + cols)"},
};

// A (stream file, data mode) case's test name: the file's stem without '_',
// then Data or Timing.
const auto stream_case_name = [](const auto& test) {
  std::string n = std::get<0>(test.param).file;
  n = n.substr(0, n.find('.'));
  n.erase(std::remove(n.begin(), n.end(), '_'), n.end());
  return n + (std::get<1>(test.param) ? "Data" : "Timing");
};

INSTANTIATE_TEST_SUITE_P(Streams, RejectedTensor,
                         ::testing::Combine(::testing::ValuesIn(kBadTensors), ::testing::Bool()),
                         stream_case_name);

// The TCM bound follows the configured size: the same tensor fits in an
// 8 MiB TCM.
TEST(RejectedTensorBounds, TcmCapacityIsTheConfiguredSize) {
  PeConfig cfg;
  cfg.tcm.size_bytes = 8u << 20;
  const RunResult r = run(load_command_stream(std::string(kData) + "tcm_one_element_over.stream"), cfg);
  EXPECT_TRUE(r.ok) << r.error;
}

// Valid edges are accepted: the last aligned fp32 element below 2^64 - 4
// (the span may end at 2^64 - 1 but not wrap), and a tensor ending exactly
// at the end of TCM.
TEST(RejectedTensorBounds, EdgesThatFitAreAccepted) {
  const std::string text = std::string(kHead) +
                           "kernel edges\n"
                           "tensor 1 x hbm fp32 1x1 @0xfffffffffffffff8\n"
                           "tensor 2 a tcm fp32 1x1048576 @0x0\n"
                           "tensor 3 b tcm bf16 1x1 @0x3ffffe\n";
  const RunResult r = run(parse_command_stream(text, "edges"), PeConfig{});
  EXPECT_TRUE(r.ok) << r.error;
  const RunResult over = run(parse_command_stream(
                                 std::string(kHead) + "kernel e\ntensor 1 x hbm fp32 1x1 @0xfffffffffffffffc\n",
                                 "over"),
                             PeConfig{});
  EXPECT_EQ(over.error,
            "over:3: kernel 'e': tensor 'x' [1, 1] fp32 hbm at 0xfffffffffffffffc: its 4 bytes run "
            "past the end of the 64-bit address space (tensor 1 x hbm fp32 1x1 @0xfffffffffffffffc)");
}

// A stream's declarations may not be put below HBM's base as HBM, and a
// view-like line may not have a row stride below its columns.
TEST(RejectedTensorBounds, SpaceAndStride) {
  const RunResult low = run(
      parse_command_stream(std::string(kHead) + "kernel k\ntensor 1 x hbm fp32 4x4 @0x1000\n", "low"),
      PeConfig{});
  EXPECT_EQ(low.error,
            "low:3: kernel 'k': tensor 'x' [4, 4] fp32 hbm at 0x1000: an HBM address must be at least "
            "0x10000000000 (below it is TCM) (tensor 1 x hbm fp32 4x4 @0x1000)");
  const RunResult stride = run(parse_command_stream(std::string(kHead) +
                                                        "kernel k\ntensor 1 x hbm fp32 4x4 @0x10000000000 "
                                                        "stride=4611686018427387904\n",
                                                    "stride"),
                               PeConfig{});
  EXPECT_THAT(stride.error,
              StartsWith("stride:3: kernel 'k': tensor 'x' [4, 4] fp32 hbm at 0x10000000000: spans more "
                         "than 2^63 - 1 elements ((rows - 1) x row stride 4611686018427387904 + cols)"));
}

// --- bounded input

// /dev/zero was read without bound; any non-regular file is refused before
// reading.
TEST(LoaderErrors, DeviceIsRefused) {
  try {
    load_command_stream("/dev/zero");
    FAIL();
  } catch (const StreamError& e) {
    EXPECT_STREQ(e.what(), "command stream '/dev/zero': not a regular file (a character device)");
  }
}

TEST(LoaderErrors, NulByteIsRefused) {
  TempDir dir;
  const std::string path = dir.file("nul.stream");
  write_file(path, std::string(kHead) + kTensors + std::string("cycles 1\0\n", 10));
  try {
    load_command_stream(path);
    FAIL();
  } catch (const StreamError& e) {
    EXPECT_STREQ(e.what(), (path + ":5: NUL byte in command stream (expected text)").c_str());
  }
  // The same text given to the parser directly (as a fuzzer does).
  try {
    parse_command_stream(std::string(kHead) + kTensors + std::string("cycles 1\0\n", 10), "text");
    FAIL();
  } catch (const StreamError& e) {
    EXPECT_STREQ(e.what(), "text:5: NUL byte in command stream (expected text)");
  }
}

// A 10 MB token is not echoed whole in the message.
TEST(LoaderErrors, LongValuesAreCutShort) {
  const std::string huge(10'000'000, '7');
  try {
    parse_command_stream(std::string(kHead) + kTensors + "cycles " + huge + "x\n", "long");
    FAIL();
  } catch (const StreamError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what, "long:5: bad number '" + huge.substr(0, 200) + "... (10000001 bytes)' for cycles (cycles " +
                        huge.substr(0, 193) + "... (10000008 bytes))");
  }
}

// Parser memory is linear in the input and small: 100,000 one-command
// launches (1.8 MB) took 56 MB above the baseline when every step kept a
// copy of its line and a copy of every possible field; now the text is kept
// once. Measured in a child, whose peak RSS starts from the parent's
// current use.
TEST(LoaderMemory, ManyLaunchesStayWithinABoundProportionalToTheInput) {
#if defined(KB_ASAN)
  GTEST_SKIP() << "AddressSanitizer's redzones and quarantine inflate peak memory";
#endif
  std::string text = kHead;
  for (int i = 0; i < 100000; ++i) text += "kernel k\ncycles 1\n";
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    rusage before{}, after{};
    getrusage(RUSAGE_SELF, &before);
    size_t n = parse_command_stream(text, "many").size();
    getrusage(RUSAGE_SELF, &after);
    const long grown_kb = after.ru_maxrss - before.ru_maxrss;
    // 320 bytes per launch (one step, one section, one kernel) + the text.
    const long bound_kb = long(100000 * 320 + text.size()) / 1024;
    _exit(n == 100000 && grown_kb < bound_kb ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}


// --- commands that fail while they run or at dispatch: the
// stream's FILE:LINE and line, as any replayed kernel error, in timing and
// data mode alike; the run ends cleanly (no "(E549) uncaught exception").

using FailingStream = StreamCase;

class FailingCommand : public ::testing::TestWithParam<std::tuple<FailingStream, bool>> {};

TEST_P(FailingCommand, FailsTheRunAtItsFileAndLine) {
  const auto& [c, data] = GetParam();
  const std::string path = std::string(kData) + c.file;
  PeConfig cfg;
  cfg.data_mode = data;
  const RunResult r = run(load_command_stream(path), cfg);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, stream_error(path, c));
  ASSERT_EQ(r.launches.size(), 1u);
  EXPECT_EQ(r.launches[0].error, r.error);
}

// 10^16 cycles at 1 GHz: 10^19 ps; the second would end at 2 x 10^19 ps.
// The DMA's figures are computed from the configuration in test_pe
// (CommandFaults.HbmAccessPast2To64PsFailsNamingTheCommand).
const FailingStream kFailingStreams[] = {
    {"cycles_max.stream", 4,
     "kernel 'c', tl.cycles(18446744073709551615): dispatch: simulated time overflows: "
     "18446744073709551615 cycles at 1 GHz from 0 ps end past 2^64 - 1 ps (about 213 days)"},
    {"cycles_2p63.stream", 4,
     "kernel 'c', tl.cycles(9223372036854775808): dispatch: simulated time overflows: "
     "9223372036854775808 cycles at 1 GHz from 0 ps end past 2^64 - 1 ps (about 213 days)"},
    {"cycles_late_overflow.stream", 6,
     "kernel 'c', tl.cycles(10000000000000000): dispatch: simulated time overflows: "
     "10000000000000000 cycles at 1 GHz from 10000000000000000000 ps end past 2^64 - 1 ps "
     "(about 213 days)"},
    {"dma_late_overflow.stream", 9,
     "kernel 'late_dma', command #1 DmaReadCmd: simulated time overflows: 140 cycles at 1 GHz from "
     "18446744073709526000 ps end past 2^64 - 1 ps (about 213 days)"},
};

INSTANTIATE_TEST_SUITE_P(Streams, FailingCommand,
                         ::testing::Combine(::testing::ValuesIn(kFailingStreams), ::testing::Bool()),
                         stream_case_name);

// fp16 runs in timing mode; data mode refuses it at dispatch (it was an
// E549 from PE_MATH's stage), before anything is dispatched.
TEST(FailingCommandData, Fp16IsRefusedInDataModeOnly) {
  const std::string path = std::string(kData) + "fp16_data_mode.stream";
  EXPECT_TRUE(run(load_command_stream(path), PeConfig{}).ok);
  PeConfig cfg;
  cfg.data_mode = true;
  const RunResult r = run(load_command_stream(path), cfg);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, path +
                         ":6: kernel 'half', command #1 MathCmd: data mode supports fp32 and bf16, not "
                         "fp16: 'a' [64, 64] fp16 tcm (math fill out=10 extra=value:float:1)");
  EXPECT_EQ(r.launches.at(0).commands, 0u);
}

}  // namespace
}  // namespace kb
