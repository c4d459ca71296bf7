// Per-instance observability: two PEs of one simulation
// (a PeTop of two) trace into ONE Chrome trace file and ONE VCD file. Each
// PE is a process of its own (distinct pid, process_name = its name()), and
// every event of a PE is under its pid; each PE's signals are under a VCD
// scope of its name. The stats JSON, --json and the trace's metadata carry
// schema_version. Simulations run in forked children.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

#include "kernels/gemm/gemm_tiled_single_op.h"
#include "models/config/pe_config.h"
#include "models/tl/tl.h"
#include "models/top/pe_top.h"
#include "models/trace/chrome_trace.h"
#include "models/trace/counter_probe.h"
#include "models/trace/schema_version.h"
#include "models/trace/vcd_trace.h"
#include "tb/run/runner.h"
#include "tests/test_files.h"
#include "tests/vcd_reader.h"

namespace kb {
namespace {

using test::TempDir;
using test::read_file;
using test::Vcd;
using test::parse_vcd;

// PE 0's kernel: MATH commands on TCM with tl.cycles (no HBM traffic).
void math_kernel(Tl& tl) {
  const Tensor a = tl.tcm("a", 1, 16, Dtype::kFp32);
  const Tensor b = tl.tcm("b", 1, 16, Dtype::kFp32);
  const Tensor c = tl.tcm("c", 1, 16, Dtype::kFp32);
  tl.fill(a, 1.0);
  tl.fill(b, 2.0);
  for (int i = 0; i < 40; ++i) {
    tl.add(c, a, b);
    if (i % 10 == 9) tl.cycles(3);
  }
}

// PE 1's kernel: single-op GEMM tiles (DMA, GEMM, queue stalls).
void gemm_kernel(Tl& tl) {
  GemmShape s;
  s.m = s.n = 128;
  s.k = 256;
  s.tile_m = s.tile_n = s.tile_k = 64;
  gemm_tiled_single_op(tl, s);
}

// One op-log record or launch as the trace shows it: (tid, name, start_ps, end_ps).
using Slice = std::tuple<int, std::string, uint64_t, uint64_t>;

nlohmann::json slice_json(int tid, const std::string& name, uint64_t start, uint64_t end) {
  return {tid, name, start, end};
}

// Runs two PEs of a PeTop, traced into one trace and one VCD; returns what
// each PE did: its name, its op-log records and launches as slices, its
// queue occupancy samples and its command count.
nlohmann::json run_two_pes(const std::string& trace_path, const std::string& vcd_path) {
  return run_function_isolated([&] {
    sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
    PeConfig cfg;
    std::vector<std::unique_ptr<CounterHistory>> histories;  // outlive top, whose schedulers tell them
    PeTop top(cfg, 2);
    std::ofstream trace_file(trace_path);
    ChromeTrace trace(trace_file);
    std::vector<TraceProcess*> processes;
    std::vector<PeSignals> signals;
    for (size_t i = 0; i < top.size(); ++i) {
      Pe& pe = top.pe(i);
      pe.op_log().configure(true, "");
      TraceProcess* process = &trace.add_process(pe.name());
      processes.push_back(process);
      pe.op_log().set_trace(process);
      histories.push_back(std::make_unique<CounterHistory>(
          uint32_t(pe.pe_scheduler.occupancy()), true, [process](const CounterSample& s) { process->counter(s); }));
      pe.pe_scheduler.set_occupancy_history(histories.back().get());
      pe.enable_signals(true);  // the VCD's
      signals.push_back(pe_signals(pe));
    }
    PeVcdTrace vcd(signals, vcd_path);
    top.pe(0).pe_cpu.launch("math", math_kernel);
    top.pe(1).pe_cpu.launch("gemm", gemm_kernel);
    sc_core::sc_start();
    nlohmann::json out = nlohmann::json::array();
    for (size_t i = 0; i < top.size(); ++i) {
      Pe& pe = top.pe(i);
      pe.op_log().flush();
      histories[i]->flush();
      nlohmann::json p;
      p["name"] = pe.name();
      p["slices"] = nlohmann::json::array();
      for (const OpRecord& r : pe.op_log().records()) {
        p["slices"].push_back(slice_json(trace_tid(r.component), trace_slice_name(r), r.start_ps, r.end_ps));
      }
      uint64_t commands = 0;
      for (const LaunchResult& l : pe.pe_cpu.results()) {
        if (!l.error.empty()) p["error"] = l.error;
        commands += l.commands;
        p["slices"].push_back(slice_json(kLaunchTid, l.kernel, l.start_ps, l.end_ps));
        processes[i]->launch({l.kernel, l.start_ps, l.end_ps});
      }
      p["commands"] = commands;
      p["launches"] = pe.pe_cpu.results().size();
      p["occupancy"] = nlohmann::json::array();
      for (const CounterSample& s : histories[i]->samples()) p["occupancy"].push_back({s.time_ps, s.value});
      out.push_back(p);
    }
    trace.finish();
    trace_file.close();
    vcd.close();
    return out;
  });
}

struct TwoPeRun {
  TempDir dir;
  std::string trace = dir.file("trace.json"), vcd = dir.file("waves.vcd");
  nlohmann::json pes;  // run_two_pes()
  TwoPeRun() {
    pes = run_two_pes(trace, vcd);
    if (!pes.is_array() || pes.size() != 2) throw std::runtime_error("two-PE run failed: " + pes.dump());
    for (const auto& p : pes) {
      if (p.contains("error")) throw std::runtime_error("kernel failed: " + p["error"].dump());
    }
  }
};

TEST(MultiPeTrace, TwoPesAreTwoProcessesNamedByTheirNamesWithTheirOwnEvents) {
  TwoPeRun run;
  const nlohmann::json j = nlohmann::json::parse(read_file(run.trace));
  EXPECT_EQ(j.at("otherData").at("schema_version"), kSchemaVersion);

  // One process_name per PE, distinct pids, named by the PE's name().
  std::map<int, std::string> process_names;
  for (const auto& e : j.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "process_name") {
      EXPECT_TRUE(process_names.emplace(e.at("pid").get<int>(), e.at("args").at("name")).second)
          << "pid " << e.at("pid") << " named twice";
    }
  }
  ASSERT_EQ(process_names.size(), 2u);
  std::map<std::string, int> pid_of;
  for (const auto& [pid, name] : process_names) pid_of[name] = pid;
  ASSERT_EQ(pid_of.size(), 2u) << "two processes share a name";
  for (const auto& p : run.pes) {
    ASSERT_TRUE(pid_of.count(p.at("name"))) << p.at("name") << " has no process";
  }
  EXPECT_NE(run.pes[0].at("name"), run.pes[1].at("name"));

