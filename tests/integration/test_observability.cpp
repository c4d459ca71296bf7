// Observability: the Chrome / Perfetto trace (--trace), VCD waveforms
// (--vcd), statistics (--stats) and the CPU- / engine-bound verdict, checked
// against the op log of the same run; plus the CLI options and the sweep's
// progress display. Every simulation runs in a forked child (run_isolated).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/test_files.h"
#include "tests/vcd_reader.h"

#include <fcntl.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/attention/gqa_decode.h"
#include "kernels/gemm/gemm_composite.h"
#include "kernels/gemm/gemm_tiled_single_op.h"
#include "models/tl/tl.h"
#include "models/trace/chrome_trace.h"
#include "models/trace/schema_version.h"
#include "models/trace/stats.h"
#include "tb/benches/bench_registry.h"
#include "tb/run/runner.h"

namespace {

namespace fs = std::filesystem;
using kb::test::TempDir;
using kb::test::read_file;
using kb::test::Vcd;
using kb::test::parse_vcd;
using ::testing::HasSubstr;
using ::testing::Not;
using kb::Component;
using kb::OpRecord;
using kb::RecordKind;

// ---- helpers ---------------------------------------------------------------

// Tiny single-op MATH commands on TCM: each engine stage (pipeline latency +
// one lane group) is shorter than its dispatch (FIXED 8 cycles + bytes x R),
// so PE_CPU is the bottleneck. A few tl.cycles too.
void tiny_math(kb::Tl& tl) {
  const kb::Tensor a = tl.tcm("a", 1, 16, kb::Dtype::kFp32);
  const kb::Tensor b = tl.tcm("b", 1, 16, kb::Dtype::kFp32);
  kb::Tensor c[4];
  for (int i = 0; i < 4; ++i) c[i] = tl.tcm("c" + std::to_string(i), 1, 16, kb::Dtype::kFp32);
  tl.fill(a, 1.0);
  tl.fill(b, 2.0);
  for (int i = 0; i < 64; ++i) {
    tl.add(c[i % 4], a, b);
    if (i % 16 == 15) tl.cycles(5);
  }
}

kb::GemmShape gemm(int64_t m, int64_t n, int64_t k, int64_t tile = 64) {
  kb::GemmShape s;
  s.m = m;
  s.n = n;
  s.k = k;
  s.tile_m = s.tile_n = s.tile_k = tile;
  return s;
}

kb::GqaShape small_gqa() {
  kb::GqaShape s;
  s.q_heads = 8;
  s.kv_heads = 2;
  s.context = 512;
  return s;
}

// Several kernels back to back: composites (GEMM tile plan, GQA opt2 with
// FETCH/STORE/MATH stages), single-op GEMM tiles with queue stalls, GQA opt3
// and tiny MATH commands with tl.cycles.
kb::RunSpec mixed_spec() {
  kb::RunSpec spec;
  spec.launches = {
      {"composite_gemm", [](kb::Tl& tl) { kb::gemm_composite(tl, gemm(256, 256, 256)); }},
      {"single_op_gemm", [](kb::Tl& tl) { kb::gemm_tiled_single_op(tl, gemm(128, 128, 256)); }},
      {"gqa_opt2", [](kb::Tl& tl) { kb::gqa_decode_opt2(tl, small_gqa()); }},
      {"gqa_opt3", [](kb::Tl& tl) { kb::gqa_decode_opt3(tl, small_gqa()); }},
      {"tiny_math", tiny_math},
  };
  spec.keep_records = true;
  return spec;
}

struct Outputs {
  TempDir dir;
  std::string trace = dir.file("trace.json"), vcd = dir.file("waves.vcd"),
              stats = dir.file("stats.json"), oplog = dir.file("oplog.csv");
};

kb::RunResult run_with_outputs(kb::RunSpec spec, const Outputs& o) {
  spec.trace_path = o.trace;
  spec.vcd_path = o.vcd;
  spec.stats_path = o.stats;
  spec.oplog_path = o.oplog;
  kb::RunResult r = kb::run_isolated(spec);
  EXPECT_TRUE(r.ok) << r.error;
  return r;
}

struct Interval {
  uint64_t start, end;
  bool operator==(const Interval& o) const { return start == o.start && end == o.end; }
};
std::ostream& operator<<(std::ostream& os, const Interval& i) {
  return os << "[" << i.start << ", " << i.end << ")";
}

// Sorted, zero-length dropped, touching or overlapping intervals merged.
std::vector<Interval> merged(std::vector<Interval> v) {
  std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
  std::vector<Interval> out;
  for (const Interval& i : v) {
    if (i.end == i.start) continue;
    if (!out.empty() && i.start <= out.back().end) out.back().end = std::max(out.back().end, i.end);
    else out.push_back(i);
  }
  return out;
}

std::vector<Interval> record_intervals(const std::vector<OpRecord>& records,
                                       const std::function<bool(const OpRecord&)>& pred) {
  std::vector<Interval> v;
  for (const OpRecord& r : records)
    if (pred(r)) v.push_back({r.start_ps, r.end_ps});
  return v;
}

// Intervals during which a traced value satisfies `pred`.
std::vector<Interval> vcd_intervals(const Vcd& v, const std::string& path,
                                    const std::function<bool(uint64_t)>& pred) {
  std::vector<Interval> out;
  const auto& ch = v.changes.at(path);
  for (size_t i = 0; i < ch.size(); ++i) {
    if (!pred(ch[i].second)) continue;
    const uint64_t end = i + 1 < ch.size() ? ch[i + 1].first : v.last_time;
    out.push_back({ch[i].first, end});
  }
  return merged(out);
}

const char* const kVcdBusy[] = {"SystemC.pe.pe_scheduler.busy_dma", "SystemC.pe.pe_scheduler.busy_gemm",
                                "SystemC.pe.pe_scheduler.busy_math", "SystemC.pe.pe_scheduler.busy_tcm"};
const Component kEngines[] = {Component::kPeDma, Component::kPeGemm, Component::kPeMath,
                              Component::kPeTcm};

// ---- trace JSON --------------------------------------------------------------

using RecordKey = std::tuple<int, std::string, uint64_t, int64_t, uint64_t, uint64_t, uint64_t, uint64_t>;

TEST(ObservabilityTrace, ParsesAndHasEveryOpLogRecordOnceWithItsTimes) {
  Outputs o;
  const kb::RunResult r = run_with_outputs(mixed_spec(), o);
  ASSERT_FALSE(r.records.empty());
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(read_file(o.trace)));
  ASSERT_TRUE(j.at("traceEvents").is_array());
  // Perfetto would read every ts as nanoseconds (the format says microseconds).
  EXPECT_FALSE(j.contains("displayTimeUnit"));

