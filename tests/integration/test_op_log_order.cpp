// The op log's order of same-time records is canonical
// (models/trace/op_log.h): records ending at the same ps come in the order of
// (end_ps, cmd_id, component, tile, kind, start_ps), then the other columns,
// whatever order the SystemC kernel ran the processes that made them, and
// every consumer (kept records, CSV, Chrome trace) sees that order.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <tuple>

#include "models/trace/chrome_trace.h"
#include "models/trace/op_log.h"
#include "tb/benches/bench_registry.h"
#include "tb/run/runner.h"
#include "tests/test_files.h"

namespace kb {
namespace {

using test::read_file;
using test::TempDir;

OpRecord rec(Component c, RecordKind k, uint64_t cmd_id, uint64_t start_ps, uint64_t end_ps,
             int64_t tile = -1, uint64_t bytes = 0) {
  OpRecord r;
  r.component = c;
  r.kind = k;
  r.cmd_id = cmd_id;
  r.cmd_type = cmd_id == 0 ? "CpuOverheadCmd" : "CompositeCmd";
  r.tile = tile;
  r.start_ps = start_ps;
  r.end_ps = end_ps;
  r.bytes = bytes;
  return r;
}

// What each record is, for messages and comparison: "component kind #id
// tile start-end bytes".
std::string label(const OpRecord& r) {
  return std::string(to_string(r.component)) + " " + to_string(r.kind) + " #" + std::to_string(r.cmd_id) +
         " t" + std::to_string(r.tile) + " " + std::to_string(r.start_ps) + "-" + std::to_string(r.end_ps) +
         " b" + std::to_string(r.bytes);
}

std::vector<std::string> labels(const std::vector<OpRecord>& v) {
  std::vector<std::string> out;
  for (const OpRecord& r : v) out.push_back(label(r));
  return out;
}

// Records of two instants, each given in a kernel-dependent order.
std::vector<OpRecord> feed(const std::vector<OpRecord>& in) {
  OpLog log;
  log.configure(true, "");
  for (const OpRecord& r : in) log.add(r);
  log.flush();
  return log.records();
}

TEST(OpLogOrder, SameTimeRecordsComeInTheCanonicalOrder) {
  using C = Component;
  using K = RecordKind;
  const OpRecord cycles = rec(C::kPeCpu, K::kCpuCycles, 0, 900, 1000);
  const OpRecord dispatch7 = rec(C::kPeCpu, K::kDispatch, 7, 950, 1000);
  const OpRecord stall6 = rec(C::kPeCpu, K::kStall, 6, 400, 1000);
  const OpRecord gemm6 = rec(C::kPeGemm, K::kGemm, 6, 500, 1000, 3);
  const OpRecord fetch6_t2 = rec(C::kPeTcm, K::kFetch, 6, 800, 1000, 2, 64);
  const OpRecord fetch6_t3a = rec(C::kPeTcm, K::kFetch, 6, 1000, 1000, 3, 32);  // zero-length
  const OpRecord fetch6_t3b = rec(C::kPeTcm, K::kFetch, 6, 1000, 1000, 3, 16);
  const OpRecord dma5 = rec(C::kPeDma, K::kDmaRead, 5, 700, 1000);
  const OpRecord later = rec(C::kPeMath, K::kMath, 1, 1000, 1200);
  // The canonical order, by hand: cmd_id 0 first, then by command; within
  // command 6 PE_CPU (STALL) before the engines, by component (gemm before
  // tcm), tile, and the bytes of two otherwise equal zero-length FETCHes.
  const std::vector<std::string> expected =
      labels({cycles, dma5, stall6, gemm6, fetch6_t2, fetch6_t3b, fetch6_t3a, dispatch7, later});
  EXPECT_EQ(labels(feed({gemm6, dispatch7, fetch6_t3a, stall6, cycles, fetch6_t2, dma5, fetch6_t3b, later})),
            expected);
  EXPECT_EQ(labels(feed({fetch6_t3b, fetch6_t3a, fetch6_t2, gemm6, stall6, dma5, dispatch7, cycles, later})),
            expected);
}

TEST(OpLogOrder, AllConsumersSeeTheCanonicalOrderAndTheLastInstantOnClose) {
  TempDir dir;
  const std::string csv = dir.file("oplog.csv");
  std::ostringstream trace_text;
  {
    ChromeTrace trace(trace_text);
    OpLog log;
    log.configure(true, csv);
    log.set_trace(&trace.add_process("pe"));
    // Command 2's DISPATCH, then its stage and command 3's ending at once,
    // command 2 completing in between (its last record was added before).
    log.add(rec(Component::kPeCpu, RecordKind::kDispatch, 2, 0, 10));
    log.add(rec(Component::kPeTcm, RecordKind::kCopy, 3, 10, 20));
    log.add(rec(Component::kPeDma, RecordKind::kDmaRead, 2, 10, 20));
    log.command_done(2);
    EXPECT_EQ(log.records().size(), 1u);  // the instant at 20 ps is held
    log.close();
    trace.finish();
    ASSERT_EQ(log.records().size(), 3u);
    EXPECT_EQ(log.records()[1].cmd_id, 2u);
    EXPECT_EQ(log.records()[2].cmd_id, 3u);
    std::string rows = std::string(op_log_csv_header()) + "\n";
    for (const OpRecord& r : log.records()) rows += op_log_csv_row(r) + "\n";
    EXPECT_EQ(read_file(csv), rows);
  }
  // The stage of command 2 is linked to its DISPATCH although the command
  // completed before the stage was passed on: completion follows the
  // instant's records.
  const nlohmann::json j = nlohmann::json::parse(trace_text.str());
  int flow_starts = 0;
  std::vector<uint64_t> slice_ids;
  for (const auto& e : j.at("traceEvents")) {
    if (e.at("ph") == "s") ++flow_starts;
    if (e.at("ph") == "X") slice_ids.push_back(e.at("args").at("cmd_id"));
  }
  EXPECT_EQ(flow_starts, 1);
  EXPECT_EQ(slice_ids, (std::vector<uint64_t>{2, 2, 3}));
}

TEST(OpLogOrder, ARecordEndingEarlierThanOneAddedIsAModellingError) {
  OpLog log;
  log.configure(true, "");
  log.add(rec(Component::kPeDma, RecordKind::kDmaRead, 4, 0, 500));
  log.flush();
  try {
    log.add(rec(Component::kPeGemm, RecordKind::kGemm, 3, 100, 499));
    ADD_FAILURE() << "expected std::logic_error";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "op log: a pe_gemm GEMM record of command #3 ends at 499 ps, after a record "
                           "ending at 500 ps was added (records are added as they end)");
  }
  EXPECT_EQ(log.count(), 1u);
}

// PE_CPU knows when a DISPATCH record ends when it sends the write (at 100
// ps, ending at 300 ps): added ahead, the log takes it when time reaches
// 300 ps, in canonical order among the records of that instant (by command
// there); a record
// added ahead while one is pending means the first has ended. Cancelled,
// it never appears.
TEST(OpLogOrder, ARecordAddedAheadTakesItsPlaceWhenTimeReachesIt) {
  OpLog log;
  log.configure(true, "");
  log.add(rec(Component::kPeMath, RecordKind::kMath, 1, 0, 100));
  log.add_ahead(rec(Component::kPeCpu, RecordKind::kDispatch, 4, 100, 300));
  log.add(rec(Component::kPeDma, RecordKind::kDmaRead, 1, 100, 250));
  log.add(rec(Component::kPeGemm, RecordKind::kGemm, 2, 100, 300));
  log.add(rec(Component::kPeGemm, RecordKind::kGemm, 3, 100, 700));
  log.add_ahead(rec(Component::kPeCpu, RecordKind::kDispatch, 5, 700, 900));
  log.add_ahead(rec(Component::kPeCpu, RecordKind::kDispatch, 6, 900, 1000));  // #5 has ended
  log.add_ahead(rec(Component::kPeCpu, RecordKind::kDispatch, 7, 1000, 1200));
  log.cancel_ahead();  // #7 never ends
  log.flush();
  std::vector<std::pair<uint64_t, uint64_t>> got;  // (end, cmd)
  for (const OpRecord& r : log.records()) got.push_back({r.end_ps, r.cmd_id});
  EXPECT_EQ(got, (std::vector<std::pair<uint64_t, uint64_t>>{
                     {100, 1}, {250, 1}, {300, 2}, {300, 4}, {700, 3}, {900, 5}, {1000, 6}}));
  // A record added ahead that the run ends before: flush() takes it (a
  // write never taken still ended its dispatch).
  OpLog stuck;
  stuck.configure(true, "");
  stuck.add_ahead(rec(Component::kPeCpu, RecordKind::kDispatch, 1, 0, 90));
  stuck.flush();
  ASSERT_EQ(stuck.records().size(), 1u);
  EXPECT_EQ(stuck.records()[0].end_ps, 90u);
}

// ---- a real run ---------------------------------------------------------------

// The key, from the CSV columns (independent of canonical_less).
using Key = std::tuple<uint64_t, uint64_t, int, int64_t, int, uint64_t>;
Key key_of(const OpRecord& r) {
  return {r.end_ps, r.cmd_id, int(r.component), r.tile, int(r.kind), r.start_ps};
}

TEST(OpLogOrder, GqaDecodeOpt2AndOpt3AreInCanonicalOrderInEveryOutput) {
  register_builtin_benches();
  const Bench& b = BenchRegistry::instance().get("gqa-decode");
  TempDir dir;
  RunSpec spec;
  spec.launches = b.launches(BenchRegistry::instance().params(b, {"context=2048"}), spec.config);
  spec.keep_records = true;
  spec.oplog_path = dir.file("oplog.csv");
  spec.trace_path = dir.file("trace.json");
  const RunResult r = run_isolated(spec);
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.launches.size(), 2u);
  ASSERT_GT(r.records.size(), 1000u);

