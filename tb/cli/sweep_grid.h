// A sweep's grid and its runs: the axes (configuration keys and bench
// parameters with their values), every point of their product, each
// point's configuration, parameters and run, and the progress line.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/config/pe_config.h"
#include "tb/benches/bench_registry.h"
#include "tb/run/runner.h"

namespace kb::cli {

// The most points a sweep runs. Each point is a forked simulation and its
// specification is built before the first run starts, so the grid is
// bounded before anything of it is (2000 x 2000 points would take 3.3 GB
// and end in std::bad_alloc).
constexpr uint64_t kMaxSweepPoints = 10000;

struct Axis {
  std::string key;
  std::vector<std::string> values;
  bool config;  // a pe.* or topology.* configuration key, else a bench parameter
};

// Axes and every point of their product, first axis slowest.
struct Grid {
  std::vector<Axis> axes;
  std::vector<std::vector<std::string>> points;
};

// From the --param texts KEY=V1,V2,...; throws BenchError.
Grid build_grid(const std::vector<std::string>& axes_text);

// Every point's configuration, parameters and (PE benches) run
// specification: all bad input is found here, before any run. `keep_specs`
// false checks the specifications and drops them (--emit-jobs runs nothing).
struct PreparedPoints {
  std::vector<PeConfig> cfgs;
  std::vector<BenchParams> params;
  std::vector<RunSpec> specs;
};

PreparedPoints prepare_points(const Bench& bench, const std::string& config, const std::vector<std::string>& sets,
                              const Grid& grid, double timeout, bool keep_specs);

// Progress on a terminal only, so output piped to a file stays clean.
class Progress {
 public:
  explicit Progress(size_t total, bool show = true);
  void update(size_t done);

 private:
  double seconds() const;
  size_t total_;
  bool tty_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// Runs every prepared point: each one's figures, or its error.
void run_points(const Bench& bench, const PreparedPoints& pp, int jobs, double timeout, uint64_t max_memory,
                Progress& progress,
                std::vector<nlohmann::json>& figures, std::vector<std::string>& errors);

}  // namespace kb::cli
