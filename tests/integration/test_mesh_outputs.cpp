// Mesh-run outputs: the merged op log, the Chrome trace
// (a process per PE plus "links") and the VCD of a 1 x 2 mesh of 2-PE cubes
// running the LRAB all-reduce (kernels/ccl) in timing mode, checked against
// each other and against MeshRunResult's counters. Runs in forked children
// (tb/run/mesh_run.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/ccl/all_reduce.h"
#include "models/config/pe_config.h"
#include "models/tl/tl.h"
#include "models/trace/chrome_trace.h"
#include "models/trace/component_table.h"
#include "tb/run/mesh_run.h"
#include "tests/sim_util.h"
#include "tests/test_files.h"
#include "tests/vcd_reader.h"

namespace kb {
namespace {

using test::read_file;
using test::TempDir;

struct CsvRow {
  std::string component, kind;
  uint64_t start_ps = 0, end_ps = 0, bytes = 0;
};

std::vector<CsvRow> parse_csv(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);  // header
  std::vector<CsvRow> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ls(line);
    for (std::string cell; std::getline(ls, cell, ',');) f.push_back(cell);
    if (f.size() < 9) throw std::runtime_error("op log row with " + std::to_string(f.size()) + " fields: " + line);
    rows.push_back({f[0], f[1], std::stoull(f[6]), std::stoull(f[7]), std::stoull(f[8])});
  }
  return rows;
}

// LRAB over every PE of a 1 x 2 mesh of 2-PE cubes: the root cube is 1,
// so both link directions carry data (reduce c0 -> c1, broadcast c1 -> c0).
struct MeshOutputs {
  TempDir dir;
  MeshRunSpec spec;
  MeshRunResult r;
  std::string csv;
  std::vector<CsvRow> rows;
  explicit MeshOutputs(const std::string& tag = "") {
    spec.config.topology.mesh.h = 1;
    spec.config.topology.mesh.w = 2;
    spec.config.topology.cube.pes = 2;
    spec.kernel_name = "lrab";
    spec.kernel = [](Tl& tl) {
      const Tensor x = tl.hbm("x", 1, 3000, Dtype::kFp32);
      test::init(tl, {x});
      all_reduce_lrab(tl, x, AllReduceOptions{512, 2});  // 6 chunks, 2 in flight
    };
    spec.oplog_path = dir.file("oplog" + tag + ".csv");
    spec.trace_path = dir.file("trace" + tag + ".json");
    spec.vcd_path = dir.file("waves" + tag + ".vcd");
    r = run_mesh_isolated(spec);
    if (!r.ok) throw std::runtime_error("mesh run failed: " + r.error);
    csv = read_file(spec.oplog_path);
    rows = parse_csv(csv);
  }
  // The PE a row belongs to ("cube1.pe1" for "cube1.pe1.pe_ipc"), or "".
  std::string pe_of(const std::string& component) const {
    for (const MeshPeResult& p : r.pes)
      if (component.rfind(p.name + ".", 0) == 0) return p.name;
    return "";
  }
};

