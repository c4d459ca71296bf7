// The codecs of the run results, one per struct: RunResult's parts and
// MeshRunResult (tb/run/mesh_result_codec.cpp) as JSON; the statistics' own
// are those of models/trace/stats.h.
//
// A RunResult across the fork (tb/run/isolated.h), as lines: 'H' its
// header (the figures and how many of each list follow), then 'L' per
// launch, 'O' per op-log record, 'C' per occupancy sample, 'S' the
// statistics without their launches, 'W' per launch's statistics window.
// The whole result as one document is to_json(RunResult) (tb/run/runner.h);
// both forms are written by tb/run/result_codec.cpp. A launch and a
// statistics window cross the fork as flat arrays of their fields in
// order: a keyed object per launch made the transport of 100 k launches
// spend most of its time on keys (3.4 times as long as the flat arrays).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tb/run/isolated.h"
#include "tb/run/runner.h"

namespace kb {

// A kernel's tl.metric figures as [[name, value], ...].
nlohmann::json metrics_json(const std::vector<std::pair<std::string, double>>& m);
std::vector<std::pair<std::string, double>> metrics_from_json(const nlohmann::json& j);

void write_run_result(ResultWriter& out, const RunResult& r);

// Builds a RunResult from the lines of write_run_result.
class RunResultReader : public ResultReader {
 public:
  void line(char tag, std::string_view text) override;
  void end() override;
  RunResult take() { return std::move(r_); }

 private:
  RunResult r_;
  bool header_ = false;
  uint64_t expected_[4] = {};
};

}  // namespace kb
