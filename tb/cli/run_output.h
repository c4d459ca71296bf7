// What `run` and `replay` share: the observability outputs the simulating
// child writes (--trace, --vcd, --stats) and the report of a finished run.
#pragma once

#include <vector>

#include "tb/cli/cli_util.h"

#include <string>

#include <CLI/CLI.hpp>

#include "models/config/pe_config.h"
#include "models/trace/chrome_trace.h"
#include "models/util/output_file.h"
#include "tb/benches/bench_registry.h"
#include "tb/run/runner.h"

namespace kb::cli {

// Observability outputs of `run` and `replay` (--trace, --vcd, --stats),
// written by the simulating child process.
struct Outputs {
  std::string trace, vcd, stats;
  TraceWindow trace_window;  // --trace-window
  bool no_summary = false;
  void apply(RunSpec& spec) const;
  // --trace, --vcd, --stats, for check_distinct_paths (cli_util.h).
  std::vector<PathUse> uses() const {
    return {{"--trace", trace}, {"--vcd", vcd}, {"--stats", stats}};
  }
};

void add_output_options(CLI::App* sub, Outputs& o);

// "op log written to ...", and the like for every output asked for.
void print_written(const std::string& oplog, const Outputs& outputs);

// Prints a finished run's report and writes its JSON; the shared tail of
// `run` and `replay`.
int report_run(const std::string& title, const std::string& name, const RunResult& r, const PeConfig& cfg,
               const Bench* bench, const BenchParams* params, const std::string& oplog, OutputFile* json,
               const Outputs& outputs = {});

}  // namespace kb::cli