TEST(MeshOutputs, OpLogNamesCarryTheHierarchyInTimeOrder) {
  MeshOutputs m;
  ASSERT_EQ(m.r.pes.size(), 4u);
  ASSERT_EQ(m.r.links.size(), 2u);
  std::set<std::string> link_names;
  for (const MeshLinkResult& l : m.r.links) link_names.insert(l.name);
  EXPECT_EQ(link_names, (std::set<std::string>{"link.c0-c1", "link.c1-c0"}));
  EXPECT_EQ(m.csv.substr(0, m.csv.find('\n')), op_log_csv_header());
  ASSERT_FALSE(m.rows.empty());
  std::map<std::string, size_t> per_component;
  uint64_t last_end = 0;
  for (const CsvRow& row : m.rows) {
    const bool link = row.component.rfind("link.", 0) == 0;
    if (link) {
      EXPECT_TRUE(link_names.count(row.component)) << row.component;
      EXPECT_EQ(row.kind, "LINK");
    } else {
      const std::string pe = m.pe_of(row.component);
      ASSERT_NE(pe, "") << row.component << " is under no PE";
      // The rest is one of the PE's components.
      const std::string c = row.component.substr(pe.size() + 1);
      EXPECT_TRUE(std::any_of(std::begin(kComponents), std::end(kComponents),
                              [&](const ComponentInfo& i) { return c == i.name; }))
          << row.component;
      EXPECT_NE(row.kind, "LINK");
    }
    EXPECT_GE(row.end_ps, last_end) << row.component << " ends before the row above it";
    last_end = row.end_ps;
    ++per_component[row.component];
  }
  EXPECT_GT(per_component["cube1.pe1.pe_ipc"], 0u);
  EXPECT_GT(per_component["cube0.pe1.pe_ipc"], 0u);
  EXPECT_GT(per_component["link.c0-c1"], 0u);
  EXPECT_GT(per_component["link.c1-c0"], 0u);
}

TEST(MeshOutputs, TwoRunsGiveTheSameBytes) {
  MeshOutputs a("a"), b("b");
  EXPECT_TRUE(a.csv == b.csv) << "op logs differ";
  EXPECT_TRUE(read_file(a.spec.trace_path) == read_file(b.spec.trace_path)) << "traces differ";
  EXPECT_EQ(a.r.end_ps, b.r.end_ps);
}

// A mesh's trace does not turn the PEs' signals on (its
// occupancy counters come from each PE_SCHEDULER), and look-ahead runs
// across the PEs without them: the trace written alone is the one written
// beside the op log and the VCD, byte for byte.
TEST(MeshOutputs, TraceAloneEqualsTraceBesideAVcd) {
  MeshOutputs m;
  MeshRunSpec alone = m.spec;
  alone.oplog_path.clear();
  alone.vcd_path.clear();
  alone.trace_path = m.dir.file("trace_alone.json");
  const MeshRunResult r = run_mesh_isolated(alone);
  ASSERT_TRUE(r.ok) << r.error;
  const std::string trace = read_file(alone.trace_path);
  EXPECT_NE(trace.find("\"queue_occupancy\""), std::string::npos);
  EXPECT_TRUE(trace == read_file(m.spec.trace_path)) << "the mesh trace depends on whether signals are on";
}

// Each link's rows are its bursts: their bytes, count and durations are its
// counters (ucie_link.h: busy time is the union of the trains, and the
// bursts of one direction never overlap).
TEST(MeshOutputs, LinkRowsAddUpToTheLinkCounters) {
  MeshOutputs m;
  for (const MeshLinkResult& l : m.r.links) {
    SCOPED_TRACE(l.name);
    uint64_t bytes = 0, count = 0, busy = 0, last_end = 0;
    std::vector<std::pair<uint64_t, uint64_t>> spans;
    for (const CsvRow& row : m.rows) {
      if (row.component != l.name) continue;
      bytes += row.bytes;
      ++count;
      busy += row.end_ps - row.start_ps;
      spans.emplace_back(row.start_ps, row.end_ps);
    }
    EXPECT_GT(l.bytes, 0u);
    EXPECT_EQ(bytes, l.bytes);
    EXPECT_EQ(count, l.transactions);
    EXPECT_EQ(busy, l.busy_ps);
    std::sort(spans.begin(), spans.end());
    for (const auto& [s, e] : spans) {
      EXPECT_GE(s, last_end) << "overlapping bursts";
      last_end = e;
    }
  }
}

