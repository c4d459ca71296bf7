// `kernbench perf`: simulation speed against the SystemC ceiling
// (tb/perf/perf.h).
#include <cstdint>
#include <iostream>
#include <limits>
#include <memory>

#include "tb/cli/options.h"
#include "tb/cli/subcommands.h"
#include "tb/perf/perf.h"

namespace kb::cli {

Subcommand add_perf(CLI::App& app) {
  auto o = std::make_shared<PerfOptions>();
  PerfOptions& perf_options = *o;
  CLI::App* perf = app.add_subcommand(
      "perf", "measure simulation speed (commands and stages per wall-second) against a minimal "
              "SystemC b_transport + wait ceiling, and how time and memory scale with context");
  perf->add_option("--context", perf_options.context, "gqa-decode context (default 131072); the scaling check also runs opt3 at twice it")
      ->check(whole_number<int64_t>(1, std::numeric_limits<int64_t>::max() / 2));
  perf->add_option("--gemm", perf_options.gemm, "composite GEMM size m = n = k (default 2048)")
      ->check(whole_number<int64_t>(1, std::numeric_limits<int64_t>::max()));
  perf->add_option("--ceiling-commands", perf_options.ceiling_commands,
                   "transactions per ceiling run (default 1000000)")
      ->check(whole_number<uint64_t>(1, std::numeric_limits<uint64_t>::max()));
  perf->add_option("--repeats", perf_options.repeats, "runs per workload, each after a ceiling run: rates from the fastest, the fraction of the ceiling is the median of run / adjacent ceiling (default 5)")
      ->check(whole_number(1, std::numeric_limits<int>::max()));
  perf->add_option("--only", perf_options.only,
                   "run only the workloads whose name contains TEXT, e.g. 'opt2' or 'opt3, context 131072' "
                   "(for profiling); the ceiling always runs");
  perf->add_option("--mesh-context", perf_options.mesh_context,
                   "long-context decode context on the 2 x 4 x 8 mesh (default 524288); the mesh scaling "
                   "check also runs it at twice it")
      ->check(whole_number<int64_t>(1, std::numeric_limits<int64_t>::max() / 2));
  perf->add_option("--mesh-allreduce-bytes", perf_options.mesh_allreduce_bytes,
                   "all-reduce message bytes per PE on the mesh, a multiple of 4 (default 536870912, about 1 s)")
      ->check(whole_number<int64_t>(4, int64_t(1) << 30));
  return {perf, [o] { return run_perf(*o, std::cout); }};
}

}  // namespace kb::cli
