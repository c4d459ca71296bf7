// Time does not depend on SystemC's time resolution: the
// same kernels at 1 fs (and 10, 100 fs) and at 1 ps give the same op log,
// latency, statistics and trace, byte for byte; a resolution coarser than
// 1 ps is refused; and the 2^64 guards move to what sc_time can hold at the
// resolution, exactly. Each run is its own child (RunSpec::time_resolution_fs
// is set there before elaboration).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "models/util/clock.h"
#include "models/tl/tl.h"
#include "tb/benches/bench_registry.h"
#include "tb/run/runner.h"
#include "tests/test_files.h"

namespace kb {
namespace {

using ::testing::HasSubstr;
using test::read_file;
using test::TempDir;

// The resolution the child really ran at, in fs, and SystemC's own clock
// in seconds, as metrics of a launch of its own (read in the child: the
// parent's resolution is its own). The op log's ps must be SystemC's time,
// not only consistent with itself.
void note_resolution(Tl& tl) {
  tl.metric("resolution_fs", double(std::llround(sc_core::sc_get_time_resolution().to_seconds() * 1e15)));
  tl.metric("now_s", sc_core::sc_time_stamp().to_seconds());
}

struct Outputs {
  RunResult result;
  std::string oplog, trace, stats, vcd_body;
};

// The VCD after its header ($date changes from run to run; $timescale is
// checked on its own).
std::string vcd_body(const std::string& vcd) {
  const size_t end = vcd.find("$enddefinitions");
  return end == std::string::npos ? "" : vcd.substr(end);
}

Outputs run_bench(const std::string& bench, const std::vector<std::string>& params, uint64_t resolution_fs,
                  bool vcd = false) {
  register_builtin_benches();
  const Bench& b = BenchRegistry::instance().get(bench);
  TempDir dir;
  RunSpec spec;
  spec.launches = b.launches(BenchRegistry::instance().params(b, params), spec.config);
  spec.launches.emplace_back("resolution", note_resolution);
  spec.keep_records = true;
  spec.time_resolution_fs = resolution_fs;
  spec.oplog_path = dir.file("oplog.csv");
  spec.trace_path = dir.file("trace.json");
  spec.stats_path = dir.file("stats.json");
  if (vcd) spec.vcd_path = dir.file("waves.vcd");
  Outputs o;
  o.result = run_isolated(spec);
  EXPECT_TRUE(o.result.ok) << bench << " at " << resolution_fs << " fs: " << o.result.error;
  o.oplog = read_file(spec.oplog_path);
  o.trace = read_file(spec.trace_path);
  o.stats = read_file(spec.stats_path);
  if (vcd) {
    const std::string text = read_file(spec.vcd_path);
    EXPECT_THAT(text, HasSubstr("$timescale\n     1 ps\n$end")) << "at " << resolution_fs << " fs";
    o.vcd_body = vcd_body(text);
    EXPECT_FALSE(o.vcd_body.empty());
  }
  if (o.result.ok) {
    const LaunchResult& last = o.result.launches.back();
    EXPECT_EQ(last.kernel, "resolution");
    EXPECT_EQ(last.metrics.at(0).second, double(resolution_fs));
    EXPECT_GT(last.start_ps, 0u);
    EXPECT_NEAR(last.metrics.at(1).second * 1e12, double(last.start_ps), 1e-9 * double(last.start_ps))
        << "SystemC's time against the launch's start in ps, at " << resolution_fs << " fs";
  }
  return o;
}

void expect_same(const Outputs& ps, const Outputs& other, const std::string& what) {
  ASSERT_TRUE(ps.result.ok && other.result.ok) << what;
  EXPECT_GT(ps.result.records.size(), 100u) << what;
  EXPECT_EQ(other.oplog, ps.oplog) << what << ": op log";
  EXPECT_EQ(other.trace, ps.trace) << what << ": Chrome trace";
  EXPECT_EQ(other.stats, ps.stats) << what << ": statistics";
  EXPECT_EQ(other.vcd_body, ps.vcd_body) << what << ": VCD";
  EXPECT_EQ(other.result.end_ps, ps.result.end_ps) << what;
  EXPECT_EQ(other.result.latency_ps(), ps.result.latency_ps()) << what;
  ASSERT_EQ(other.result.launches.size(), ps.result.launches.size()) << what;
  for (size_t i = 0; i + 1 < ps.result.launches.size(); ++i) {  // the last notes the resolution
    const LaunchResult &a = ps.result.launches[i], &b = other.result.launches[i];
    EXPECT_EQ(b.start_ps, a.start_ps) << what << " " << a.kernel;
    EXPECT_EQ(b.end_ps, a.end_ps) << what << " " << a.kernel;
    EXPECT_EQ(b.dispatch_ps, a.dispatch_ps) << what << " " << a.kernel;
    EXPECT_EQ(b.stall_ps, a.stall_ps) << what << " " << a.kernel;
    for (int c = 0; c < kNumComponents; ++c) EXPECT_EQ(b.busy_ps[c], a.busy_ps[c]) << what << " " << a.kernel;
  }
  ASSERT_EQ(other.result.occupancy.size(), ps.result.occupancy.size()) << what;
  for (size_t i = 0; i < ps.result.occupancy.size(); ++i) {
    EXPECT_EQ(other.result.occupancy[i].time_ps, ps.result.occupancy[i].time_ps) << what;
  }
}

// gqa-decode opt2 and opt3 (composites and single-op commands) at 1 fs.
TEST(TimeResolution, GqaDecodeAtFemtosecondsIsTheSameAsAtPicoseconds) {
  const std::vector<std::string> params = {"context=1024"};
  const Outputs ps = run_bench("gqa-decode", params, 1000, true);
  const Outputs fs = run_bench("gqa-decode", params, 1, true);
  expect_same(ps, fs, "gqa-decode at 1 fs");
  // Not a trivial identity: the times are the model's, in ps. At 1 GHz
  // every record starts and ends on a 1000 ps edge.
  for (const OpRecord& r : fs.result.records) {
    ASSERT_EQ(r.start_ps % 1000, 0u);
    ASSERT_EQ(r.end_ps % 1000, 0u);
  }
}

// A composite GEMM at 1 fs, 10 fs and 100 fs, and at a clock whose period is
// not a whole number of ps (1.5 GHz: edges at round(n x 2000 / 3) ps).
TEST(TimeResolution, CompositeGemmAtEveryFinerResolutionIsTheSame) {
  const std::vector<std::string> params = {"m=512", "n=512", "k=512"};
  const Outputs ps = run_bench("gemm-composite", params, 1000);
  for (uint64_t fs : {1u, 10u, 100u}) {
    expect_same(ps, run_bench("gemm-composite", params, fs), "gemm-composite at " + std::to_string(fs) + " fs");
  }
}

TEST(TimeResolution, FractionalPeriodAtFemtosecondsIsTheSame) {
  auto run = [](uint64_t fs) {
    RunSpec spec;
    spec.config.clock_freq_ghz = 1.5;
    spec.keep_records = true;
    spec.time_resolution_fs = fs;
    spec.launches = {{"k", [](Tl& tl) {
                        const Tensor a = tl.tcm("a", 64, 64, Dtype::kFp32);
                        const Tensor c = tl.tcm("c", 64, 64, Dtype::kFp32);
                        tl.host_random(a, 1);
                        tl.exp(c, a);
                        tl.cycles(7);
                        tl.add(a, c, c);
                      }}};
    return run_isolated(spec);
  };
  const RunResult ps = run(1000), fs = run(1);
  ASSERT_TRUE(ps.ok && fs.ok) << ps.error << fs.error;
  ASSERT_EQ(fs.records.size(), ps.records.size());
  for (size_t i = 0; i < ps.records.size(); ++i) {
    EXPECT_EQ(op_log_csv_row(fs.records[i]), op_log_csv_row(ps.records[i]));
  }
  EXPECT_EQ(fs.latency_ps(), ps.latency_ps());
  // tl.cycles(7) from an edge at 1.5 GHz: 7 x 2000 / 3 = 4666.67, so 4666
  // or 4667 ps.
  EXPECT_THAT(fs.launches.at(0).cpu_cycles_ps, ::testing::AnyOf(4666u, 4667u));
}

// At 1 ns an edge of a 1 GHz clock (1000 ps) would still fit, but one of
// 1.5 GHz (666.67 ps) would not, and ps would be rounded to ns silently:
// refused, whatever the clock, with the resolution named.
TEST(TimeResolution, CoarserThanAPicosecondIsRefused) {
  for (uint64_t fs : {uint64_t(10000), uint64_t(1000000)}) {
    TempDir dir;
    RunSpec spec;
    spec.launches = {{"k", [](Tl& tl) { tl.cycles(3); }}};
    spec.time_resolution_fs = fs;
    spec.oplog_path = dir.file("oplog.csv");
    spec.stats_path = dir.file("stats.json");
    const RunResult r = run_isolated(spec);
    EXPECT_FALSE(r.ok);
    const std::string res = fs == 10000 ? "10 ps" : "1 ns";
    EXPECT_EQ(r.error, "the SystemC time resolution is " + res +
                           ", coarser than 1 ps: the PE's clock edges are whole picoseconds (set a "
                           "resolution of 1 ps or finer with sc_set_time_resolution, or keep the "
                           "default of 1 ps)");
    EXPECT_TRUE(r.launches.empty());
    EXPECT_FALSE(std::filesystem::exists(spec.oplog_path));
    EXPECT_FALSE(std::filesystem::exists(spec.stats_path));
  }
}

// ---- the time limit follows the resolution ----------------------------------

// At 1 fs sc_time holds 2^64 - 1 fs: (2^64 - 1) / 1000 ps, rounded down.
constexpr uint64_t kMaxPsAtFs = 18446744073709551u;

TEST(TimeResolution, ConversionsAndClockLimitAtFemtoseconds) {
  const nlohmann::json j = run_function_isolated([] {
    sc_core::sc_set_time_resolution(1, sc_core::SC_FS);
    nlohmann::json out;
    out["ticks_per_ps"] = ticks_per_ps();
    out["max_ps"] = max_ps();
    out["ps_of_1_5ps"] = ps_of(sc_core::sc_time(1500, sc_core::SC_FS));  // rounded down
    out["ps_of_2ns"] = ps_of(sc_core::sc_time(2, sc_core::SC_NS));
    out["from_ps_value"] = from_ps(kMaxPsAtFs).value();
    try {
      (void)from_ps(kMaxPsAtFs + 1);
    } catch (const TimeOverflow& e) {
      out["from_ps_error"] = e.what();
    }
    const Clock c1(1.0), c15(1.5);
    out["clock_max_ps"] = c1.max_ps();
    out["last_whole_delay"] = c1.delay_ps(kMaxPsAtFs - 1000, 1);
    try {
      (void)c1.delay_ps(kMaxPsAtFs - 999, 1);
    } catch (const TimeOverflow& e) {
      out["delay_error"] = e.what();
    }
    // The last edge of 1.5 GHz that fits: the largest n with
    // round(n x 2000 / 3) <= kMaxPsAtFs.
    out["edge"] = c15.edge_ps(27670116110564u);
    out["edge_throws"] = false;
    try {
      (void)c15.edge_ps(27670116110565u);
    } catch (const TimeOverflow&) {
      out["edge_throws"] = true;
    }
    return out;
  });
  ASSERT_FALSE(j.contains("error")) << j.dump();
  EXPECT_EQ(j["ticks_per_ps"], 1000u);
  EXPECT_EQ(j["max_ps"], kMaxPsAtFs);
  EXPECT_EQ(j["ps_of_1_5ps"], 1u);
  EXPECT_EQ(j["ps_of_2ns"], 2000u);
  EXPECT_EQ(j["from_ps_value"], kMaxPsAtFs * 1000);
  EXPECT_EQ(j["from_ps_error"], "simulated time 18446744073709552 ps is past the simulator's limit of "
                                "18446744073709551 ps (2^64 - 1 steps of 1 fs)");
  EXPECT_EQ(j["clock_max_ps"], kMaxPsAtFs);
  EXPECT_EQ(j["last_whole_delay"], 1000u);
  EXPECT_EQ(j["delay_error"], "simulated time overflows: 1 cycles at 1 GHz from 18446744073708552 ps end past "
                              "18446744073709551 ps (2^64 - 1 steps of the time resolution, 1 fs)");
  // round(27670116110564 x 2000 / 3) = 18446744073709333 (x 2000 / 3 =
  // ...333.33); the next edge is 667 ps later, past the limit.
  EXPECT_EQ(j["edge"], 18446744073709333u);
  EXPECT_TRUE(j["edge_throws"].get<bool>());
}

// A kernel that ends exactly at the last whole 1 GHz edge below the limit
// runs at 1 fs; one cycle more fails the launch, as 2^64 ps does at 1 ps.
TEST(TimeResolution, KernelRunsUpToTheLimitAndNoFurther) {
  constexpr uint64_t kLastCycles = kMaxPsAtFs / 1000;  // 18446744073709 cycles at 1 GHz
  auto run = [](uint64_t cycles) {
    RunSpec spec;
    spec.time_resolution_fs = 1;
    spec.launches = {{"long", [cycles](Tl& tl) { tl.cycles(cycles); }}};
    return run_isolated(spec);
  };
  const RunResult fits = run(kLastCycles);
  ASSERT_TRUE(fits.ok) << fits.error;
  EXPECT_EQ(fits.launches.at(0).latency_ps(), kLastCycles * 1000);
  EXPECT_EQ(fits.launches.at(0).cpu_cycles_ps, kLastCycles * 1000);
  const RunResult past = run(kLastCycles + 1);
  EXPECT_FALSE(past.ok);
  EXPECT_THAT(past.error, HasSubstr("tl.cycles(18446744073710): dispatch: simulated time overflows: "
                                    "18446744073710 cycles at 1 GHz from 0 ps end past 18446744073709551 ps "
                                    "(2^64 - 1 steps of the time resolution, 1 fs)"));
  // Far below 2^64 ps, and still refused: the guard is the resolution's.
  const RunResult huge = run(uint64_t(1) << 60);
  EXPECT_FALSE(huge.ok);
  EXPECT_THAT(huge.error, HasSubstr("end past 18446744073709551 ps"));
}

}  // namespace
}  // namespace kb
