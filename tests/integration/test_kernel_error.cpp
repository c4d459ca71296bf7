// A kernel error ends its launch, not the simulation.
//
// Each case builds one simulation in a forked child: a PE whose kernel
// fails ("bad"), a second PE running a good kernel ("good") and a worker
// thread that keeps working for simulated time past the error. The failed
// launch is reported once with SC_REPORT_ERROR under kKernelErrorType; what
// then happens follows the actions configured for that type: SystemC's
// default (which throws: PE_CPU catches its own report) and SC_DISPLAY |
// SC_LOG let every other module finish, SC_STOP stops the simulation,
// SC_ABORT aborts the process.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <systemc>

#include "models/mem/address_map.h"
#include "models/mem/hbm.h"
#include "models/pe/pe.h"
#include "models/tl/tl.h"
#include "tb/run/runner.h"
#include "tests/sim_util.h"
#include "tests/test_files.h"

namespace kb {
namespace {

using ::testing::HasSubstr;

// A module with no tie to the PEs: a thread waiting `steps` times for
// `step`, noting the time after each wait.
struct Worker : sc_core::sc_module {
  int steps;
  sc_core::sc_time step;
  std::vector<uint64_t> times_ps;
  Worker(sc_core::sc_module_name name, int n, sc_core::sc_time s)
      : sc_module(name), steps(n), step(s) {
    SC_HAS_PROCESS(Worker);
    SC_THREAD(run);
  }
  void run() {
    for (int i = 0; i < steps; ++i) {
      wait(step);
      times_ps.push_back(uint64_t(sc_core::sc_time_stamp().value()));  // ps: the default resolution
    }
  }
};

// Every warning and error reported in the child, then handed on to the
// handler installed before (the test main's).
struct SeenReport {
  std::string type, msg, process;
  int severity = 0;
  uint64_t time_ps = 0;
};
std::vector<SeenReport> g_seen;
sc_core::sc_report_handler_proc g_next_handler = nullptr;

void record_report(const sc_core::sc_report& r, const sc_core::sc_actions& a) {
  if (r.get_severity() >= sc_core::SC_WARNING) {
    g_seen.push_back({r.get_msg_type(), r.get_msg(), r.get_process_name() ? r.get_process_name() : "",
                      int(r.get_severity()), uint64_t(r.get_time().value())});
  }
  g_next_handler(r, a);
}

constexpr int kWorkerSteps = 20;
constexpr uint64_t kWorkerStepPs = 1000000;  // 1 us

// The good PE's kernel: kLoads loads of one 256 x 256 bf16 tensor into the
// same TCM tensor (WAW: one after another).
constexpr int kLoads = 40;
void good_kernel(Tl& tl) {
  const Tensor x = tl.hbm("x", 256, 256, Dtype::kBf16);
  const Tensor a = tl.tcm("a", 256, 256, Dtype::kBf16);
  tl.host_random(x, 1);
  for (int i = 0; i < kLoads; ++i) tl.load(a, x);
}

struct Case {
  Kernel failing;
  PeConfig bad_config;
  std::optional<sc_core::sc_actions> actions;  // none: SystemC's default
  int worker_steps = kWorkerSteps;
  uint64_t worker_step_ps = kWorkerStepPs;
};

struct Outcome {
  std::string child_error;  // the child did not return (crash, abort)
  RunResult bad, good;      // launches, and for bad its op log records
  bool bad_failed = false, good_failed = false;
  std::vector<uint64_t> worker_ps;
  std::vector<SeenReport> reports;
  int kernel_error_count = 0, error_count = 0, warning_count = 0;
  uint64_t end_ps = 0;
  bool stopped = false;  // sc_start returned on sc_stop, not on starvation
};

Outcome simulate(const Case& c) {
  const nlohmann::json j = run_function_isolated([&c] {
    g_next_handler = sc_core::sc_report_handler::get_handler();
    sc_core::sc_report_handler::set_handler(record_report);
    if (c.actions) sc_core::sc_report_handler::set_actions(kKernelErrorType, *c.actions);
    Pe bad("bad", c.bad_config);
    Pe good("good", PeConfig{});
    // Each PE with its own HBM: the good PE's figures are those of it alone.
    const MemoryRange hbm_range{kHbmBase, 0};
    Hbm bad_hbm("bad_hbm", hbm_timing(c.bad_config), hbm_range, c.bad_config.data_mode);
    Hbm good_hbm("good_hbm", hbm_timing(PeConfig{}), hbm_range, false);
    bad.mem.bind(bad_hbm.in);
    good.mem.bind(good_hbm.in);
    bad.op_log().configure(true, "");
    bad.pe_cpu.launch("failing", c.failing);
    bad.pe_cpu.launch("never", [](Tl& tl) { tl.cycles(1); });
    good.pe_cpu.launch("good", good_kernel);
    Worker worker("worker", c.worker_steps, sc_core::sc_time(double(c.worker_step_ps), sc_core::SC_PS));
    sc_core::sc_start();
    bad.op_log().flush();  // the last instant's records (canonical order, op_log.h)
    RunResult b, g;
    b.launches = bad.pe_cpu.results();
    b.records = bad.op_log().records();
    g.launches = good.pe_cpu.results();
    nlohmann::json reports = nlohmann::json::array();
    for (const SeenReport& s : g_seen) {
      reports.push_back({{"type", s.type}, {"msg", s.msg}, {"process", s.process},
                         {"severity", s.severity}, {"time_ps", s.time_ps}});
    }
    return nlohmann::json{
        {"bad", to_json(b)},
        {"good", to_json(g)},
        {"bad_failed", bad.pe_cpu.failed()},
        {"good_failed", good.pe_cpu.failed()},
        {"worker_ps", worker.times_ps},
        {"reports", reports},
        {"kernel_error_count", sc_core::sc_report_handler::get_count(kKernelErrorType)},
        {"error_count", sc_core::sc_report_handler::get_count(sc_core::SC_ERROR)},
        {"warning_count", sc_core::sc_report_handler::get_count(sc_core::SC_WARNING)},
        {"end_ps", uint64_t(sc_core::sc_time_stamp().value())},
        {"stopped", sc_core::sc_get_status() == sc_core::SC_STOPPED}};
  });
  Outcome o;
  if (j.contains("error")) {
    o.child_error = j["error"];
    return o;
  }
  o.bad = run_result_from_json(j["bad"]);
  o.good = run_result_from_json(j["good"]);
  o.bad_failed = j["bad_failed"];
  o.good_failed = j["good_failed"];
  o.worker_ps = j["worker_ps"].get<std::vector<uint64_t>>();
  for (const auto& r : j["reports"]) {
    o.reports.push_back({r["type"].get<std::string>(), r["msg"].get<std::string>(),
                         r["process"].get<std::string>(), r["severity"].get<int>(),
                         r["time_ps"].get<uint64_t>()});
  }
  o.kernel_error_count = j["kernel_error_count"];
  o.error_count = j["error_count"];
  o.warning_count = j["warning_count"];
  o.end_ps = j["end_ps"];
  o.stopped = j["stopped"];
  return o;
}

// The good kernel alone, in its own simulation.
const LaunchResult& good_alone() {
  static const RunResult r = [] {
    RunSpec spec;
    spec.launches = {{"good", good_kernel}};
    return run_isolated(spec);
  }();
  EXPECT_TRUE(r.ok) << r.error;
  return r.launches.at(0);
}

// The failing launch ended the bad PE only: one report of the documented
// type from its kernel thread, carrying the launch's error, at the time the
// launch ended; no later launch of that PE; the good PE and the worker did
// all their work, past the error.
void expect_launch_failed_and_simulation_went_on(const Outcome& o) {
  ASSERT_EQ(o.child_error, "");
  ASSERT_EQ(o.bad.launches.size(), 1u) << "the launch after the failing one must not run";
  const LaunchResult& failed = o.bad.launches[0];
  EXPECT_EQ(failed.kernel, "failing");
  EXPECT_NE(failed.error, "");
  EXPECT_TRUE(o.bad_failed);

  ASSERT_EQ(o.reports.size(), 1u);
  EXPECT_EQ(o.reports[0].type, kKernelErrorType);
  EXPECT_EQ(o.reports[0].severity, int(sc_core::SC_ERROR));
  EXPECT_EQ(o.reports[0].msg, failed.error);
  EXPECT_EQ(o.reports[0].process, "bad.pe_cpu.run");
  EXPECT_EQ(o.reports[0].time_ps, failed.end_ps);
  EXPECT_EQ(o.kernel_error_count, 1);
  EXPECT_EQ(o.error_count, 1);
  EXPECT_EQ(o.warning_count, 0);
  EXPECT_FALSE(o.stopped);
  // Nothing of the bad PE ran after its launch ended.
  for (const OpRecord& r : o.bad.records) EXPECT_LE(r.end_ps, failed.end_ps);

  // The worker ran every step, to the end, past the error.
  ASSERT_EQ(o.worker_ps.size(), size_t(kWorkerSteps));
  for (int i = 0; i < kWorkerSteps; ++i) EXPECT_EQ(o.worker_ps[i], uint64_t(i + 1) * kWorkerStepPs);
  EXPECT_LT(failed.end_ps, o.worker_ps.back());

  // The good PE's launch is complete and the same as alone: kLoads loads,
  // each at least the DMA formula's setup + latency + ceil(bytes / B) after
  // the one before.
  ASSERT_EQ(o.good.launches.size(), 1u);
  const LaunchResult& g = o.good.launches[0];
  EXPECT_EQ(g.error, "");
  EXPECT_FALSE(o.good_failed);
  EXPECT_EQ(g.commands, uint64_t(kLoads));
  const PeConfig cfg;
  const uint64_t load_cycles = cfg.dma.setup_cycles + cfg.hbm.latency_cycles +
                               uint64_t(std::ceil(256.0 * 256 * 2 / cfg.hbm_bytes_per_cycle()));
  EXPECT_GE(g.latency_ps(), kLoads * load_cycles * test::period_ps(cfg));
  EXPECT_GT(g.end_ps, failed.end_ps);
  const LaunchResult& alone = good_alone();
  EXPECT_EQ(g.start_ps, alone.start_ps);
  EXPECT_EQ(g.end_ps, alone.end_ps);
  EXPECT_EQ(g.commands, alone.commands);
  EXPECT_GE(o.end_ps, std::max(g.end_ps, o.worker_ps.back()));
}

// Three fills written, then a GEMM whose shapes do not match. The launch
// ends when the big fill, written last, completes.
void shape_mismatch(Tl& tl) {
  const Tensor a = tl.tcm("a", 8, 16, Dtype::kFp32), b = tl.tcm("b", 32, 8, Dtype::kFp32);
  const Tensor c = tl.tcm("c", 8, 8, Dtype::kFp32);
  const Tensor big = tl.tcm("big", 256, 256, Dtype::kFp32);
  tl.fill(a, 1.0);
  tl.fill(b, 1.0);
  tl.fill(big, 1.0);
  tl.dot(c, a, b);
}

void expect_shape_mismatch(const Outcome& o) {
  expect_launch_failed_and_simulation_went_on(o);
  if (o.bad.launches.size() != 1) return;
  const LaunchResult& failed = o.bad.launches[0];
  EXPECT_THAT(failed.error, HasSubstr("kernel 'failing', command #4 GemmCmd"));
  EXPECT_THAT(failed.error, HasSubstr("'a' [8, 16]"));
  EXPECT_THAT(failed.error, HasSubstr("'b' [32, 8]"));
  EXPECT_EQ(failed.commands, 3u);
  // Every command written before the error completed, and the launch ended
  // with the last of them: the big fill (pipeline latency + 256 x 256
  // elements on 64 lanes, one cycle each), long after it was written.
  const auto math = test::of_kind(o.bad, RecordKind::kMath);
  ASSERT_EQ(math.size(), 3u);
  for (uint64_t id = 1; id <= 3; ++id) EXPECT_EQ(math[id - 1].cmd_id, id);
  const PeConfig cfg;
  const uint64_t big_fill_cycles =
      cfg.math.pipeline_latency_cycles + uint64_t(256 * 256 / cfg.math.lanes) * cfg.math.elementwise_cycles;
  EXPECT_EQ(math[2].end_ps - math[2].start_ps, big_fill_cycles * test::period_ps(cfg));
  EXPECT_EQ(failed.end_ps, math[2].end_ps);
  const auto dispatches = test::of_kind(o.bad, RecordKind::kDispatch);
  ASSERT_EQ(dispatches.size(), 3u);
  EXPECT_LT(dispatches[2].end_ps, failed.end_ps);
}

TEST(KernelErrorReport, ShapeMismatchWithDefaultActionsEndsTheLaunchOnly) {
  Case c;
  c.failing = shape_mismatch;
  expect_shape_mismatch(simulate(c));
}

TEST(KernelErrorReport, ShapeMismatchWithDisplayAndLogActionsEndsTheLaunchOnly) {
  Case c;
  c.failing = shape_mismatch;
  c.actions = sc_core::SC_DISPLAY | sc_core::SC_LOG;
  expect_shape_mismatch(simulate(c));
}

// SC_STOP: the report stops the simulation when the launch fails; neither
// the worker nor the good PE gets to its end.
TEST(KernelErrorReport, StopActionStopsTheSimulation) {
  Case c;
  c.failing = shape_mismatch;
  c.actions = sc_core::SC_DISPLAY | sc_core::SC_STOP;
  const Outcome o = simulate(c);
  ASSERT_EQ(o.child_error, "");
  EXPECT_TRUE(o.stopped);
  ASSERT_EQ(o.bad.launches.size(), 1u);
  const LaunchResult& failed = o.bad.launches[0];
  EXPECT_THAT(failed.error, HasSubstr("command #4 GemmCmd"));
  EXPECT_TRUE(o.bad_failed);
  EXPECT_EQ(o.kernel_error_count, 1);
  EXPECT_EQ(o.end_ps, failed.end_ps);
  EXPECT_LT(o.worker_ps.size(), size_t(kWorkerSteps));
  for (uint64_t t : o.worker_ps) EXPECT_LE(t, failed.end_ps);
  ASSERT_EQ(o.good.launches.size(), 1u);
  EXPECT_EQ(o.good.launches[0].end_ps, 0u) << "the good launch did not finish";
}

// SC_ABORT: the process aborts at the report.
TEST(KernelErrorReport, AbortActionAbortsTheProcess) {
  Case c;
  c.failing = shape_mismatch;
  c.actions = sc_core::SC_ABORT;
  const Outcome o = simulate(c);
  EXPECT_THAT(o.child_error, HasSubstr("run crashed: signal SIGABRT"));
}

TEST(KernelErrorReport, CompositeOverTheD7CapEndsTheLaunchOnly) {
  Case c;
  c.bad_config.cost_model.max_composite_logical_bytes = 64;
  c.failing = [](Tl& tl) {
    const Tensor a = tl.tcm("a", 8, 8, Dtype::kFp32), b = tl.tcm("b", 8, 8, Dtype::kFp32);
    tl.fill(a, 1.0);
    tl.composite("too_big",
                 {math_op(MathOp::kExp, OpScope::kPrologue, b, {a}),
                  math_op(MathOp::kExp, OpScope::kPrologue, b, {b}),
                  math_op(MathOp::kExp, OpScope::kPrologue, b, {b})},
                 {b});
  };
  const Outcome o = simulate(c);
  expect_launch_failed_and_simulation_went_on(o);
  ASSERT_EQ(o.bad.launches.size(), 1u);
  const LaunchResult& failed = o.bad.launches[0];
  EXPECT_THAT(failed.error, HasSubstr("kernel 'failing': composite 'too_big' is "));
  EXPECT_THAT(failed.error, HasSubstr("logical bytes, over the cap of 64 "
                                      "(pe.attrs.pe_cost_model.max_composite_logical_bytes, "
                                      "docs/cost-model.md D7)"));
  EXPECT_EQ(failed.commands, 1u);  // the fill; the composite was refused
}

TEST(KernelErrorReport, UninitialisedReadEndsTheLaunchOnly) {
  Case c;
  c.failing = [](Tl& tl) {
    const Tensor x = tl.hbm("x", 16, 16, Dtype::kFp32);
    const Tensor a = tl.tcm("a", 16, 16, Dtype::kFp32);
    tl.cycles(500);
    tl.load(a, x);
  };
  const Outcome o = simulate(c);
  expect_launch_failed_and_simulation_went_on(o);
  ASSERT_EQ(o.bad.launches.size(), 1u);
  const LaunchResult& failed = o.bad.launches[0];
  EXPECT_EQ(failed.error,
            "kernel 'failing', command #1 DmaReadCmd: reads uninitialised src 'x' [16, 16] fp32 hbm "
            "(nothing has written it: load or compute it first, or initialise it from the host)");
  EXPECT_EQ(failed.end_ps, 500 * test::period_ps(PeConfig{}));  // after tl.cycles(500)
}

// A CommandFault raised in PE_CPU's dispatch method: the second 10^16
// cycles would end past 2^64 - 1 ps. The worker goes on past the fault.
TEST(KernelErrorReport, CommandFaultEndsTheLaunchOnly) {
  const uint64_t n = 10000000000000000;  // 10^16 cycles = 10^19 ps at 1 GHz
  Case c;
  c.failing = [n](Tl& tl) {
    tl.cycles(n);
    tl.cycles(n);
  };
  // 15 steps of 10^18 ps: the last ends at 1.5 x 10^19 ps, past the fault.
  c.worker_steps = 15;
  c.worker_step_ps = 1000000000000000000;
  const Outcome o = simulate(c);
  ASSERT_EQ(o.child_error, "");
  ASSERT_EQ(o.bad.launches.size(), 1u);
  const LaunchResult& failed = o.bad.launches[0];
  EXPECT_EQ(failed.error,
            "kernel 'failing', tl.cycles(10000000000000000): dispatch: simulated time overflows: "
            "10000000000000000 cycles at 1 GHz from 10000000000000000000 ps end past 2^64 - 1 ps "
            "(about 213 days)");
  EXPECT_EQ(failed.end_ps, n * 1000);
  EXPECT_TRUE(o.bad_failed);
  ASSERT_EQ(o.reports.size(), 1u);
  EXPECT_EQ(o.reports[0].type, kKernelErrorType);
  EXPECT_EQ(o.reports[0].msg, failed.error);
  EXPECT_EQ(o.kernel_error_count, 1);
  EXPECT_EQ(o.error_count, 1);
  ASSERT_EQ(o.worker_ps.size(), size_t(c.worker_steps));
  EXPECT_EQ(o.worker_ps.back(), uint64_t(c.worker_steps) * c.worker_step_ps);
  EXPECT_GT(o.worker_ps.back(), failed.end_ps);
  ASSERT_EQ(o.good.launches.size(), 1u);
  EXPECT_EQ(o.good.launches[0].error, "");
  EXPECT_EQ(o.good.launches[0].end_ps, good_alone().end_ps);
}

// A CommandFault raised in an engine stops the PE at once. The load's HBM
// access would end past 2^64 - 1 ps. Written before it: fill #1 (running on
// PE_MATH when the fault comes) and fill #2 (waiting on #1, WAW). After the
// fault PE_SCHEDULER neither completes nor issues a stage (fill #1 is
// abandoned, fill #2 never runs) and PE_CPU writes nothing more: of the ten
// tl.cycles(1) after the load, not even the one dispatching when the fault
// came is spent. The simulation then ends by itself, at fill #1's end.
TEST(KernelErrorReport, AnEngineFaultStopsThePe) {
  const PeConfig cfg;
  // From the spin's end, kRoom cycles remain before 2^64 - 1 ps: more than
  // fill #1 takes (256 x 256 fp32 on 64 lanes, ~1028 cycles), far less than
  // the load (setup + latency + 2 MiB / 204.8 bytes per cycle, ~10456).
  constexpr uint64_t kRoom = 5000;
  const uint64_t spin = std::numeric_limits<uint64_t>::max() / 1000 - kRoom;
  const uint64_t fill_cycles = cfg.math.pipeline_latency_cycles +
                               uint64_t(256 * 256 / cfg.math.lanes) * cfg.math.elementwise_cycles;
  const uint64_t load_cycles = cfg.hbm.latency_cycles +
                               uint64_t(std::ceil(1024.0 * 1024 * 2 / cfg.hbm_bytes_per_cycle()));
  ASSERT_LT(fill_cycles + 100, kRoom);
  ASSERT_GT(load_cycles, kRoom);
  Case c;
  c.worker_steps = 0;
  c.failing = [spin](Tl& tl) {
    const Tensor x = tl.hbm("x", 1024, 1024, Dtype::kBf16);
    const Tensor big = tl.tcm("big", 1024, 1024, Dtype::kBf16);
    const Tensor a = tl.tcm("a", 256, 256, Dtype::kFp32);
    tl.host_random(x, 1);
    tl.cycles(spin);
    tl.fill(a, 1.0);  // #1
    tl.fill(a, 2.0);  // #2
    tl.load(big, x);  // #3: faults
    for (int i = 0; i < 10; ++i) tl.cycles(1);
  };
  const Outcome o = simulate(c);
  ASSERT_EQ(o.child_error, "");
  ASSERT_EQ(o.bad.launches.size(), 1u);
  const LaunchResult& failed = o.bad.launches[0];
  EXPECT_THAT(failed.error,
              HasSubstr("kernel 'failing', command #3 DmaReadCmd: simulated time overflows: "));
  EXPECT_TRUE(o.bad_failed);
  EXPECT_EQ(o.kernel_error_count, 1);
  EXPECT_FALSE(o.stopped);

  // The fault came when the load was written (its issue, a delta later).
  const auto dispatches = test::of_kind(o.bad, RecordKind::kDispatch);
  ASSERT_EQ(dispatches.size(), 3u);
  EXPECT_EQ(dispatches[2].cmd_id, 3u);
  EXPECT_EQ(failed.end_ps, dispatches[2].end_ps);
  EXPECT_EQ(test::of_kind(o.bad, RecordKind::kMath).size(), 0u);
  EXPECT_EQ(test::of_kind(o.bad, RecordKind::kDmaRead).size(), 0u);
  const auto cycles = test::of_kind(o.bad, RecordKind::kCpuCycles);
  ASSERT_EQ(cycles.size(), 1u) << "only the spin";
  for (const OpRecord& r : o.bad.records) EXPECT_LE(r.end_ps, failed.end_ps);
  // The last event was fill #1's end, on PE_MATH from its write.
  EXPECT_EQ(o.end_ps, dispatches[0].end_ps + fill_cycles * test::period_ps(cfg));
  EXPECT_GT(o.end_ps, failed.end_ps);
}

// Through the runner (every CLI run): the run fails with the launch's
// error and nothing else, SystemC does not display the report, and the
// outputs describe what ran. A run whose first command is refused ends by
// itself at time 0: its VCD is written, ending 1 ps later.
TEST(KernelErrorReport, RunnerRunFailsWithTheLaunchErrorAndWritesItsOutputs) {
  test::TempDir dir;
  RunSpec spec;
  spec.vcd_path = dir.file("w.vcd");
  spec.oplog_path = dir.file("op.csv");
  spec.launches = {{"failing",
                    [](Tl& tl) {
                      const Tensor a = tl.tcm("a", 8, 8, Dtype::kFp32);
                      const Tensor b = tl.tcm("b", 8, 8, Dtype::kFp32);
                      tl.load(a, b);
                    }},
                   {"never", [](Tl& tl) { tl.cycles(1); }}};
  const RunResult r = run_isolated(spec);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "kernel 'failing', command #1 DmaReadCmd: src 'b' [8, 8] fp32 tcm must be in hbm");
  ASSERT_EQ(r.launches.size(), 1u);
  EXPECT_EQ(r.launches[0].error, r.error);
  EXPECT_EQ(r.end_ps, 0u);
  const std::string vcd = test::read_file(spec.vcd_path);
  ASSERT_GE(vcd.size(), 4u);
  EXPECT_EQ(vcd.substr(vcd.size() - 4), "\n#1\n");
  EXPECT_TRUE(std::filesystem::exists(spec.oplog_path));
}

// The CLI: exit status 1 and its one line on stderr; SystemC's display of
// the report (an "Error: kernbench/kernel_error" block on stdout) is off.
TEST(KernelErrorReport, CliFailsWithExitStatus1AndOneLine) {
  const std::string stream = "tests/data/replay/dma_read_from_tcm.stream";
  const test::CliResult r = test::run_program(KERNBENCH_BIN, {"replay", stream});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "kernbench: replay '" + stream + "' failed: " + stream +
                       ":7: kernel 'bad_load', command #1 DmaReadCmd: src 'src' [64, 64] bf16 tcm "
                       "must be in hbm (dma_read dst=2 src=1)\n");
  EXPECT_EQ(r.out.find(kKernelErrorType), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("In process"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace kb