  // Every thread of every process is named, per process.
  std::map<int, std::map<int, std::string>> thread_names;
  for (const auto& e : j.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "thread_name") {
      thread_names[e.at("pid")][e.at("tid")] = e.at("args").at("name");
    }
  }
  for (const auto& [pid, name] : process_names) {
    SCOPED_TRACE(name);
    EXPECT_EQ(thread_names[pid][kLaunchTid], "launches");
    for (const ComponentInfo& c : kComponents) {
      if (!c.busy) continue;  // PE_SCHEDULER: a counter
      // PE_IPC's track is named at its first slice: these kernels send nothing.
      EXPECT_EQ(thread_names[pid][trace_tid(c.component)], c.optional ? "" : c.name);
    }
  }

  // Every event is under a PE's pid, and the slices under PE i's pid are
  // exactly PE i's op-log records and launches: the PEs run different
  // kernels, so events under the wrong pid would not match.
  std::map<int, std::vector<Slice>> slices;
  std::map<int, std::vector<std::pair<uint64_t, uint64_t>>> counters;
  std::map<uint64_t, std::vector<int>> flow_pids;  // flow id -> pids of its s and f
  for (const auto& e : j.at("traceEvents")) {
    const int pid = e.at("pid");
    ASSERT_TRUE(process_names.count(pid)) << e.dump();
    const std::string ph = e.at("ph");
    if (ph == "X") {
      const auto& a = e.at("args");
      slices[pid].emplace_back(e.at("tid").get<int>(), e.at("name").get<std::string>(),
                               a.at("start_ps").get<uint64_t>(), a.at("end_ps").get<uint64_t>());
    } else if (ph == "C") {
      counters[pid].emplace_back(std::llround(e.at("ts").get<double>() * 1e6),
                                 e.at("args").at("queue_occupancy").get<uint64_t>());
    } else if (ph == "s" || ph == "f") {
      flow_pids[e.at("id")].push_back(pid);
    }
  }
  for (const auto& p : run.pes) {
    SCOPED_TRACE(p.at("name").get<std::string>());
    const int pid = pid_of[p.at("name")];
    std::vector<Slice> want;
    for (const auto& s : p.at("slices")) {
      want.emplace_back(s.at(0).get<int>(), s.at(1).get<std::string>(), s.at(2).get<uint64_t>(),
                        s.at(3).get<uint64_t>());
    }
    ASSERT_GT(want.size(), 1u);
    std::vector<Slice> got = slices[pid];
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    EXPECT_TRUE(got == want) << got.size() << " slices under pid " << pid << ", " << want.size()
                             << " records and launches";
    // The occupancy counter under its pid is the PE's own.
    std::vector<std::pair<uint64_t, uint64_t>> occupancy;
    for (const auto& s : p.at("occupancy")) occupancy.emplace_back(s.at(0), s.at(1));
    EXPECT_FALSE(occupancy.empty());
    EXPECT_EQ(counters[pid], occupancy);
  }
  // Flows: ids unique over the file, each an s and an f within one process.
  EXPECT_FALSE(flow_pids.empty());
  std::set<int> pids_with_flows;
  for (const auto& [id, pids] : flow_pids) {
    ASSERT_EQ(pids.size(), 2u) << "flow id " << id << " used " << pids.size() << " times";
    EXPECT_EQ(pids[0], pids[1]) << "flow " << id << " crosses processes";
    pids_with_flows.insert(pids[0]);
  }
  EXPECT_EQ(pids_with_flows.size(), 2u) << "both PEs' commands have flows";
}