  // Sorted by the key; records equal in it are identical rows.
  size_t shared = 0, mixed = 0;  // records sharing an end time; such instants with several components
  std::map<std::string, size_t> same_end_by_launch;
  for (size_t i = 1; i < r.records.size(); ++i) {
    const OpRecord &a = r.records[i - 1], &c = r.records[i];
    ASSERT_LE(key_of(a), key_of(c)) << "record " << i << ": " << label(a) << " then " << label(c);
    if (key_of(a) == key_of(c)) {
      ASSERT_EQ(op_log_csv_row(a), op_log_csv_row(c)) << "record " << i;
    }
    if (a.end_ps == c.end_ps) {
      ++shared;
      if (a.component != c.component) ++mixed;
      for (const LaunchResult& l : r.launches)
        if (c.end_ps > l.start_ps && c.end_ps <= l.end_ps) ++same_end_by_launch[l.kernel];
    }
  }
  // The check is not empty: both variants have same-time records from
  // different components (PE_CPU writing while engines complete).
  EXPECT_GT(mixed, 100u);
  EXPECT_GT(same_end_by_launch["opt2"], 100u);
  EXPECT_GT(same_end_by_launch["opt3"], 100u);
  std::printf("[ info ] %zu of %zu records share their end time with the one before (%zu across components)\n",
              shared, r.records.size(), mixed);

  // The streamed CSV and the trace's slices are in the same order.
  std::string rows = std::string(op_log_csv_header()) + "\n";
  for (const OpRecord& rec_ : r.records) rows += op_log_csv_row(rec_) + "\n";
  EXPECT_EQ(read_file(spec.oplog_path), rows);
  const nlohmann::json trace = nlohmann::json::parse(read_file(spec.trace_path));
  size_t i = 0;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") != "X" || e.at("tid") == kLaunchTid) continue;
    ASSERT_LT(i, r.records.size());
    const OpRecord& want = r.records[i++];
    ASSERT_EQ(e.at("args").at("cmd_id"), want.cmd_id) << "slice " << i;
    ASSERT_EQ(e.at("args").at("end_ps"), want.end_ps) << "slice " << i;
    ASSERT_EQ(e.at("args").at("kind"), to_string(want.kind)) << "slice " << i;
    ASSERT_EQ(e.at("tid"), trace_tid(want.component)) << "slice " << i;
  }
  EXPECT_EQ(i, r.records.size());
}

}  // namespace
}  // namespace kb
