// The sweep engine: `kernbench sweep` runs a bench at every point of a
// grid (tb/cli/sweep_grid.h) here and prints its table (tb/cli/sweep_table.h),
// or, beyond one machine, writes the grid as jobs (--emit-jobs), runs one
// point of those jobs (--point-json) or merges their point files
// (--collect; the point files: tb/cli/sweep_jobs.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kb::cli {

// What `sweep` is asked to do: run the grid here, write it as jobs
// (--emit-jobs), run one point of those jobs (--point-json) or merge their
// point files (--collect).
struct SweepRequest {
  std::string name, config, csv;
  std::vector<std::string> sets, axes;
  int jobs = 1;
  double timeout = 0;
  uint64_t max_memory = 0;  // --max-memory, bytes (0: what the machine has)
  std::string emit_jobs, jobs_dir, collect;
  std::string point_json, sweep_id;  // point mode
  uint64_t point_index = 0, point_count = 0;
};

// Runs the request; its exit status (0, or 1 when a point failed). Throws
// BenchError on bad input.
int run_sweep(const SweepRequest& rq);

}  // namespace kb::cli
