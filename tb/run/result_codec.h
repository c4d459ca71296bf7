// A RunResult across the fork (tb/run/isolated.h), as lines: 'H' its
// header (the figures and how many of each list follow), then 'L' per
// launch, 'O' per op-log record, 'C' per occupancy sample, 'S' the
// statistics without their launches, 'W' per launch's statistics window.
// The whole result as one document is to_json(RunResult) (tb/run/runner.h);
// both forms are written by tb/run/result_codec.cpp, one codec per struct.
#pragma once

#include <cstdint>
#include <string_view>

#include "tb/run/isolated.h"
#include "tb/run/runner.h"

namespace kb {

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