// Per-PE figures: busy time per component is the sum of its rows'
// durations (stalls excluded, op_log.h), the PEs' commands and dispatch
// time add up to the totals, stages are the non-PE_CPU rows.
TEST(MeshOutputs, PerPeFiguresAddUpToTheTotals) {
  MeshOutputs m;
  uint64_t commands = 0, dispatch = 0, stages = 0;
  uint64_t start = UINT64_MAX, end = 0;
  for (const MeshPeResult& p : m.r.pes) {
    SCOPED_TRACE(p.name);
    EXPECT_TRUE(p.launched);
    EXPECT_EQ(p.launch.error, "");
    EXPECT_GT(p.launch.commands, 0u);
    commands += p.launch.commands;
    dispatch += p.launch.dispatch_ps;
    start = std::min(start, p.launch.start_ps);
    end = std::max(end, p.launch.end_ps);
    uint64_t busy[kNumComponents] = {}, dispatches = 0;
    for (const CsvRow& row : m.rows) {
      if (m.pe_of(row.component) != p.name) continue;
      const std::string c = row.component.substr(p.name.size() + 1);
      for (const ComponentInfo& i : kComponents) {
        if (c != i.name) continue;
        if (row.kind != "STALL") busy[int(i.component)] += row.end_ps - row.start_ps;
        if (i.component != Component::kPeCpu) ++stages;
      }
      if (row.kind == "DISPATCH") ++dispatches;
    }
    for (const ComponentInfo& i : kComponents) {
      EXPECT_EQ(p.busy_ps[int(i.component)], busy[int(i.component)]) << i.name;
    }
    EXPECT_GT(p.busy_ps[int(Component::kPeIpc)], 0u);
    EXPECT_EQ(dispatches, p.launch.commands);
  }
  EXPECT_EQ(commands, m.r.commands);
  EXPECT_EQ(dispatch, m.r.dispatch_ps);
  EXPECT_EQ(stages, m.r.stages);
  EXPECT_EQ(start, m.r.start_ps);
  EXPECT_EQ(end, m.r.end_ps);
}

// The trace: a process per PE (pid = global number + 1, named by its
// hierarchical name) with its op-log rows and launch, then "links" with a
// track per link direction holding exactly that link's op-log rows.
TEST(MeshOutputs, TraceHasAProcessPerPeAndOneForTheLinks) {
  MeshOutputs m;
  const nlohmann::json j = nlohmann::json::parse(read_file(m.spec.trace_path));
  std::map<int, std::string> process_names;
  std::map<int, std::map<int, std::string>> thread_names;
  for (const auto& e : j.at("traceEvents")) {
    if (e.at("ph") != "M") continue;
    if (e.at("name") == "process_name") {
      EXPECT_TRUE(process_names.emplace(e.at("pid").get<int>(), e.at("args").at("name")).second);
    } else if (e.at("name") == "thread_name") {
      thread_names[e.at("pid")][e.at("tid")] = e.at("args").at("name");
    }
  }
  std::map<int, std::string> want_processes;
  for (size_t g = 0; g < m.r.pes.size(); ++g) want_processes[int(g) + 1] = m.r.pes[g].name;
  const int links_pid = int(m.r.pes.size()) + 1;
  want_processes[links_pid] = "links";
  EXPECT_EQ(process_names, want_processes);
  std::map<int, std::string> want_tracks;
  for (size_t i = 0; i < m.r.links.size(); ++i) want_tracks[int(i) + 1] = m.r.links[i].name;
  EXPECT_EQ(thread_names[links_pid], want_tracks);

  // Slices per process, as (track name, start, end, bytes), and per track
  // in file order: parsed ts + dur never passes the next slice's ts.
  using Slice = std::tuple<std::string, uint64_t, uint64_t, uint64_t>;
  std::map<int, std::multiset<Slice>> slices;
  std::map<std::pair<int, int>, double> track_end;
  std::map<int, size_t> launches;
  for (const auto& e : j.at("traceEvents")) {
    ASSERT_TRUE(process_names.count(e.at("pid").get<int>())) << e.dump();
    if (e.at("ph") != "X") continue;
    const int pid = e.at("pid"), tid = e.at("tid");
    const auto& a = e.at("args");
    const double ts = e.at("ts"), dur = e.at("dur");
    auto [it, fresh] = track_end.emplace(std::pair{pid, tid}, ts + dur);
    if (!fresh) {
      EXPECT_GE(ts, it->second) << "overlap once parsed: " << e.dump();
      it->second = ts + dur;
    }
    if (e.at("cat") == "launch") {
      ++launches[pid];
      continue;
    }
    const uint64_t bytes = a.at("bytes");
    if (pid == links_pid) {
      EXPECT_EQ(e.at("cat"), "link");
      EXPECT_EQ(e.at("name"), "LINK " + std::to_string(bytes) + " B");
    }
    slices[pid].emplace(thread_names[pid][tid], a.at("start_ps"), a.at("end_ps"), bytes);
  }
  std::map<int, std::multiset<Slice>> want;
  for (const CsvRow& row : m.rows) {
    if (row.kind == "LINK") {
      want[links_pid].emplace(row.component, row.start_ps, row.end_ps, row.bytes);
      continue;
    }
    const std::string pe = m.pe_of(row.component);
    for (size_t g = 0; g < m.r.pes.size(); ++g) {
      if (m.r.pes[g].name == pe) want[int(g) + 1].emplace(row.component.substr(pe.size() + 1), row.start_ps, row.end_ps, row.bytes);
    }
  }
  ASSERT_EQ(slices.size(), want.size());
  for (const auto& [pid, w] : want) {
    SCOPED_TRACE(process_names[pid]);
    EXPECT_TRUE(slices[pid] == w) << slices[pid].size() << " slices, " << w.size() << " op-log rows";
    EXPECT_EQ(launches.count(pid) ? launches.at(pid) : 0u, pid == links_pid ? 0u : 1u);
  }
}