  // Track names: one thread per component (the scheduler is a counter).
  std::map<int, std::string> thread_names;
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name") thread_names[e["tid"]] = e["args"]["name"];
  for (Component c : {Component::kPeCpu, Component::kPeDma, Component::kPeGemm, Component::kPeMath,
                      Component::kPeTcm}) {
    EXPECT_EQ(thread_names[kb::trace_tid(c)], kb::to_string(c));
  }

  std::vector<RecordKey> from_log, from_trace;
  for (const OpRecord& rec : r.records) {
    from_log.emplace_back(kb::trace_tid(rec.component), kb::trace_slice_name(rec), rec.cmd_id,
                          rec.tile, rec.start_ps, rec.end_ps, rec.bytes, rec.elements);
  }
  size_t launches = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "X") continue;
    if (e["cat"] == "launch") {
      ++launches;
      continue;
    }
    const auto& a = e.at("args");
    const uint64_t start = a.at("start_ps"), end = a.at("end_ps");
    // ts / dur in microseconds equal the op log's picoseconds: dur exactly
    // (the double nearest), ts at most 1e-6 ps later (moved past the previous
    // slice's floating-point end).
    const double ts = e.at("ts").get<double>();
    EXPECT_EQ(e.at("dur").get<double>(), double(end - start) / 1e6);
    EXPECT_GE(ts, double(start) / 1e6);
    EXPECT_LE(ts, double(start) / 1e6 + 1e-12);
    EXPECT_EQ(e.at("pid"), kb::kTracePid);
    from_trace.emplace_back(e.at("tid").get<int>(), e.at("name").get<std::string>(),
                            a.at("cmd_id").get<uint64_t>(), a.at("tile").get<int64_t>(), start, end,
                            a.at("bytes").get<uint64_t>(), a.value("elements", uint64_t(0)));
  }
  EXPECT_EQ(launches, r.launches.size());
  std::sort(from_log.begin(), from_log.end());
  std::sort(from_trace.begin(), from_trace.end());
  EXPECT_EQ(from_log.size(), r.records.size());
  EXPECT_TRUE(from_log == from_trace) << "the trace's slices are not the op log's records, once each";

  // Stages are named by command type and stage kind.
  std::set<std::string> names;
  for (const auto& k : from_trace) names.insert(std::get<1>(k));
  for (const char* n : {"CompositeCmd DISPATCH", "CompositeCmd DMA_READ", "CompositeCmd FETCH",
                        "CompositeCmd GEMM", "CompositeCmd STORE", "GemmCmd GEMM", "DmaReadCmd STALL",
                        "MathCmd MATH add", "CpuOverheadCmd CPU_CYCLES"}) {
    EXPECT_TRUE(names.count(n)) << n;
  }
}

// Slices on one track never overlap: neither in picoseconds nor as a reader
// computes their ends from the parsed doubles (ts + dur <= the next ts).
// Written naively, back-to-back slices would overlap (0.085 + 0.06 =
// 0.14500000000000002 > 0.145): the run has such pairs, so the test bites.
TEST(ObservabilityTrace, SlicesOnOneTrackNeverOverlap) {
  Outputs o;
  run_with_outputs(mixed_spec(), o);
  const nlohmann::json j = nlohmann::json::parse(read_file(o.trace));
  struct Slice {
    uint64_t start, end;
    double ts, dur;
  };
  std::map<int, std::vector<Slice>> tracks;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "X") continue;
    tracks[e["tid"]].push_back({e["args"]["start_ps"], e["args"]["end_ps"], e["ts"], e["dur"]});
  }
  EXPECT_EQ(tracks.size(), 6u) << "launches, pe_cpu and four engines";
  size_t back_to_back = 0, naive_overlaps = 0;
  for (auto& [tid, v] : tracks) {
    std::sort(v.begin(), v.end(), [](const Slice& a, const Slice& b) {
      return a.start != b.start ? a.start < b.start : a.end < b.end;
    });
    for (size_t i = 1; i < v.size(); ++i) {
      const Slice &a = v[i - 1], &b = v[i];
      EXPECT_LE(a.end, b.start) << "track " << tid << ": [" << a.start << ", " << a.end << ") overlaps ["
                                << b.start << ", " << b.end << ")";
      EXPECT_LE(a.ts + a.dur, b.ts) << "track " << tid << ": ts " << a.ts << " + dur " << a.dur
                                    << " ends past the next ts " << b.ts;
      if (a.end == b.start) {
        ++back_to_back;
        naive_overlaps += double(a.start) / 1e6 + double(a.end - a.start) / 1e6 > double(b.start) / 1e6;
      }
    }
  }
  EXPECT_GT(naive_overlaps, 0u) << "of " << back_to_back << " back-to-back pairs";
}

