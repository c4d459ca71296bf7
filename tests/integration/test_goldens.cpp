// Every bench at its defaults reproduces its golden figures exactly
// (tests/goldens/<bench>.json). After an intended change, regenerate them
// with `build/kernbench goldens --update` and review the diff; never edit
// a golden by hand.
#include <gtest/gtest.h>

#include "tb/goldens/goldens.h"

namespace kb {
namespace {

class Golden : public ::testing::TestWithParam<std::string> {};

TEST_P(Golden, MatchesFreshRun) {
  const Bench& b = BenchRegistry::instance().get(GetParam());
  const nlohmann::json expected = read_json_file(golden_path(kGoldenDir, b.name));
  const nlohmann::json actual = golden_run(b);
  const std::vector<std::string> diff = golden_diff(expected, actual);
  std::string text;
  for (const std::string& d : diff) text += "\n  " + d;
  EXPECT_TRUE(diff.empty()) << b.name << " differs from " << golden_path(kGoldenDir, b.name) << ":"
                            << text << "\n(intended? run `build/kernbench goldens --update`)";
}

std::vector<std::string> bench_names() {
  register_builtin_benches();
  std::vector<std::string> names;
  for (const Bench& b : BenchRegistry::instance().all()) names.push_back(b.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(AllBenches, Golden, ::testing::ValuesIn(bench_names()),
                         // Not `info`: the macro's own function has a parameter of that name.
                         [](const auto& param_info) {
                           std::string n = param_info.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

TEST(GoldenDiff, ReportsChangedMissingAndNewFigures) {
  const nlohmann::json a = {{"x", {{"latency_ns", 1.0}, {"gone", 2}}}};
  const nlohmann::json b = {{"x", {{"latency_ns", 1.5}, {"new", 3}}}};
  const auto d = golden_diff(a, b);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0], "x.gone: missing (expected 2)");
  EXPECT_EQ(d[1], "x.latency_ns: expected 1.0, got 1.5");
  EXPECT_EQ(d[2], "x.new: new (3)");
  EXPECT_TRUE(golden_diff(a, a).empty());
}

}  // namespace
}  // namespace kb