// The Chrome DevTools trace engine (tests/trace_consumer) places every
// slice of the mesh trace, the links' included. Skipped without node.
TEST(MeshOutputs, TheDevToolsEngineReadsTheMeshTrace) {
  const std::string dir = std::string(KB_SOURCE_DIR) + "/tests/trace_consumer";
  if (std::system("command -v node >/dev/null 2>&1") != 0 ||
      !std::filesystem::exists(dir + "/node_modules/@paulirish/trace_engine/package.json")) {
    GTEST_SKIP() << "node with tests/trace_consumer not installed";
  }
  MeshOutputs m;
  const test::CliResult c =
      test::run_program("/bin/sh", {"-c", "exec node \"$0\" \"$1\"", dir + "/check_trace.mjs", m.spec.trace_path});
  nlohmann::json counts;
  ASSERT_NO_THROW(counts = nlohmann::json::parse(c.out)) << c.err;
  EXPECT_EQ(counts.at("errors"), 0) << c.err;
  EXPECT_EQ(counts.at("mis_nested"), 0) << c.err;
  EXPECT_EQ(counts.at("flows_resolved"), counts.at("flows"));
  EXPECT_EQ(counts.at("slices"), m.rows.size() + m.r.pes.size());  // + one launch per PE
  EXPECT_EQ(c.exit_code, 0) << c.err;
}