// Flows: one per (DISPATCH, engine stage) of a command, an "s" then an "f"
// with one id, cat "cmd", name "cmd <cmd_id>". Each flow event has exactly
// the ts, pid, tid and cat of the slice it binds to (the Chrome DevTools
// trace engine binds by equality): "s" its command's DISPATCH, "f" the
// stage. Every non-zero-length stage of every command has its flow; the
// two ts of a flow differ (the engine keeps one slice per ts in a flow).
TEST(ObservabilityTrace, FlowsBindToTheDispatchAndEachStage) {
  Outputs o;
  const kb::RunResult r = run_with_outputs(mixed_spec(), o);
  const nlohmann::json j = nlohmann::json::parse(read_file(o.trace));
  using Binding = std::tuple<double, int, int, std::string>;  // ts, pid, tid, cat
  std::map<Binding, std::vector<const nlohmann::json*>> slices;
  std::map<uint64_t, std::vector<const nlohmann::json*>> flows;  // id -> events in file order
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "X") slices[{e["ts"], e["pid"], e["tid"], e["cat"]}].push_back(&e);
    if (e["ph"] == "s" || e["ph"] == "t" || e["ph"] == "f") flows[e["id"]].push_back(&e);
  }
  // Expected: one flow per stage record of a command that has a DISPATCH,
  // both of non-zero length.
  std::map<uint64_t, size_t> stages_of;  // cmd -> linked stages
  std::set<uint64_t> dispatched;
  for (const OpRecord& rec : r.records)
    if (rec.kind == RecordKind::kDispatch && rec.end_ps > rec.start_ps) dispatched.insert(rec.cmd_id);
  size_t expected = 0;
  for (const OpRecord& rec : r.records) {
    if (rec.component == Component::kPeCpu || rec.end_ps == rec.start_ps || !dispatched.count(rec.cmd_id)) continue;
    ++stages_of[rec.cmd_id];
    ++expected;
  }
  EXPECT_EQ(flows.size(), expected);
  std::map<uint64_t, size_t> flows_of;  // cmd -> flows seen
  std::set<uint64_t> composites;
  for (const auto& [id, f] : flows) {
    SCOPED_TRACE("flow " + std::to_string(id));
    ASSERT_EQ(f.size(), 2u);
    const nlohmann::json &s = *f[0], &e = *f[1];
    EXPECT_EQ(s["ph"], "s");
    EXPECT_EQ(e["ph"], "f");
    EXPECT_EQ(e["bp"], "e");
    EXPECT_EQ(s["name"], e["name"]);
    EXPECT_EQ(s["cat"], "cmd");
    EXPECT_EQ(e["cat"], "cmd");
    EXPECT_NE(s["ts"].get<double>(), e["ts"].get<double>());
    const auto bound = [&](const nlohmann::json& p) -> const nlohmann::json* {
      const auto it = slices.find({p["ts"], p["pid"], p["tid"], p["cat"]});
      return it == slices.end() || it->second.size() != 1 ? nullptr : it->second.front();
    };
    const nlohmann::json* from = bound(s);
    const nlohmann::json* to = bound(e);
    ASSERT_TRUE(from && to) << "each flow event binds to exactly one slice";
    EXPECT_EQ((*from)["args"]["kind"], "DISPATCH");
    EXPECT_NE((*to)["tid"], kb::trace_tid(Component::kPeCpu)) << "an engine stage";
    const uint64_t cmd = (*from)["args"]["cmd_id"];
    EXPECT_EQ((*to)["args"]["cmd_id"], cmd) << "both slices of one command";
    EXPECT_EQ(s["name"], "cmd " + std::to_string(cmd));
    ++flows_of[cmd];
    if ((*from)["args"]["cmd_type"] == "CompositeCmd") composites.insert(cmd);
  }
  EXPECT_EQ(flows_of, stages_of) << "a flow to every stage of every command";
  ASSERT_FALSE(composites.empty());
  for (uint64_t c : composites) EXPECT_GT(flows_of[c], 2u) << "composite " << c << " has several stages";
}

TEST(ObservabilityTrace, OccupancyCounterStaysWithinTheQueue) {
  Outputs o;
  kb::RunSpec spec = mixed_spec();
  const kb::RunResult r = run_with_outputs(spec, o);
  const nlohmann::json j = nlohmann::json::parse(read_file(o.trace));
  std::vector<std::pair<double, uint64_t>> samples;
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "C") {
      EXPECT_EQ(e["name"], "pe_scheduler");
      samples.emplace_back(e["ts"], e["args"]["queue_occupancy"]);
    }
  ASSERT_GE(samples.size(), 3u);
  EXPECT_EQ(samples.front(), std::make_pair(0.0, uint64_t(0)));
  uint64_t max = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    max = std::max(max, samples[i].second);
    if (i) {
      EXPECT_LT(samples[i - 1].first, samples[i].first) << "one sample per change, in time order";
    }
  }
  EXPECT_EQ(max, spec.config.scheduler.queue_depth) << "the single-op GEMM fills the queue";
  EXPECT_EQ(samples.back().second, 0u) << "the run ends drained";
  EXPECT_EQ(r.stats.run.occupancy_max, spec.config.scheduler.queue_depth);
}

TEST(ObservabilityTrace, IsDeterministic) {
  Outputs a, b;
  run_with_outputs(mixed_spec(), a);
  run_with_outputs(mixed_spec(), b);
  const std::string ta = read_file(a.trace);
  EXPECT_FALSE(ta.empty());
  EXPECT_TRUE(ta == read_file(b.trace)) << "traces differ";
  EXPECT_TRUE(read_file(a.stats) == read_file(b.stats)) << "statistics differ";
  // The VCD header carries the date; the value changes must match.
  auto body = [](const std::string& s) { return s.substr(s.find("$timescale")); };
  EXPECT_TRUE(body(read_file(a.vcd)) == body(read_file(b.vcd))) << "VCDs differ";
}

// Names come from kernels and files: the trace stays valid JSON (and UTF-8)
// whatever bytes they hold. Written straight to a stream, no simulation.
TEST(ObservabilityTrace, NamesAreEscapedAndInvalidUtf8Replaced) {
  std::ostringstream out;
  kb::ChromeTrace t(out);
  const std::string name = std::string("k\"q\\b\n\x01 \xff\xc3(") + "\xe2\x82\xac";  // ... then a valid euro sign
  t.add_process("pe").launch({name, 0, 1000});
  t.finish();
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(out.str())) << out.str();  // rejects invalid UTF-8
  std::string got;
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "X") got = e["name"];
  EXPECT_EQ(got, "k\"q\\b\n\x01 \xef\xbf\xbd\xef\xbf\xbd(\xe2\x82\xac");
}