// Both PEs' signals in one VCD, each PE under a scope of its name: the
// descriptor counts (different work on each PE) and occupancy waveforms
// are each PE's own.
TEST(MultiPeTrace, TwoPesAreTwoScopesOfOneVcd) {
  TwoPeRun run;
  const Vcd v = parse_vcd(read_file(run.vcd));
  EXPECT_NE(run.pes[0].at("commands"), run.pes[1].at("commands"));
  for (const auto& p : run.pes) {
    const std::string scope = "SystemC." + p.at("name").get<std::string>();
    SCOPED_TRACE(scope);
    for (const std::string& s : {scope, scope + ".pe_cpu", scope + ".pe_scheduler"}) {
      EXPECT_TRUE(v.scopes.count(s)) << s;
    }
    EXPECT_EQ(v.widths.count(scope + ".pe_cpu.state"), 1u);
    EXPECT_EQ(v.widths.count(scope + ".pe_scheduler.occupancy"), 1u);
    for (const EngineInfo& e : kEngines) {
      EXPECT_EQ(v.widths.count(scope + ".pe_scheduler.busy_" + e.port), 1u) << e.port;
    }
    const auto& descriptors = v.changes.at(scope + ".pe_cpu.descriptors");
    EXPECT_EQ(descriptors.back().second, p.at("commands").get<uint64_t>());
    std::vector<std::pair<uint64_t, uint64_t>> occupancy;
    for (const auto& s : p.at("occupancy")) occupancy.emplace_back(s.at(0), s.at(1));
    EXPECT_EQ(v.changes.at(scope + ".pe_scheduler.occupancy"), occupancy);
  }
  // Nothing outside the two PEs' scopes: 7 signals each.
  EXPECT_EQ(v.widths.size(), 2u * (3u + std::size(kEngines)));
}

// The two-PE files read in the consumers the single-PE ones are checked
// with (test_observability.cpp): the Chrome DevTools trace engine and
// GTKWave's vcd2fst / fst2vcd. Skipped where those are not installed.
TEST(MultiPeTrace, ConsumersReadTheTwoPeFiles) {
  const std::string dir = std::string(KB_SOURCE_DIR) + "/tests/trace_consumer";
  const bool node = std::system("command -v node >/dev/null 2>&1") == 0 &&
                    std::filesystem::exists(dir + "/node_modules/@paulirish/trace_engine/package.json");
  const bool gtkwave =
      std::system("command -v vcd2fst >/dev/null 2>&1 && command -v fst2vcd >/dev/null 2>&1") == 0;
  if (!node && !gtkwave) GTEST_SKIP() << "neither node with tests/trace_consumer nor GTKWave installed";
  TwoPeRun run;
  if (node) {
    const test::CliResult c = test::run_program(
        "/bin/sh", {"-c", "exec node \"$0\" \"$1\"", dir + "/check_trace.mjs", run.trace});
    nlohmann::json counts;
    ASSERT_NO_THROW(counts = nlohmann::json::parse(c.out)) << c.err;
    EXPECT_EQ(counts.at("errors"), 0) << c.err;
    EXPECT_EQ(counts.at("mis_nested"), 0);
    EXPECT_EQ(counts.at("flows_resolved"), counts.at("flows"));
    size_t slices = 0;
    for (const auto& p : run.pes) slices += p.at("slices").size();
    EXPECT_EQ(counts.at("slices"), slices);
    EXPECT_EQ(c.exit_code, 0);
  }
  if (gtkwave) {
    const std::string fst = run.dir.file("waves.fst"), back = run.dir.file("back.vcd");
    ASSERT_EQ(std::system(("vcd2fst '" + run.vcd + "' '" + fst + "' >/dev/null 2>&1").c_str()), 0);
    ASSERT_EQ(std::system(("fst2vcd '" + fst + "' > '" + back + "' 2>/dev/null").c_str()), 0);
    const Vcd ours = parse_vcd(read_file(run.vcd)), theirs = parse_vcd(read_file(back));
    EXPECT_EQ(theirs.scopes, ours.scopes);
    EXPECT_EQ(theirs.changes, ours.changes);
  }
}

