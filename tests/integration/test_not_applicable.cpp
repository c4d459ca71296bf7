// Figures with a zero denominator print as n/a (JSON null, an empty sweep
// cell), never inf, NaN or a 0.0% that reads as a measurement
// (docs/observability.md, The verdict): the verdict and fractions of an
// empty span or of one where nothing was busy, the gqa-decode opt3 / opt2
// ratio when dispatch is free, and a data check whose output holds a NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/trace/stats.h"
#include "tb/benches/pe_bench_util.h"
#include "tb/benches/reference.h"
#include "tests/test_files.h"

namespace {

using kb::test::TempDir;

kb::WindowStats window(uint64_t span_ps, uint64_t cpu_busy_ps, uint64_t gemm_busy_ps) {
  kb::WindowStats w;
  w.name = "k";
  w.start_ps = 1000;
  w.end_ps = 1000 + span_ps;
  w.components[int(kb::Component::kPeCpu)].busy_ps = cpu_busy_ps;
  w.components[int(kb::Component::kPeGemm)].busy_ps = gemm_busy_ps;
  uint64_t busy[kb::kNumComponents];
  for (int c = 0; c < kb::kNumComponents; ++c) busy[c] = w.components[c].busy_ps;
  w.verdict = kb::make_verdict(busy, w.span_ps());
  return w;
}

TEST(NotApplicable, EmptySpanHasNoVerdictAndNullFractions) {
  const kb::WindowStats w = window(0, 0, 0);
  EXPECT_FALSE(w.verdict.applicable());
  EXPECT_EQ(w.verdict.text(), "n/a");
  EXPECT_EQ(w.verdict.explanation(), "the span is 0: nothing ran");
  const nlohmann::json j = kb::to_json(w);
  for (const char* key : {"bound", "cpu_bound", "cpu_busy_fraction", "busiest_engine", "busiest_engine_fraction"})
    EXPECT_TRUE(j.at("verdict").at(key).is_null()) << key << ": " << j.at("verdict").dump();
  EXPECT_TRUE(j.at("pe_cpu").at("stall_fraction").is_null());
  EXPECT_TRUE(j.at("pe_cpu").at("exposed_dispatch_fraction").is_null());
  EXPECT_TRUE(j.at("engines_idle_fraction").is_null());
  EXPECT_TRUE(j.at("queue").at("full_fraction").is_null());
  EXPECT_TRUE(j.at("queue").at("occupancy_mean").is_null());
  EXPECT_TRUE(j.at("components").at("pe_cpu").at("utilisation").is_null());
  // What the JSON says reads back to the same window.
  const kb::WindowStats back = kb::window_from_json(j);
  EXPECT_EQ(back.verdict.text(), "n/a");
  EXPECT_EQ(back.components[int(kb::Component::kPeCpu)].utilisation, 0.0);
  EXPECT_EQ(kb::percent_of(5, 0), "n/a");
  EXPECT_EQ(kb::percent_of(1, 8), "12.5%");
}

TEST(NotApplicable, NothingBusyOverASpanHasNoVerdict) {
  const kb::WindowStats w = window(5000, 0, 0);
  EXPECT_FALSE(w.verdict.applicable());
  EXPECT_EQ(w.verdict.text(), "n/a");
  EXPECT_EQ(w.verdict.explanation(), "neither PE_CPU nor an engine was busy over the span");
  const nlohmann::json j = kb::to_json(w);
  EXPECT_TRUE(j.at("verdict").at("bound").is_null());
  // The span is not empty: its fractions are real zeros and ones.
  EXPECT_EQ(j.at("engines_idle_fraction"), 0.0);
  EXPECT_EQ(j.at("components").at("pe_cpu").at("utilisation"), 0.0);
}

TEST(NotApplicable, NoBusyEngineNamesNone) {
  const kb::WindowStats w = window(4000, 1000, 0);
  ASSERT_TRUE(w.verdict.applicable());
  EXPECT_FALSE(w.verdict.engine_busy);
  EXPECT_EQ(w.verdict.text(), "CPU-bound");
  EXPECT_EQ(w.verdict.explanation(), "PE_CPU busy 25.0% of the span, busiest engine none");
  const nlohmann::json j = kb::to_json(w);
  EXPECT_TRUE(j.at("verdict").at("busiest_engine").is_null());
  EXPECT_EQ(j.at("verdict").at("cpu_busy_fraction"), 0.25);

  const kb::WindowStats g = window(4000, 1000, 3000);
  EXPECT_EQ(g.verdict.text(), "engine-bound (pe_gemm)");
  EXPECT_EQ(kb::to_json(g).at("verdict").at("busiest_engine"), "pe_gemm");
}

TEST(NotApplicable, RatioOverZeroIsNullAndNa) {
  using namespace kb::pe_bench;
  EXPECT_TRUE(std::isnan(ratio(1.0, 0.0)));
  EXPECT_TRUE(std::isnan(ratio(0.0, 0.0)));
  EXPECT_TRUE(std::isnan(ratio(std::nan(""), 2.0)));
  EXPECT_EQ(ratio(3.0, 2.0), 1.5);
  EXPECT_TRUE(ratio_json(ratio(1.0, 0.0)).is_null());
  EXPECT_TRUE(ratio_json(std::numeric_limits<double>::infinity()).is_null());
  EXPECT_EQ(ratio_json(1.5), 1.5);
  EXPECT_EQ(ratio_text("%.3fx", ratio(1.0, 0.0)), "n/a");
  EXPECT_EQ(ratio_text("%.3fx", 1.5), "1.500x");
}

TEST(NotApplicable, DataCheckCountsANanOutputAsAnInfiniteError) {
  const std::vector<double> ref = {1.0, 2.0, 3.0};
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    const kb::ErrorStats e = kb::compare({1.0f, bad, 3.0f}, ref);
    EXPECT_TRUE(std::isinf(e.max_abs)) << bad;
    EXPECT_TRUE(std::isinf(e.max_rel)) << bad;
    EXPECT_FALSE(e.ok()) << bad;
  }
  // A NaN after a large finite error is still infinite, whatever the order.
  EXPECT_FALSE(kb::compare({std::numeric_limits<float>::quiet_NaN(), 100.0f, 3.0f}, ref).ok());
  EXPECT_TRUE(kb::compare({1.0f, 2.0f, 3.0f}, ref).ok());
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

const std::vector<std::string> kFreeDispatch = {
    "--set", "pe.attrs.pe_cost_model.fixed_per_cmd_cycles=0", "--set",
    "pe.attrs.pe_cost_model.fixed_per_single_op_cmd_cycles=0", "--set",
    "pe.attrs.pe_cost_model.byte_cycles_recip=0"};

TEST(NotApplicable, GqaDecodeRatioWithFreeDispatchIsNa) {
  TempDir dir;
  std::vector<std::string> args = {"run", "gqa-decode", "--param", "context=256", "--json", dir.file("s.json")};
  args.insert(args.end(), kFreeDispatch.begin(), kFreeDispatch.end());
  const kb::test::CliResult r = kb::test::run_program(KERNBENCH_BIN, args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("opt3 / opt2 per-tile dispatch: n/a"), std::string::npos) << r.out;
  for (const char* bad : {"inf", "nan", "-nan"})
    EXPECT_EQ(r.out.find(std::string(bad) + "x"), std::string::npos) << r.out;
  const nlohmann::json j = nlohmann::json::parse(kb::test::read_file(dir.file("s.json")));
  EXPECT_TRUE(j.at("figures").at("tile_dispatch_ratio_opt3_over_opt2").is_null()) << j.at("figures").dump();

  // In a sweep the cell is empty.
  std::vector<std::string> sweep = {"sweep", "gqa-decode", "--param", "context=256,512", "--csv", dir.file("s.csv")};
  sweep.insert(sweep.end(), kFreeDispatch.begin(), kFreeDispatch.end());
  const kb::test::CliResult s = kb::test::run_program(KERNBENCH_BIN, sweep);
  ASSERT_EQ(s.exit_code, 0) << s.err;
  std::ifstream csv(dir.file("s.csv"));
  std::string header, row;
  ASSERT_TRUE(std::getline(csv, header));
  size_t column = 0, at = 0;
  const std::string name = "tile_dispatch_ratio_opt3_over_opt2";
  const size_t pos = header.find(name);
  ASSERT_NE(pos, std::string::npos) << header;
  for (; at < pos; ++at) column += header[at] == ',';
  while (std::getline(csv, row)) {
    std::vector<std::string> fields(1);
    for (char c : row) {
      if (c == ',') fields.emplace_back();
      else fields.back().push_back(c);
    }
    ASSERT_GT(fields.size(), column) << row;
    EXPECT_EQ(fields[column], "") << row;
  }
}

TEST(NotApplicable, EmptyKernelReportsNaNotCpuBound) {
  TempDir dir;
  const std::string stream = dir.file("empty.stream");
  kb::test::write_file(stream, "# kernbench command stream v1\nkernel empty\n");
  const kb::test::CliResult r =
      kb::test::run_program(KERNBENCH_BIN, {"replay", stream, "--stats", dir.file("stats.json")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Only the table's heading states the rule; no window is called CPU-bound.
  EXPECT_EQ(count_of(r.out, "CPU-bound"), 1u) << r.out;
  EXPECT_NE(r.out.find("kernel empty: n/a -- the span is 0: nothing ran"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("0.0%"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("n/a"), std::string::npos) << r.out;
  const nlohmann::json j = nlohmann::json::parse(kb::test::read_file(dir.file("stats.json")));
  const nlohmann::json& launch = j.at("launches").at(0);
  EXPECT_EQ(launch.at("span_ps"), 0u);
  EXPECT_TRUE(launch.at("verdict").at("bound").is_null()) << launch.dump();
  EXPECT_TRUE(j.at("run").at("verdict").at("bound").is_null());
}

}  // namespace
