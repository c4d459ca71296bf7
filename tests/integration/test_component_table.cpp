// The component table (models/trace/component_table.h) is the only list of
// the PE's components and engines: the table itself, and
// every output of one run (op log, statistics, Chrome trace, VCD, report
// JSON, bench figures) naming exactly the table's components.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/gemm/gemm_composite.h"
#include "models/trace/chrome_trace.h"
#include "models/trace/component_table.h"
#include "tb/benches/bench_registry.h"
#include "tb/run/report.h"
#include "tb/run/runner.h"
#include "tests/test_files.h"

namespace kb {
namespace {

using test::read_file;
using test::TempDir;

// Trace thread ids come from the table: always-listed components 1, 2, ...
// in table order, then the launches' track, then the optional ones; every
// tid once. A single PE's tids are the documented ones (docs/observability.md).
TEST(ComponentTable, TraceThreadIdsFollowTheTable) {
  std::set<int> tids{kLaunchTid};
  int expected = 1;
  for (const ComponentInfo& c : kComponents) {
    if (c.optional) continue;
    EXPECT_EQ(trace_tid(c.component), expected++) << c.name;
    tids.insert(trace_tid(c.component));
  }
  EXPECT_EQ(kLaunchTid, expected++);
  for (const ComponentInfo& c : kComponents) {
    if (!c.optional) continue;
    EXPECT_EQ(trace_tid(c.component), expected++) << c.name;
    tids.insert(trace_tid(c.component));
  }
  EXPECT_EQ(kNumTraceTids, expected);
  EXPECT_EQ(tids.size(), size_t(kNumComponents) + 1);
  EXPECT_EQ(trace_tid(Component::kPeCpu), 1);
  EXPECT_EQ(trace_tid(Component::kPeTcm), 6);
  EXPECT_EQ(kLaunchTid, 7);
  EXPECT_EQ(trace_tid(Component::kPeIpc), 8);
}

// Each record kind belongs to the component that makes it and shares its
// optional flag; the names are the op log's.
TEST(ComponentTable, RecordKindsNameTheirComponent) {
  EXPECT_STREQ(to_string(RecordKind::kDispatch), "DISPATCH");
  EXPECT_STREQ(to_string(RecordKind::kRecv), "RECV");
  EXPECT_EQ(kRecordKinds[int(RecordKind::kFetch)].component, Component::kPeTcm);
  EXPECT_EQ(kRecordKinds[int(RecordKind::kCopy)].component, Component::kPeDma);
  for (const RecordKindInfo& k : kRecordKinds) {
    EXPECT_EQ(is_optional(k.kind), k.kind == RecordKind::kSend || k.kind == RecordKind::kRecv) << k.name;
    EXPECT_TRUE(kComponents[int(k.component)].busy) << k.name;
  }
}

// The names docs/observability.md documents, written out here, not taken from the table.
TEST(ComponentTable, NamesAndEnginesAreTheDocumentedOnes) {
  EXPECT_STREQ(to_string(Component::kPeCpu), "pe_cpu");
  EXPECT_STREQ(to_string(Component::kPeScheduler), "pe_scheduler");
  EXPECT_STREQ(to_string(Component::kPeDma), "pe_dma");
  EXPECT_STREQ(to_string(Component::kPeGemm), "pe_gemm");
  EXPECT_STREQ(to_string(Component::kPeMath), "pe_math");
  EXPECT_STREQ(to_string(Component::kPeTcm), "pe_tcm");
  EXPECT_EQ(engine_component(Engine::kDma), Component::kPeDma);
  EXPECT_EQ(engine_component(Engine::kGemm), Component::kPeGemm);
  EXPECT_EQ(engine_component(Engine::kMath), Component::kPeMath);
  EXPECT_EQ(engine_component(Engine::kTcm), Component::kPeTcm);
  EXPECT_FALSE(is_engine(Component::kPeCpu));
  EXPECT_FALSE(is_engine(Component::kPeScheduler));
  EXPECT_TRUE(is_engine(Component::kPeTcm));
}

TEST(ComponentTable, NamesAndPortsAreUnique) {
  std::set<std::string> names, ports;
  for (const ComponentInfo& c : kComponents) EXPECT_TRUE(names.insert(c.name).second) << c.name;
  for (const EngineInfo& e : kEngines) EXPECT_TRUE(ports.insert(e.port).second) << e.port;
}

// The table's components with busy time, in table order.
std::vector<std::string> busy_names() {
  std::vector<std::string> v;
  // Optional components (PE_IPC) appear only where they ran a stage: not
  // in these single-PE runs.
  for (const ComponentInfo& c : kComponents)
    if (c.busy && !c.optional) v.push_back(c.name);
  return v;
}

std::vector<std::string> keys(const nlohmann::json& j) {
  std::vector<std::string> v;
  for (const auto& [k, value] : j.items()) v.push_back(k);
  return v;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(ComponentTable, EveryOutputNamesExactlyTheTablesComponents) {
  TempDir dir;
  RunSpec spec;
  GemmShape s;
  s.m = s.n = 128;
  s.k = 256;
  spec.launches = {{"gemm", [s](Tl& tl) { gemm_composite(tl, s); }},
                   {"math", [](Tl& tl) {
                      const Tensor x = tl.hbm("x", 64, 64, Dtype::kFp32);
                      const Tensor a = tl.tcm("a", 64, 64, Dtype::kFp32);
                      tl.host_random(x, 1);
                      tl.load(a, x);
                      tl.exp(a, a);
                      tl.store(x, a);
                    }}};
  spec.keep_records = true;
  spec.trace_path = dir.file("trace.json");
  spec.vcd_path = dir.file("waves.vcd");
  spec.stats_path = dir.file("stats.json");
  const RunResult r = run_isolated(spec);
  ASSERT_TRUE(r.ok) << r.error;

  // Op log: every engine ran here (the GEMM composite uses PE_DMA, PE_TCM
  // and PE_GEMM; the second kernel PE_MATH).
  std::set<Component> seen;
  for (const OpRecord& rec : r.records) seen.insert(rec.component);
  for (const EngineInfo& e : kEngines) EXPECT_EQ(seen.count(e.component) > 0, !is_optional(e.engine)) << to_string(e.component);

  // Statistics JSON: one entry per component with busy time.
  const nlohmann::json stats = nlohmann::json::parse(read_file(spec.stats_path));
  EXPECT_EQ(keys(stats.at("run").at("components")), sorted(busy_names()));
  EXPECT_NE(stats.at("verdict_rule").get<std::string>().find("(pe_dma, pe_gemm, pe_math, pe_tcm)"),
            std::string::npos);

  // Chrome trace: one named thread track per busy component (tid = index
  // + 1), and the launches track on a tid of its own.
  const nlohmann::json trace = nlohmann::json::parse(read_file(spec.trace_path));
  std::vector<std::string> tracks;
  std::set<int> tids;
  for (const nlohmann::json& e : trace.at("traceEvents")) {
    if (e.at("ph") != "M" || e.at("name") != "thread_name") continue;
    const std::string name = e.at("args").at("name");
    const int tid = e.at("tid");
    EXPECT_TRUE(tids.insert(tid).second) << "tid " << tid << " used twice";
    if (name == "launches") continue;
    tracks.push_back(name);
    bool found = false;
    for (const ComponentInfo& c : kComponents) {
      if (name != c.name) continue;
      found = true;
      EXPECT_EQ(tid, trace_tid(c.component)) << name;
    }
    EXPECT_TRUE(found) << name;
  }
  EXPECT_EQ(sorted(tracks), sorted(busy_names()));

  // VCD: PE_SCHEDULER's scope has the occupancy and one busy_<port> per engine.
  std::istringstream vcd(read_file(spec.vcd_path));
  std::vector<std::string> scope, sched_vars;
  for (std::string line; std::getline(vcd, line);) {
    std::istringstream w(line);
    std::string tok, kind, width, id, name;
    w >> tok;
    if (tok == "$scope") {
      w >> kind >> name;
      scope.push_back(name);
    } else if (tok == "$upscope") {
      scope.pop_back();
    } else if (tok == "$var" && !scope.empty() && scope.back() == "pe_scheduler") {
      w >> kind >> width >> id >> name;
      sched_vars.push_back(name);
    } else if (tok == "$enddefinitions") {
      break;
    }
  }
  std::vector<std::string> expected_vars = {"occupancy"};
  for (const EngineInfo& e : kEngines)
    if (!is_optional(e.engine)) expected_vars.push_back(std::string("busy_") + e.port);
  EXPECT_EQ(sched_vars, expected_vars);

  // Report JSON and bench figures: one entry per busy component.
  const PeConfig cfg;
  EXPECT_EQ(keys(run_summary_json("t", cfg, r).at("components")), sorted(busy_names()));
  EXPECT_EQ(keys(launch_figures(r.launches.at(0), cfg).at("utilisation")), sorted(busy_names()));
}

}  // namespace
}  // namespace kb
