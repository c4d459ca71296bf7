// The trace at scale: the fast time formatter writes what
// std::to_chars writes, and --trace-window keeps exactly the events of the
// whole trace that overlap the window (models/trace/chrome_trace.h), for a
// PE run and a mesh run, in a file the DevTools trace engine reads.
#include <gtest/gtest.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iostream>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/attention/gqa_decode.h"
#include "kernels/ccl/all_reduce.h"
#include "kernels/gemm/gemm_composite.h"
#include "models/tl/tl.h"
#include "models/trace/chrome_trace.h"
#include "tb/run/mesh_run.h"
#include "tb/run/runner.h"
#include "tests/sim_util.h"
#include "tests/test_files.h"

namespace {

using kb::test::read_file;
using kb::test::TempDir;
using nlohmann::json;

std::string fast(double v) {
  char b[kb::kTraceTimeChars];
  return std::string(b, kb::write_trace_time(b, v));
}

std::string reference(double v) {
  char b[kb::kTraceTimeChars];
  return std::string(b, std::to_chars(b, b + sizeof b, v, std::chars_format::fixed).ptr);
}

TEST(TraceTime, WritesWhatToCharsWrites) {
  // Every ps up to 2 us, whole ps of every magnitude up to and past the
  // fast path's 1e15, reader sums (the ts rule), and values off the grid.
  for (uint64_t ps = 0; ps <= 2000000; ++ps) ASSERT_EQ(fast(double(ps) / 1e6), reference(double(ps) / 1e6)) << ps;
  std::mt19937_64 rng(16);
  for (int i = 0; i < 2000000; ++i) {
    const uint64_t ps = rng() >> (rng() % 64);
    const double us = double(ps) / 1e6;
    ASSERT_EQ(fast(us), reference(us)) << ps;
    const double sum = us + double(rng() % 1000000) / 1e6;
    ASSERT_EQ(fast(sum), reference(sum)) << ps;
    const double off = us * 1.0000001;
    ASSERT_EQ(fast(off), reference(off)) << ps;
  }
  for (double v : {0.085 + 0.06, 999999999.999999, 1e9, 1e9 - 1e-6, 1e15, 1.8e19, 1e300, 1e-7, 5e-324}) {
    EXPECT_EQ(fast(v), reference(v)) << v;
  }
}

std::string fast_double(double v) {
  char b[32];
  return std::string(b, kb::write_trace_double(b, v));
}

std::string reference_double(double v) {
  char b[32];
  return std::string(b, std::to_chars(b, b + sizeof b, v).ptr);
}

TEST(TraceDouble, WritesWhatToCharsWrites) {
  // dispatch_cycles_exact's shapes (FIXED + bytes x R), whole millionths of
  // every magnitude up to and past the fast path's 1e9 (where scientific
  // is shorter for whole numbers with trailing zeros, or tiny fractions),
  // and values off the grid.
  for (uint64_t m = 0; m <= 2000000; ++m) ASSERT_EQ(fast_double(double(m) / 1e6), reference_double(double(m) / 1e6)) << m;
  std::mt19937_64 rng(17);
  for (int i = 0; i < 1000000; ++i) {
    const uint64_t m = rng() >> (rng() % 64);
    const double v = double(m) / 1e6;
    ASSERT_EQ(fast_double(v), reference_double(v)) << m;
    const double cost = double(rng() % 400) + double(rng() % 100000) * (double(rng() % 64) / 16.0);
    ASSERT_EQ(fast_double(cost), reference_double(cost)) << cost;
    const double off = v * 1.0000001;
    ASSERT_EQ(fast_double(off), reference_double(off)) << m;
  }
  for (double v : {0.0, -0.0, -1.5, 104.375, 156.75, 1e5, 1.2e5, 1e4, 1e-4, 1e-3, 1.25e-4, 1e-6, 999999999.999999, 1e9,
                   1e15, 1e300, 5e-324, std::nan(""), HUGE_VAL, -HUGE_VAL}) {
    EXPECT_EQ(fast_double(v), reference_double(v)) << v;
  }
}

TEST(TraceWindow, ParsesUnitsAndRejectsBadValues) {
  auto w = [](const std::string& t) {
    const kb::TraceWindow x = kb::parse_trace_window(t);
    return std::make_pair(x.start_ps, x.end_ps);
  };
  EXPECT_EQ(w("100us:250us"), std::make_pair(uint64_t(100000000), uint64_t(250000000)));
  EXPECT_EQ(w("1.5ms:2ms"), std::make_pair(uint64_t(1500000000), uint64_t(2000000000)));
  EXPECT_EQ(w("0:5000000"), std::make_pair(uint64_t(0), uint64_t(5000000)));
  EXPECT_EQ(w("0.5ns:1ns"), std::make_pair(uint64_t(500), uint64_t(1000)));
  EXPECT_EQ(w("1s:2.000000000001s"), std::make_pair(uint64_t(1000000000000), uint64_t(2000000000001)));
  EXPECT_EQ(w("7ps:18446744073709551615"), std::make_pair(uint64_t(7), ~uint64_t(0)));
  for (const char* bad : {"", ":", "1us", "1us:", ":1us", "abc", "1xs:2us", "1 us:2us", "-1:5", "+1:5",
                          "1.:2", ".5us:1us", "1..5us:2us", "0.0005ns:1ns", "1.5:2", "2us:1us", "5us:5us",
                          "1:2:3", "18446744073709551616:18446744073709551617", "18446745s:18446746s",
                          "0:18446744073709551615.5"}) {
    EXPECT_THROW(kb::parse_trace_window(bad), std::invalid_argument) << bad;
  }
}

// ---- the window's events are the whole trace's that overlap it ----------

std::string key(const json& e) {
  return std::to_string(e.at("pid").get<int>()) + "|" + std::to_string(e.value("tid", -1)) + "|" +
         e.at("cat").get<std::string>() + "|" + e.at("ts").dump();
}

// The events of `whole` a window [start, end) keeps, by the rules of
// chrome_trace.h, each as its JSON text.
std::multiset<std::string> expected_events(const json& whole, uint64_t start, uint64_t end) {
  auto keeps = [&](uint64_t s, uint64_t e) { return s < end && (e > start || (s == e && s >= start)); };
  const json& events = whole.at("traceEvents");
  std::map<std::string, bool> slice_kept;  // slices with a duration, by what a flow binds to
  for (const json& e : events) {
    if (e["ph"] == "X" && e["args"]["end_ps"] > e["args"]["start_ps"]) {
      slice_kept[key(e)] = keeps(e["args"]["start_ps"], e["args"]["end_ps"]);
    }
  }
  std::map<uint64_t, int> flow_points_kept;
  for (const json& e : events) {
    if (e["ph"] == "s" || e["ph"] == "f") flow_points_kept[e["id"]] += slice_kept.at(key(e)) ? 1 : 0;
  }
  // Counter samples per process, in time order: each holds until the next.
  std::map<int, std::vector<const json*>> counters;
  for (const json& e : events)
    if (e["ph"] == "C") counters[e["pid"]].push_back(&e);
  std::set<const json*> counters_kept;
  for (const auto& [pid, samples] : counters) {
    for (size_t i = 0; i < samples.size(); ++i) {
      const uint64_t t = uint64_t(std::llround((*samples[i])["ts"].get<double>() * 1e6));
      const bool last = i + 1 == samples.size();
      const uint64_t next = last ? 0 : uint64_t(std::llround((*samples[i + 1])["ts"].get<double>() * 1e6));
      if (t < end && (t >= start || last || next > start)) counters_kept.insert(samples[i]);
    }
  }
  std::multiset<std::string> out;
  for (const json& e : events) {
    const std::string ph = e["ph"];
    bool kept = false;
    if (ph == "M") kept = true;
    else if (ph == "X") kept = keeps(e["args"]["start_ps"], e["args"]["end_ps"]);
    else if (ph == "s" || ph == "f") kept = flow_points_kept.at(e["id"]) == 2;
    else if (ph == "C") kept = counters_kept.count(&e) > 0;
    else ADD_FAILURE() << "unexpected event " << e.dump();
    if (kept) out.insert(e.dump());
  }
  return out;
}

std::multiset<std::string> events_of(const json& trace) {
  std::multiset<std::string> out;
  for (const json& e : trace.at("traceEvents")) out.insert(e.dump());
  return out;
}

size_t count_ph(const json& trace, const char* ph) {
  return size_t(std::count_if(trace["traceEvents"].begin(), trace["traceEvents"].end(),
                              [ph](const json& e) { return e["ph"] == ph; }));
}

// Checks a window's trace against its whole trace, and that the window
// cuts through the run: slices kept whole across its start, flows cut.
void check_window(const json& whole, const json& window, uint64_t start, uint64_t end) {
  ASSERT_EQ(window["otherData"]["trace_window"]["start_ps"], start);
  ASSERT_EQ(window["otherData"]["trace_window"]["end_ps"], end);
  EXPECT_FALSE(whole["otherData"].contains("trace_window"));
  const std::multiset<std::string> want = expected_events(whole, start, end), got = events_of(window);
  EXPECT_EQ(got.size(), want.size());
  EXPECT_TRUE(got == want) << "the window's events differ from the whole trace's that overlap it";
  // Not a vacuous window: some of every kind kept, some left out.
  for (const char* ph : {"X", "s", "C"}) {
    EXPECT_GT(count_ph(window, ph), 0u) << ph;
    EXPECT_LT(count_ph(window, ph), count_ph(whole, ph)) << ph;
  }
  EXPECT_EQ(count_ph(window, "M"), count_ph(whole, "M"));
  bool straddles = false;  // kept whole, not clipped
  for (const json& e : window["traceEvents"]) {
    if (e["ph"] == "X" && e["args"]["start_ps"] < start) straddles = true;
  }
  EXPECT_TRUE(straddles) << "no slice crosses the window's start";
}

kb::GqaShape small_gqa() {
  kb::GqaShape s;
  s.q_heads = 8;
  s.kv_heads = 2;
  s.context = 512;
  return s;
}

kb::RunSpec pe_spec() {
  kb::GemmShape g;
  g.m = g.n = g.k = 256;
  g.tile_m = g.tile_n = g.tile_k = 64;
  kb::RunSpec spec;
  spec.launches = {
      {"composite_gemm", [g](kb::Tl& tl) { kb::gemm_composite(tl, g); }},
      {"gqa_opt2", [](kb::Tl& tl) { kb::gqa_decode_opt2(tl, small_gqa()); }},
      {"gqa_opt3", [](kb::Tl& tl) { kb::gqa_decode_opt3(tl, small_gqa()); }},
  };
  return spec;
}

// A span inside the run, on no round number: [37%, 61%) of it.
kb::TraceWindow middle(uint64_t end_ps) { return {end_ps * 37 / 100 + 1, end_ps * 61 / 100 + 3}; }

struct PeRuns {
  TempDir dir;
  kb::TraceWindow w;
  json whole, window;
  PeRuns() {
    kb::RunSpec spec = pe_spec();
    spec.trace_path = dir.file("whole.json");
    const kb::RunResult full = kb::run_isolated(spec);
    if (!full.ok) throw std::runtime_error(full.error);
    w = middle(full.end_ps);
    spec.trace_path = dir.file("window.json");
    spec.trace_window = w;
    const kb::RunResult part = kb::run_isolated(spec);
    if (!part.ok) throw std::runtime_error(part.error);
    whole = json::parse(read_file(dir.file("whole.json")));
    window = json::parse(read_file(dir.file("window.json")));
  }
};

TEST(TraceWindow, PeRunKeepsExactlyTheOverlappingEvents) {
  PeRuns runs;
  check_window(runs.whole, runs.window, runs.w.start_ps, runs.w.end_ps);
}

TEST(TraceWindow, MeshRunKeepsExactlyTheOverlappingEvents) {
  TempDir dir;
  kb::MeshRunSpec spec;
  spec.config.topology.mesh.h = 1;
  spec.config.topology.mesh.w = 2;
  spec.config.topology.cube.pes = 2;
  spec.kernel_name = "lrab";
  spec.kernel = [](kb::Tl& tl) {
    const kb::Tensor x = tl.hbm("x", 1, 3000, kb::Dtype::kFp32);
    kb::test::init(tl, {x});
    kb::all_reduce_lrab(tl, x, kb::AllReduceOptions{512, 2});
  };
  spec.trace_path = dir.file("whole.json");
  const kb::MeshRunResult full = kb::run_mesh_isolated(spec);
  ASSERT_TRUE(full.ok) << full.error;
  const kb::TraceWindow w = middle(full.end_ps);
  spec.trace_path = dir.file("window.json");
  spec.trace_window = w;
  const kb::MeshRunResult part = kb::run_mesh_isolated(spec);
  ASSERT_TRUE(part.ok) << part.error;
  const json whole = json::parse(read_file(dir.file("whole.json")));
  const json window = json::parse(read_file(dir.file("window.json")));
  check_window(whole, window, w.start_ps, w.end_ps);
  size_t links = 0;  // the links' process is cut too
  for (const json& e : window["traceEvents"])
    if (e["ph"] == "X" && e["cat"] == "link") ++links;
  EXPECT_GT(links, 0u);
}

// The window opens in the Chrome DevTools trace engine as the whole trace
// does (tests/trace_consumer): no error, no slice dropped, every flow bound.
TEST(TraceWindow, TheDevToolsEngineReadsAWindow) {
  const std::string dir = std::string(KB_SOURCE_DIR) + "/tests/trace_consumer";
  if (std::system("command -v node >/dev/null 2>&1") != 0 ||
      !std::filesystem::exists(dir + "/node_modules/@paulirish/trace_engine/package.json")) {
    GTEST_SKIP() << "node with tests/trace_consumer not installed (scripts/setup.sh)";
  }
  PeRuns runs;
  const std::string path = runs.dir.file("window.json");
  const kb::test::CliResult c =
      kb::test::run_program("/bin/sh", {"-c", "exec node \"$0\" \"$1\"", dir + "/check_trace.mjs", path});
  std::cout << "DevTools trace engine: " << c.out << c.err;
  json counts;
  ASSERT_NO_THROW(counts = json::parse(c.out)) << c.err;
  EXPECT_EQ(counts.at("errors"), 0);
  EXPECT_EQ(counts.at("mis_nested"), 0);
  EXPECT_EQ(counts.at("flows_resolved"), counts.at("flows"));
  EXPECT_GT(counts.at("flows").get<size_t>(), 10u);
  EXPECT_EQ(counts.at("slices"), count_ph(runs.window, "X"));
  EXPECT_EQ(c.exit_code, 0);
}

// ---- the CLI ----------------------------------------------------------------

TEST(TraceWindowCli, BadValuesAreBadInputBeforeAnyRun) {
  TempDir dir;
  const std::string trace = dir.file("t.json");
  for (const char* bad : {"2us:1us", "junk", "1us", "99999999999999999999:1", "0.1ps:1ps"}) {
    const kb::test::CliResult c = kb::test::run_program(
        KERNBENCH_BIN, {"run", "gemm-composite", "--trace", trace, "--trace-window", bad});
    EXPECT_EQ(c.exit_code, 2) << bad;
    EXPECT_NE(c.err.find("--trace-window"), std::string::npos) << c.err;
    EXPECT_EQ(c.out, "") << "no run";
    EXPECT_FALSE(std::filesystem::exists(trace)) << bad;
  }
  const kb::test::CliResult alone =
      kb::test::run_program(KERNBENCH_BIN, {"run", "gemm-composite", "--trace-window", "1us:2us"});
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_NE(alone.err.find("--trace"), std::string::npos) << alone.err;
}

TEST(TraceWindowCli, RunReplayAndSystemBenchWriteTheWindow) {
  TempDir dir;
  const std::string stream = dir.file("stream.txt");
  ASSERT_EQ(kb::test::run_program(KERNBENCH_BIN, {"run", "gemm-composite", "--record", stream}).exit_code, 0);
  const std::vector<std::vector<std::string>> cases = {
      {"run", "gemm-composite"},
      {"replay", stream},
      {"run", "allreduce", "--param", "sizes=65536", "--param", "algos=ring"},
      {"run", "gqa-long-ctx", "--param", "cases=cube_sp_pe_sp", "--param", "contexts=512"},
  };
  for (const auto& base : cases) {
    std::vector<std::string> args = base;
    const std::string trace = dir.file("w.json");
    for (const char* a : {"--trace", trace.c_str(), "--trace-window", "1.5us:3us"}) args.push_back(a);
    const kb::test::CliResult c = kb::test::run_program(KERNBENCH_BIN, args);
    ASSERT_EQ(c.exit_code, 0) << c.err;
    const json j = json::parse(read_file(trace));
    EXPECT_EQ(j["otherData"]["trace_window"]["start_ps"], 1500000u);
    EXPECT_EQ(j["otherData"]["trace_window"]["end_ps"], 3000000u);
    size_t slices = 0;
    for (const json& e : j["traceEvents"]) {
      if (e["ph"] != "X") continue;
      ++slices;
      EXPECT_LT(e["args"]["start_ps"].get<uint64_t>(), 3000000u) << e.dump();
      EXPECT_GE(e["args"]["end_ps"].get<uint64_t>(), 1500000u) << e.dump();
    }
    EXPECT_GT(slices, 0u) << base[1];
  }
}

// A window over all of time keeps every event, and the trace still says
// which window was given.
TEST(TraceWindowCli, AWindowOverAllOfTimeIsStillStated) {
  TempDir dir;
  const std::string trace = dir.file("w.json");
  const kb::test::CliResult c = kb::test::run_program(
      KERNBENCH_BIN, {"run", "gemm-composite", "--trace", trace, "--trace-window", "0:18446744073709551615"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const json j = json::parse(read_file(trace));
  EXPECT_EQ(j["otherData"]["trace_window"]["start_ps"], 0u);
  EXPECT_EQ(j["otherData"]["trace_window"]["end_ps"], 18446744073709551615u);
}

}  // namespace
