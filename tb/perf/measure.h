// How `kernbench perf` measures a workload (tb/perf/perf.h): each run of
// it in its own child, right after a run of the SystemC ceiling, a minimal
// TLM initiator/target pair doing one b_transport and one wait per command.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "tb/perf/perf.h"

namespace kb::perf_detail {

struct Row {
  std::string name;
  uint64_t commands = 0, stages = 0, rss_kb = 0;
  double seconds = 0;
  double fraction = 0;  // median over the runs of (run's rate / adjacent ceiling run's rate)
  std::string error;
};

// What one run of a workload did, single PE or mesh alike.
struct Measured {
  std::string error;  // not empty: the run failed
  uint64_t commands = 0, stages = 0, rss_kb = 0;
  double seconds = 0;  // wall time of sc_start
};

// `repeats` runs of `run`, each right after a ceiling run: the fastest
// run's figures and the median ratio to the adjacent ceiling runs.
// `best_ceiling` collects the fastest ceiling rate (commands/s) seen.
Row measure(const std::string& name, const std::function<Measured()>& run, const PerfOptions& o,
            double* best_ceiling);

}  // namespace kb::perf_detail