// A record's name parts are escaped once and copied into args: args hold the
// same escaped text, and an empty cmd_type stays "" there while the name
// shows "?".
TEST(ObservabilityTrace, RecordNamePartsAreEscapedInNameAndArgs) {
  std::ostringstream out;
  kb::ChromeTrace t(out);
  kb::TraceProcess& p = t.add_process("pe");
  static const char kType[] = "Q\"t\\y\x02\xff\xe2\x82\xac";  // quote, backslash, control, bad byte, euro
  static const char kOp[] = "plain8by" "e\"x\x1fp\xc3";  // escapes after a plain word
  kb::OpRecord r;
  r.component = kb::Component::kPeMath;
  r.kind = kb::RecordKind::kMath;
  r.cmd_id = 7;
  r.cmd_type = kType;
  r.op = kOp;
  r.start_ps = 1000;
  r.end_ps = 3000;
  p.record(r);
  kb::OpRecord plain = r;  // empty cmd_type and op
  plain.cmd_type = "";
  plain.op = "";
  plain.start_ps = 3000;
  plain.end_ps = 4000;
  p.record(plain);
  t.finish();
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(out.str())) << out.str();
  std::vector<nlohmann::json> slices;
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "X") slices.push_back(e);
  ASSERT_EQ(slices.size(), 2u);
  const std::string type = "Q\"t\\y\x02\xef\xbf\xbd\xe2\x82\xac", op = "plain8bye\"x\x1fp\xef\xbf\xbd";
  EXPECT_EQ(slices[0]["name"], type + " MATH " + op);
  EXPECT_EQ(slices[0]["args"]["cmd_type"], type);
  EXPECT_EQ(slices[0]["args"]["kind"], "MATH");
  EXPECT_EQ(slices[0]["args"]["op"], op);
  EXPECT_EQ(slices[1]["name"], "? MATH");
  EXPECT_EQ(slices[1]["args"]["cmd_type"], "");
  EXPECT_FALSE(slices[1]["args"].contains("op"));
  // The escapes as written: \" \\ and \u00XX.
  EXPECT_NE(out.str().find("\"name\":\"Q\\\"t\\\\y\\u0002"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("\"cmd_type\":\"Q\\\"t\\\\y\\u0002"), std::string::npos) << out.str();
}

// The trace as the Chrome DevTools Performance panel reads it: loaded with
// its trace engine (npm @paulirish/trace_engine, pinned in
// tests/trace_consumer/), which counts parse errors, slices it drops as
// mis-nested and flows whose events do not all bind to slices.
TEST(ObservabilityTrace, ChromeDevToolsTraceEngineReadsIt) {
  const std::string dir = std::string(KB_SOURCE_DIR) + "/tests/trace_consumer";
  if (std::system("command -v node >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "node not installed (scripts/setup.sh installs nodejs and npm)";
  }
  if (!fs::exists(dir + "/node_modules/@paulirish/trace_engine/package.json")) {
    GTEST_SKIP() << "no " << dir << "/node_modules: run `npm ci` there (scripts/setup.sh does)";
  }
  Outputs o;
  const kb::RunResult r = run_with_outputs(mixed_spec(), o);
  const kb::test::CliResult c = kb::test::run_program(
      "/bin/sh", {"-c", "exec node \"$0\" \"$1\"", dir + "/check_trace.mjs", o.trace});
  std::cout << "DevTools trace engine: " << c.out << c.err;
  nlohmann::json counts;
  ASSERT_NO_THROW(counts = nlohmann::json::parse(c.out)) << c.err;
  EXPECT_EQ(counts.at("errors"), 0);
  EXPECT_EQ(counts.at("mis_nested"), 0);
  EXPECT_EQ(counts.at("flows_resolved"), counts.at("flows"));
  EXPECT_GT(counts.at("flows").get<size_t>(), 100u);
  EXPECT_EQ(counts.at("slices"), r.records.size() + r.launches.size());
  EXPECT_EQ(c.exit_code, 0);
}

// The trace is written as the run goes: neither the records nor the JSON
// are held, so peak memory does not grow with the run (it grew by about
// 14 KB per command when the whole JSON was built in memory).
TEST(ObservabilityTrace, MemoryDoesNotGrowWithTheRun) {
  auto peak_kb = [](int64_t context) {
    kb::GqaShape s;
    s.context = context;
    kb::RunSpec spec;
    spec.launches = {{"opt3", [s](kb::Tl& tl) { kb::gqa_decode_opt3(tl, s); }}};
    spec.trace_path = "/dev/null";
    const kb::RunResult r = kb::run_isolated(spec);
    EXPECT_TRUE(r.ok) << r.error;
    return std::make_pair(r.peak_rss_kb, r.launches.empty() ? 0 : r.launches[0].commands);
  };
  const auto [short_kb, short_cmds] = peak_kb(4096);
  const auto [long_kb, long_cmds] = peak_kb(32768);
  std::cout << "peak RSS with --trace: " << short_kb << " KB at " << short_cmds << " commands, " << long_kb
            << " KB at " << long_cmds << "\n";
  EXPECT_GE(long_cmds, short_cmds + 25000);
  EXPECT_LT(long_kb, short_kb + 4096) << short_kb << " KB at " << short_cmds << " commands, " << long_kb
                                      << " KB at " << long_cmds;
}

// ---- VCD ---------------------------------------------------------------------

TEST(ObservabilityVcd, ParsesWithHeaderScopesAndSignals) {
  Outputs o;
  const kb::RunResult r = run_with_outputs(mixed_spec(), o);
  Vcd v;
  ASSERT_NO_THROW(v = parse_vcd(read_file(o.vcd)));
  EXPECT_EQ(v.timescale, "1 ps");
  for (const char* s : {"SystemC", "SystemC.pe", "SystemC.pe.pe_cpu", "SystemC.pe.pe_scheduler"})
    EXPECT_TRUE(v.scopes.count(s)) << s;
  EXPECT_EQ(v.widths["SystemC.pe.pe_cpu.state"], 2);
  EXPECT_EQ(v.widths["SystemC.pe.pe_cpu.descriptors"], 64);
  EXPECT_EQ(v.widths["SystemC.pe.pe_scheduler.occupancy"], 32);
  for (const char* b : kVcdBusy) EXPECT_EQ(v.widths[b], 1) << b;
  for (const auto& [path, w] : v.widths) {
    ASSERT_TRUE(v.changes.count(path)) << path << " has no initial value";
    EXPECT_EQ(v.changes[path].front().first, 0u) << path;
  }
  // Final values: idle, every descriptor written, queue drained, engines idle.
  uint64_t commands = 0;
  for (const kb::LaunchResult& l : r.launches) commands += l.commands;
  EXPECT_EQ(v.changes["SystemC.pe.pe_cpu.descriptors"].back().second, commands);
  EXPECT_EQ(v.changes["SystemC.pe.pe_cpu.state"].back().second, uint64_t(kb::CpuState::kIdle));
  EXPECT_EQ(v.changes["SystemC.pe.pe_scheduler.occupancy"].back().second, 0u);
  for (const char* b : kVcdBusy) EXPECT_EQ(v.changes[b].back().second, 0u) << b;
  EXPECT_GE(v.last_time, r.end_ps);
}

TEST(ObservabilityVcd, BusyIntervalsEqualTheOpLogPerEngine) {
  Outputs o;
  const kb::RunResult r = run_with_outputs(mixed_spec(), o);
  const Vcd v = parse_vcd(read_file(o.vcd));
  for (int e = 0; e < 4; ++e) {
    SCOPED_TRACE(kVcdBusy[e]);
    const auto from_log = merged(record_intervals(
        r.records, [&](const OpRecord& rec) { return rec.component == kEngines[e]; }));
    const auto from_vcd = vcd_intervals(v, kVcdBusy[e], [](uint64_t x) { return x == 1; });
    EXPECT_FALSE(from_log.empty());
    EXPECT_EQ(from_vcd, from_log);
  }
}

// PE_CPU's state waveform: dispatching exactly during DISPATCH and
// CPU_CYCLES records, stalled exactly during STALL records; the occupancy
// waveform is the trace's counter.
TEST(ObservabilityVcd, CpuStateAndOccupancyEqualTheOpLogAndTrace) {
  Outputs o;
  const kb::RunResult r = run_with_outputs(mixed_spec(), o);
  const Vcd v = parse_vcd(read_file(o.vcd));
  const std::string state = "SystemC.pe.pe_cpu.state";
  const auto dispatching = merged(record_intervals(r.records, [](const OpRecord& rec) {
    return rec.kind == RecordKind::kDispatch || rec.kind == RecordKind::kCpuCycles;
  }));
  const auto stalled = merged(
      record_intervals(r.records, [](const OpRecord& rec) { return rec.kind == RecordKind::kStall; }));
  ASSERT_FALSE(stalled.empty());
  EXPECT_EQ(vcd_intervals(v, state, [](uint64_t s) { return s == uint64_t(kb::CpuState::kDispatching); }),
            dispatching);
  EXPECT_EQ(vcd_intervals(v, state, [](uint64_t s) { return s == uint64_t(kb::CpuState::kStalled); }),
            stalled);
  EXPECT_FALSE(vcd_intervals(v, state, [](uint64_t s) { return s == uint64_t(kb::CpuState::kWaiting); }).empty())
      << "every launch ends draining";

  const nlohmann::json j = nlohmann::json::parse(read_file(o.trace));
  std::vector<std::pair<uint64_t, uint64_t>> counter;
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "C") counter.emplace_back(std::llround(e["ts"].get<double>() * 1e6), e["args"]["queue_occupancy"]);
  EXPECT_EQ(v.changes.at("SystemC.pe.pe_scheduler.occupancy"), counter);
}