// Two processes or scopes of one name would merge in a viewer: refused.
TEST(MultiPeTrace, ANameGivenTwiceIsRefused) {
  std::ostringstream out;
  ChromeTrace t(out);
  EXPECT_EQ(t.add_process("top.pe_0").pid(), 1);
  EXPECT_EQ(t.add_process("top.pe_1").pid(), 2);
  EXPECT_THROW(t.add_process("top.pe_0"), std::logic_error);
  EXPECT_THROW(t.add_process(""), std::logic_error);
  EXPECT_EQ(t.processes(), 2u);

  TempDir dir;
  const std::string path = dir.file("waves.vcd");
  const nlohmann::json r = run_function_isolated([&] {
    PeConfig cfg;
    PeTop top(cfg, 2);
    nlohmann::json j;
    auto error_of = [&](const std::vector<PeSignals>& pes) -> std::string {
      try {
        PeVcdTrace vcd(pes, path);
      } catch (const std::logic_error& e) {
        return e.what();
      }
      return "";
    };
    PeSignals renamed = pe_signals(top.pe(1));
    renamed.scope = top.pe(0).name();
    j["same"] = error_of({pe_signals(top.pe(0)), renamed});
    renamed.scope = "";
    j["empty"] = error_of({renamed});
    j["none"] = error_of({});
    return j;
  });
  EXPECT_NE(r.at("same").get<std::string>().find("two PEs under the scope 'pe_0'"), std::string::npos) << r;
  EXPECT_NE(r.at("empty").get<std::string>(), "") << r;
  EXPECT_NE(r.at("none").get<std::string>(), "") << r;
  EXPECT_FALSE(std::filesystem::exists(path)) << "nothing written for a refused VCD";
}

// schema_version in every machine-readable output of a run: the stats JSON
// (--stats), the run summary (kernbench --json) and the trace's metadata;
// a single PE is pid 1 named "pe" (its name()).
TEST(MultiPeTrace, SchemaVersionInStatsJsonAndTrace) {
  static_assert(kSchemaVersion == 1, "docs/observability.md documents schema_version 1");
  TempDir dir;
  RunSpec spec;
  spec.launches = {{"math", math_kernel}};
  spec.stats_path = dir.file("stats.json");
  spec.trace_path = dir.file("trace.json");
  const RunResult r = run_isolated(spec);
  ASSERT_TRUE(r.ok) << r.error;
  const nlohmann::json stats = nlohmann::json::parse(read_file(spec.stats_path));
  EXPECT_EQ(stats.at("schema_version"), kSchemaVersion);
  const nlohmann::json trace = nlohmann::json::parse(read_file(spec.trace_path));
  EXPECT_EQ(trace.at("otherData").at("schema_version"), kSchemaVersion);
  std::vector<std::pair<int, std::string>> processes;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "process_name") processes.emplace_back(e.at("pid"), e.at("args").at("name"));
  }
  EXPECT_EQ(processes, (std::vector<std::pair<int, std::string>>{{kTracePid, "pe"}}));
}

TEST(MultiPeTrace, SchemaVersionInTheJsonSummary) {
  TempDir dir;
  const std::string json = dir.file("summary.json");
  const test::CliResult c = test::run_program(KERNBENCH_BIN, {"run", "gemm-tiled-single-op", "--json", json});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const nlohmann::json j = nlohmann::json::parse(read_file(json));
  EXPECT_EQ(j.at("schema_version"), kSchemaVersion);
  EXPECT_EQ(j.at("bench"), "gemm-tiled-single-op");
}

}  // namespace
}  // namespace kb