// add_track_process without a simulation: pids after the PEs', names
// checked, slices in order, and the ts rule of the PE tracks (a slice
// back to back with the previous one starts where a reader ends it).
TEST(MeshOutputs, TrackProcessNamesPidsAndSlices) {
  std::ostringstream out;
  {
    ChromeTrace t(out);
    t.add_process("cube0.pe0");
    EXPECT_THROW(t.add_track_process("cube0.pe0", {"a"}), std::logic_error);
    EXPECT_THROW(t.add_track_process("", {"a"}), std::logic_error);
    EXPECT_THROW(t.add_track_process("links", {"a", "a"}), std::logic_error);
    EXPECT_THROW(t.add_track_process("links", {""}), std::logic_error);
    TraceTrackProcess& links = t.add_track_process("links", {"link.c0-c1", "link.c1-c0"});
    EXPECT_EQ(links.pid(), 2);
    EXPECT_EQ(links.tracks(), 2u);
    EXPECT_THROW(t.add_process("links"), std::logic_error);
    EXPECT_EQ(t.add_process("cube0.pe1").pid(), 3);
    EXPECT_EQ(t.processes(), 3u);
    links.slice(0, "LINK 1 B", 0, 85000, 1);
    links.slice(0, "LINK 2 B", 85000, 145000, 2);  // 0.085 + 0.06 > 0.145 as doubles
    links.slice(0, "LINK 3 B", 145000, 200000, 3);
    links.slice(1, "LINK 4 B", 10, 10, 4);         // zero length
    EXPECT_THROW(links.slice(0, "x", 199999, 200001, 1), std::logic_error);  // overlaps
    EXPECT_THROW(links.slice(1, "x", 20, 19, 1), std::logic_error);          // reversed
    EXPECT_THROW(links.slice(2, "x", 20, 30, 1), std::logic_error);          // no track 2
    t.finish();
  }
  const nlohmann::json j = nlohmann::json::parse(out.str());
  std::vector<nlohmann::json> track0;
  for (const auto& e : j.at("traceEvents")) {
    if (e.at("ph") == "X" && e.at("pid") == 2 && e.at("tid") == 1) track0.push_back(e);
  }
  ASSERT_EQ(track0.size(), 3u);
  for (size_t i = 1; i < track0.size(); ++i) {
    const double prev_end = track0[i - 1].at("ts").get<double>() + track0[i - 1].at("dur").get<double>();
    EXPECT_GE(track0[i].at("ts").get<double>(), prev_end);
  }
  EXPECT_EQ(track0[2].at("args").at("start_ps"), 145000);
  EXPECT_EQ(track0[2].at("args").at("bytes"), 3);
  EXPECT_EQ(track0[2].at("cat"), "link");
  EXPECT_EQ(track0[2].at("name"), "LINK 3 B");
}

// A link books bursts ahead, each in the first idle gap at or after its
// arrival: booked() holds a slice until time passes its start, so a burst
// booked later into an earlier gap is still written first, in start order.
TEST(MeshOutputs, BookedSlicesAreWrittenInStartOrder) {
  std::ostringstream out;
  {
    ChromeTrace t(out);
    TraceTrackProcess& links = t.add_track_process("links", {"link.c0-c1"});
    links.booked(0, "LINK 3 B", 300, 400, 3, 100);  // booked ahead at 100 ps
    links.booked(0, "LINK 1 B", 100, 150, 1, 100);  // into the gap before it
    links.booked(0, "LINK 2 B", 200, 250, 2, 180);  // writes the one at 100
    EXPECT_THROW(links.booked(1, "x", 0, 1, 1, 0), std::logic_error);  // no track 1
    t.finish();  // writes the two held
  }
  const nlohmann::json j = nlohmann::json::parse(out.str());
  std::vector<uint64_t> starts;
  for (const auto& e : j.at("traceEvents"))
    if (e.at("ph") == "X") starts.push_back(e.at("args").at("start_ps"));
  EXPECT_EQ(starts, (std::vector<uint64_t>{100, 200, 300}));
}