// The trace's occupancy counter comes from PE_SCHEDULER itself, not from
// its signal (a trace alone turns no signal on). At every
// queue depth, a trace written alone is the one written beside a VCD, byte
// for byte, and its counter is the VCD's occupancy waveform.
TEST(ObservabilityTrace, OccupancyCounterIsTheSignalsWaveformWithOrWithoutAVcd) {
  for (uint64_t depth : {1, 3, 64}) {
    SCOPED_TRACE("queue_depth " + std::to_string(depth));
    kb::RunSpec spec = mixed_spec();
    spec.keep_records = false;
    spec.config.scheduler.queue_depth = depth;
    Outputs with_vcd, alone;
    run_with_outputs(spec, with_vcd);
    spec.trace_path = alone.trace;
    const kb::RunResult r = kb::run_isolated(spec);
    ASSERT_TRUE(r.ok) << r.error;
    const std::string trace = read_file(alone.trace);
    EXPECT_TRUE(trace == read_file(with_vcd.trace)) << "the trace depends on whether signals are on";
    const nlohmann::json j = nlohmann::json::parse(trace);
    std::vector<std::pair<uint64_t, uint64_t>> counter;
    for (const auto& e : j["traceEvents"])
      if (e["ph"] == "C") counter.emplace_back(std::llround(e["ts"].get<double>() * 1e6), e["args"]["queue_occupancy"]);
    EXPECT_GT(counter.size(), 10u);
    EXPECT_EQ(parse_vcd(read_file(with_vcd.vcd)).changes.at("SystemC.pe.pe_scheduler.occupancy"), counter);
  }
}