// The 2 x 4 mesh's LRAB books link bursts in gaps: its trace is
// written (it failed with "starts before the previous one ended"), each
// link track in start order without overlap, one slice per burst.
TEST(MeshOutputs, LrabTraceOnTheDefaultMeshHasEveryBurst) {
  TempDir dir;
  MeshRunSpec spec;
  spec.kernel_name = "lrab";
  spec.kernel = [](Tl& tl) {
    const Tensor x = tl.hbm("x", 1, 16384, Dtype::kFp32);
    test::init(tl, {x});
    all_reduce_lrab(tl, x, AllReduceOptions{});
  };
  spec.trace_path = dir.file("t.json");
  const MeshRunResult r = run_mesh_isolated(spec);
  ASSERT_TRUE(r.ok) << r.error;
  const nlohmann::json j = nlohmann::json::parse(read_file(spec.trace_path));
  int links_pid = -1;
  for (const auto& e : j.at("traceEvents"))
    if (e.at("ph") == "M" && e.at("name") == "process_name" && e.at("args").at("name") == "links") links_pid = e.at("pid");
  ASSERT_GE(links_pid, 0);
  std::map<int, std::vector<std::pair<uint64_t, uint64_t>>> tracks;
  for (const auto& e : j.at("traceEvents"))
    if (e.at("ph") == "X" && e.at("pid") == links_pid)
      tracks[e.at("tid")].push_back({e.at("args").at("start_ps"), e.at("args").at("end_ps")});
  uint64_t transactions = 0, slices = 0;
  for (const MeshLinkResult& l : r.links) transactions += l.transactions;
  for (const auto& [tid, t] : tracks) {
    slices += t.size();
    for (size_t i = 1; i < t.size(); ++i) EXPECT_GE(t[i].first, t[i - 1].second) << "track " << tid;
  }
  EXPECT_GT(transactions, 0u);
  EXPECT_EQ(slices, transactions);
}

// The VCD: one scope per PE, each with its busy_ipc, high exactly while
// its PE_IPC records run (they are back to back at most: one engine); the
// trace's occupancy counters are the VCD's occupancy waveforms.
TEST(MeshOutputs, VcdHasAScopePerPeWithBusyIpc) {
  MeshOutputs m;
  const test::Vcd v = test::parse_vcd(read_file(m.spec.vcd_path));
  // A PE's scope is the one holding a pe_cpu scope: exactly the mesh's PEs.
  std::set<std::string> pe_scopes, want;
  const std::string cpu = ".pe_cpu";
  for (const std::string& s : v.scopes) {
    if (s.size() > cpu.size() && s.compare(s.size() - cpu.size(), cpu.size(), cpu) == 0)
      pe_scopes.insert(s.substr(0, s.size() - cpu.size()));
  }
  for (const MeshPeResult& p : m.r.pes) want.insert("SystemC." + p.name);
  EXPECT_EQ(pe_scopes, want);
  for (const MeshPeResult& p : m.r.pes) {
    const std::string scope = "SystemC." + p.name;
    SCOPED_TRACE(scope);
    EXPECT_TRUE(v.scopes.count(scope));
    const std::string ipc = scope + ".pe_scheduler.busy_ipc";
    ASSERT_EQ(v.widths.count(ipc), 1u);
    EXPECT_EQ(v.changes.at(scope + ".pe_cpu.descriptors").back().second, p.launch.commands);
    uint64_t high = 0, since = 0;
    bool on = false;
    for (const auto& [t, value] : v.changes.at(ipc)) {
      if (value && !on) since = t;
      if (!value && on) high += t - since;
      on = value != 0;
    }
    EXPECT_FALSE(on) << "busy_ipc still high at the end";
    EXPECT_EQ(high, p.busy_ps[int(Component::kPeIpc)]);
  }
  // The trace's occupancy counter of each PE is its VCD waveform.
  const nlohmann::json j = nlohmann::json::parse(read_file(m.spec.trace_path));
  std::map<int, std::vector<std::pair<uint64_t, uint64_t>>> counters;
  for (const auto& e : j.at("traceEvents")) {
    if (e.at("ph") != "C") continue;
    counters[e.at("pid")].emplace_back(std::llround(e.at("ts").get<double>() * 1e6),
                                       e.at("args").at("queue_occupancy").get<uint64_t>());
  }
  for (size_t g = 0; g < m.r.pes.size(); ++g) {
    SCOPED_TRACE(m.r.pes[g].name);
    const auto& waveform = v.changes.at("SystemC." + m.r.pes[g].name + ".pe_scheduler.occupancy");
    EXPECT_GT(waveform.size(), 1u);
    EXPECT_EQ(counters[int(g) + 1], waveform);
  }
  EXPECT_EQ(counters.size(), m.r.pes.size());  // none under "links"
}

}  // namespace
}  // namespace kb