// GTKWave's own reader: vcd2fst converts the file to FST and fst2vcd back;
// the round trip keeps every value change. Skipped where GTKWave's tools
// are not installed (they are not a build dependency).
TEST(ObservabilityVcd, GtkwaveReadsItWhenInstalled) {
  if (std::system("command -v vcd2fst >/dev/null 2>&1 && command -v fst2vcd >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "GTKWave (vcd2fst, fst2vcd) not installed";
  }
  Outputs o;
  run_with_outputs(mixed_spec(), o);
  const std::string fst = o.dir.file("waves.fst"), back = o.dir.file("back.vcd");
  ASSERT_EQ(std::system(("vcd2fst '" + o.vcd + "' '" + fst + "' >/dev/null 2>&1").c_str()), 0);
  ASSERT_EQ(std::system(("fst2vcd '" + fst + "' > '" + back + "' 2>/dev/null").c_str()), 0);
  const Vcd ours = parse_vcd(read_file(o.vcd)), theirs = parse_vcd(read_file(back));
  EXPECT_EQ(theirs.widths, ours.widths);
  EXPECT_EQ(theirs.scopes, ours.scopes);
  EXPECT_EQ(theirs.changes, ours.changes);
}

// ---- statistics --------------------------------------------------------------

// The summary is computed as the run goes (StreamingStats); recomputing it
// from the kept op-log records and the occupancy history's samples
// (compute_run_stats) gives the same figures, for several kernels and queue
// depths. occupancy_max may only be lower: a value the history saw for zero
// time (within one instant) does not count as held. The last launch fails
// with stages still running, which have no record: the streaming figures
// count them busy until the stop, so engines idle and exposed dispatch may
// only be lower there.
TEST(ObservabilityStats, StreamingEqualsRecomputedFromTheOpLog) {
  kb::GqaShape gqa;
  gqa.q_heads = 8;
  gqa.kv_heads = 2;
  gqa.context = 700;  // a short last tile
  kb::GemmShape gemm;
  gemm.m = 256;
  gemm.n = 192;
  gemm.k = 320;
  const std::vector<std::pair<std::string, kb::Kernel>> kernels = {
      {"opt3", [gqa](kb::Tl& tl) { kb::gqa_decode_opt3(tl, gqa); }},
      {"opt2", [gqa](kb::Tl& tl) { kb::gqa_decode_opt2(tl, gqa); }},
      {"gemm", [gemm](kb::Tl& tl) { kb::gemm_tiled_single_op(tl, gemm); }},
      {"fails", [](kb::Tl& tl) {
         const kb::Tensor src = tl.hbm("src", 256, 256, kb::Dtype::kBf16);
         const kb::Tensor dst = tl.tcm("dst", 256, 256, kb::Dtype::kBf16);
         const kb::Tensor small = tl.tcm("small", 4, 4, kb::Dtype::kBf16);
         tl.host_random(src, 1);
         for (int i = 0; i < 12; ++i) tl.load(dst, src);
         tl.load(small, src);  // shape mismatch: rejected while loads run
       }}};
  for (uint32_t depth : {1u, 3u, 8u}) {
    kb::RunSpec spec;
    spec.config.scheduler.queue_depth = depth;
    spec.launches = kernels;
    spec.keep_records = true;
    const kb::RunResult r = kb::run_isolated(spec);
    ASSERT_FALSE(r.ok);
    ASSERT_EQ(r.launches.size(), kernels.size()) << r.error;
    kb::RunStats oracle = kb::compute_run_stats(r.records, r.launches, r.occupancy, depth);
    kb::RunStats streamed = r.stats;
    std::vector<std::pair<kb::WindowStats*, kb::WindowStats*>> pairs = {{&streamed.run, &oracle.run}};
    ASSERT_EQ(streamed.launches.size(), oracle.launches.size());
    for (size_t i = 0; i < oracle.launches.size(); ++i) pairs.push_back({&streamed.launches[i], &oracle.launches[i]});
    for (auto [s, o] : pairs) {
      SCOPED_TRACE("depth " + std::to_string(depth) + ", window " + o->name);
      EXPECT_LE(s->occupancy_max, o->occupancy_max);
      EXPECT_GT(s->occupancy_max, 0u);
      s->occupancy_max = o->occupancy_max;
      EXPECT_NEAR(s->occupancy_mean, o->occupancy_mean, 1e-9 * std::max(1.0, o->occupancy_mean));
      s->occupancy_mean = o->occupancy_mean;
      if (o->name == "fails" || o->name == "run") {
        EXPECT_LE(s->engines_idle_ps, o->engines_idle_ps);
        EXPECT_LE(s->exposed_dispatch_ps, o->exposed_dispatch_ps);
        s->engines_idle_ps = o->engines_idle_ps;
        s->exposed_dispatch_ps = o->exposed_dispatch_ps;
      }
    }
    EXPECT_EQ(kb::to_json(streamed), kb::to_json(oracle)) << "depth " << depth;
  }
}

TEST(ObservabilityStats, ConsistentWithTheOpLog) {
  Outputs o;
  const kb::RunResult r = run_with_outputs(mixed_spec(), o);
  nlohmann::json file;
  ASSERT_NO_THROW(file = nlohmann::json::parse(read_file(o.stats)));
  // The file is what the run reports.
  nlohmann::json reported = kb::to_json(r.stats);
  reported["clock_freq_ghz"] = kb::PeConfig{}.clock_freq_ghz;
  reported["schema_version"] = kb::kSchemaVersion;
  EXPECT_EQ(file, reported);
  EXPECT_EQ(file.value("verdict_rule", ""), kb::kVerdictRule);

  const kb::RunStats& s = r.stats;
  ASSERT_EQ(s.launches.size(), r.launches.size());
  uint64_t run_commands = 0;
  for (size_t i = 0; i < r.launches.size(); ++i) {
    const kb::LaunchResult& l = r.launches[i];
    const kb::WindowStats& w = s.launches[i];
    SCOPED_TRACE("launch " + l.kernel);
    EXPECT_EQ(w.name, l.kernel);
    EXPECT_EQ(w.start_ps, l.start_ps);
    EXPECT_EQ(w.end_ps, l.end_ps);
    std::vector<OpRecord> mine;
    for (const OpRecord& rec : r.records)
      if (rec.start_ps >= l.start_ps && rec.end_ps <= l.end_ps) mine.push_back(rec);
    // Per component: busy = the op log's durations (stalls excluded),
    // utilisation = busy / span.
    for (int c = 0; c < kb::kNumComponents; ++c) {
      if (Component(c) == Component::kPeScheduler) continue;
      uint64_t busy = 0;
      for (const OpRecord& rec : mine)
        if (int(rec.component) == c && rec.kind != RecordKind::kStall) busy += rec.end_ps - rec.start_ps;
      EXPECT_EQ(w.components[c].busy_ps, busy) << kb::to_string(Component(c));
      EXPECT_EQ(w.components[c].busy_ps, l.busy_ps[c]) << kb::to_string(Component(c));
      EXPECT_DOUBLE_EQ(w.components[c].utilisation, double(busy) / double(l.latency_ps()));
      const auto& jc = file["launches"][i]["components"];
      // An optional component (PE_IPC) is listed only where it ran a stage.
      EXPECT_EQ(jc.contains(kb::to_string(Component(c))), !kb::is_optional(Component(c)) || busy > 0);
      if (!jc.contains(kb::to_string(Component(c)))) continue;
      EXPECT_DOUBLE_EQ(jc[kb::to_string(Component(c))]["utilisation"].get<double>(),
                       double(busy) / double(l.latency_ps()));
    }
    // Counts and logical bytes by type add up, and match PE_CPU's totals.
    uint64_t count = 0, bytes = 0, cpu_cycles = 0;
    for (int t = 0; t < 6; ++t) {
      EXPECT_EQ(w.by_type[t].commands, l.commands_by_type[t]) << kb::command_type_name(t);
      count += w.by_type[t].commands;
      bytes += w.by_type[t].logical_bytes;
    }
    for (const OpRecord& rec : mine) cpu_cycles += rec.kind == RecordKind::kCpuCycles;
    EXPECT_EQ(w.by_type[6].commands, cpu_cycles) << "CpuOverheadCmd counts tl.cycles calls";
    EXPECT_EQ(count, w.commands);
    EXPECT_EQ(count, l.commands);
    EXPECT_EQ(bytes, w.logical_bytes);
    EXPECT_EQ(bytes, l.logical_bytes);
    uint64_t kinds = 0;
    for (const kb::KindStats& k : w.kinds) kinds += k.count;
    EXPECT_EQ(kinds, mine.size());
    // Dispatch totals and stall time.
    EXPECT_DOUBLE_EQ(w.dispatch_cycles_exact, l.dispatch_cycles_exact);
    EXPECT_EQ(w.dispatch_cycles_charged, l.dispatch_cycles_charged);
    EXPECT_EQ(w.dispatch_ps, l.dispatch_ps);
    EXPECT_EQ(w.cpu_cycles_ps, l.cpu_cycles_ps);
    EXPECT_EQ(w.stall_ps, l.stall_ps);
    // Exposed dispatch, brute force: elementary segments where PE_CPU is
    // busy and no engine is.
    std::set<uint64_t> cuts{l.start_ps, l.end_ps};
    for (const OpRecord& rec : mine) cuts.insert({rec.start_ps, rec.end_ps});
    const std::vector<uint64_t> t(cuts.begin(), cuts.end());
    uint64_t exposed = 0, idle = 0;
    for (size_t k = 0; k + 1 < t.size(); ++k) {
      bool cpu = false, engine = false;
      for (const OpRecord& rec : mine) {
        if (rec.start_ps > t[k] || rec.end_ps < t[k + 1]) continue;
        if (rec.component == Component::kPeCpu) cpu |= rec.kind != RecordKind::kStall;
        else engine = true;
      }
      if (!engine) idle += t[k + 1] - t[k];
      if (cpu && !engine) exposed += t[k + 1] - t[k];
    }
    EXPECT_EQ(w.exposed_dispatch_ps, exposed);
    EXPECT_EQ(w.engines_idle_ps, idle);
    EXPECT_LE(w.occupancy_max, s.queue_depth);
    EXPECT_LE(w.occupancy_mean, double(s.queue_depth));
    // The verdict and the fractions that justify it.
    const kb::Verdict& v = w.verdict;
    double busiest = 0;
    for (Component e : kEngines) busiest = std::max(busiest, w.components[int(e)].utilisation);
    EXPECT_DOUBLE_EQ(v.cpu_fraction, w.components[int(Component::kPeCpu)].utilisation);
    EXPECT_DOUBLE_EQ(v.engine_fraction, busiest);
    EXPECT_DOUBLE_EQ(w.components[int(v.busiest_engine)].utilisation, busiest);
    EXPECT_EQ(v.cpu_bound, v.cpu_fraction >= v.engine_fraction);
    EXPECT_EQ(v.text(), kb::bottleneck(l)) << "agrees with the bench tables' verdict";
    EXPECT_EQ(file["launches"][i]["verdict"]["bound"], v.text());
    run_commands += l.commands;
  }
  // The whole run.
  EXPECT_EQ(s.run.commands, run_commands);
  EXPECT_EQ(s.run.start_ps, r.launches.front().start_ps);
  EXPECT_EQ(s.run.end_ps, r.launches.back().end_ps);
  for (int c = 0; c < kb::kNumComponents; ++c) EXPECT_EQ(s.run.components[c].busy_ps, r.busy_ps[c]);
  uint64_t records = 0;
  for (const kb::KindStats& k : s.run.kinds) records += k.count;
  EXPECT_EQ(records, r.records.size());
}

TEST(ObservabilityStats, VerdictCpuBoundOnTinySingleOpCommands) {
  kb::RunSpec spec;
  spec.launches = {{"tiny_math", tiny_math}};
  const kb::RunResult r = kb::run_isolated(spec);
  ASSERT_TRUE(r.ok) << r.error;
  const kb::WindowStats& w = r.stats.launches.at(0);
  EXPECT_TRUE(w.verdict.cpu_bound) << w.verdict.explanation();
  EXPECT_EQ(w.verdict.text(), "CPU-bound");
  EXPECT_GT(w.verdict.cpu_fraction, w.verdict.engine_fraction);
  EXPECT_GT(w.fraction(w.exposed_dispatch_ps), 0.5) << "engines idle while PE_CPU dispatches";
  EXPECT_EQ(w.stall_ps, 0u) << "the queue never fills";
  EXPECT_EQ(kb::launch_verdict(r.launches.at(0)).text(), "CPU-bound");
}

TEST(ObservabilityStats, VerdictEngineBoundOnLargeCompositeGemm) {
  kb::RunSpec spec;
  spec.launches = {{"big_gemm", [](kb::Tl& tl) { kb::gemm_composite(tl, gemm(512, 512, 2048)); }}};
  const kb::RunResult r = kb::run_isolated(spec);
  ASSERT_TRUE(r.ok) << r.error;
  const kb::WindowStats& w = r.stats.launches.at(0);
  EXPECT_FALSE(w.verdict.cpu_bound) << w.verdict.explanation();
  EXPECT_EQ(w.verdict.text(), "engine-bound (pe_gemm)");
  EXPECT_EQ(w.verdict.busiest_engine, Component::kPeGemm);
  EXPECT_GT(w.verdict.engine_fraction, 0.9);
  EXPECT_LT(w.verdict.cpu_fraction, 0.01);
  EXPECT_EQ(w.commands, w.by_type[kb::command_type_index("CompositeCmd")].commands);
}

// ---- the options leave the model alone ------------------------------------------

TEST(Observability, OptionsLeaveOpLogAndLatenciesByteIdentical) {
  TempDir plain_dir;
  kb::RunSpec plain = mixed_spec();
  plain.keep_records = false;
  plain.oplog_path = plain_dir.file("oplog.csv");
  const kb::RunResult a = kb::run_isolated(plain);
  ASSERT_TRUE(a.ok) << a.error;
  Outputs o;
  const kb::RunResult b = run_with_outputs(mixed_spec(), o);
  const std::string csv = read_file(plain.oplog_path);
  EXPECT_GT(csv.size(), 1000u);
  EXPECT_TRUE(csv == read_file(o.oplog)) << "op logs differ with --trace/--vcd/--stats";
  ASSERT_EQ(a.launches.size(), b.launches.size());
  for (size_t i = 0; i < a.launches.size(); ++i) {
    EXPECT_EQ(a.launches[i].start_ps, b.launches[i].start_ps);
    EXPECT_EQ(a.launches[i].latency_ps(), b.launches[i].latency_ps());
    EXPECT_EQ(a.launches[i].dispatch_ps, b.launches[i].dispatch_ps);
    EXPECT_EQ(a.launches[i].stall_ps, b.launches[i].stall_ps);
  }
  EXPECT_EQ(a.end_ps, b.end_ps) << "the VCD's extra 1 ps step is not reported";
  EXPECT_EQ(kb::to_json(a.stats), kb::to_json(b.stats));
  EXPECT_TRUE(a.records.empty()) << "records reach the caller only with keep_records";
}

// ---- CLI -----------------------------------------------------------------------

using kb::test::CliResult;
CliResult run_cli(const std::vector<std::string>& args) { return kb::test::run_program(KERNBENCH_BIN, args); }

// Runs KERNBENCH_BIN with stdin/stdout/stderr on a pseudo-terminal; returns
// everything it wrote.
CliResult run_cli_on_terminal(const std::vector<std::string>& args) {
  std::vector<std::string> argv_s = {KERNBENCH_BIN};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  int master = -1;
  const pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
  if (pid < 0) throw std::runtime_error("forkpty failed");
  if (pid == 0) {
    execv(argv[0], argv.data());
    _exit(127);
  }
  CliResult r;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(master, buf, sizeof buf);
    if (n > 0) r.out.append(buf, size_t(n));
    else if (n < 0 && errno == EINTR) continue;
    else break;  // EIO once the child has closed the terminal
  }
  close(master);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw std::runtime_error("waitpid failed");
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

void expect_outputs_valid(const Outputs& o) {
  nlohmann::json trace, stats;
  ASSERT_NO_THROW(trace = nlohmann::json::parse(read_file(o.trace)));
  ASSERT_NO_THROW(stats = nlohmann::json::parse(read_file(o.stats)));
  EXPECT_GT(trace["traceEvents"].size(), 10u);
  EXPECT_TRUE(stats["launches"].is_array());
  Vcd v;
  ASSERT_NO_THROW(v = parse_vcd(read_file(o.vcd)));
  EXPECT_EQ(v.widths.size(), 7u);
}

TEST(ObservabilityCli, RunWritesTraceVcdStatsAndSummary) {
  Outputs o;
  const CliResult r = run_cli({"run", "gemm-composite", "--trace", o.trace, "--vcd", o.vcd, "--stats",
                               o.stats});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, HasSubstr("trace written to " + o.trace));
  EXPECT_THAT(r.out, HasSubstr("VCD written to " + o.vcd));
  EXPECT_THAT(r.out, HasSubstr("statistics written to " + o.stats));
  EXPECT_THAT(r.out, HasSubstr("engine-bound (pe_gemm)"));
  EXPECT_THAT(r.out, HasSubstr("CompositeCmd 1"));
  expect_outputs_valid(o);
  const nlohmann::json stats = nlohmann::json::parse(read_file(o.stats));
  EXPECT_EQ(stats["launches"][0]["verdict"]["bound"], "engine-bound (pe_gemm)");
}

TEST(ObservabilityCli, ReplayWritesTraceVcdStats) {
  Outputs o;
  const std::string stream = o.dir.file("stream.txt");
  const CliResult rec = run_cli({"run", "gemm-tiled-single-op", "--record", stream});
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  const CliResult r =
      run_cli({"replay", stream, "--trace", o.trace, "--vcd", o.vcd, "--stats", o.stats});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("trace written to"));
  expect_outputs_valid(o);
}

TEST(ObservabilityCli, HelpDocumentsTheOptions) {
  for (const char* sub : {"run", "replay"}) {
    const CliResult r = run_cli({sub, "--help"});
    EXPECT_EQ(r.exit_code, 0);
    for (const char* opt : {"--trace", "--vcd", "--stats"}) EXPECT_THAT(r.out, HasSubstr(opt)) << sub;
  }
}

TEST(ObservabilityCli, UnwritableOutputFailsTheRun) {
  const CliResult r = run_cli({"run", "gemm-composite", "--trace", "/nonexistent-dir/t.json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("cannot write trace '/nonexistent-dir/t.json': No such file or directory"));
  EXPECT_EQ(r.out, "");
}

// A sweep shows its progress on a terminal (points done, elapsed,
// remaining) and keeps piped output clean.
TEST(ObservabilityCli, SweepProgressOnTerminalOnly) {
  const std::vector<std::string> args = {"sweep", "gemm-composite", "--param", "k=64,128,192", "-j", "1"};
  const CliResult piped = run_cli(args);
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_EQ(piped.err, "") << "no progress on a pipe";
  EXPECT_THAT(piped.out, Not(HasSubstr("\r")));
  EXPECT_THAT(piped.out, Not(HasSubstr("elapsed")));

  const CliResult tty = run_cli_on_terminal(args);
  ASSERT_EQ(tty.exit_code, 0) << tty.out;
  for (const char* s : {"[0/3]", "[1/3]", "[2/3]", "[3/3]", "elapsed", "remaining"})
    EXPECT_THAT(tty.out, HasSubstr(s));
  EXPECT_THAT(tty.out, HasSubstr("\r")) << "progress redraws one line";
}

}  // namespace
