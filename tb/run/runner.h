// Runs: one elaboration of a PE with a configuration and its kernel launches.
//
// run_isolated() runs it in a forked child (tb/run/isolated.h) and returns
// the result over a pipe as a stream of JSON lines (one per launch, record
// and statistics window, read as they arrive, so memory is the result's
// structs and not its text; tb/run/result_codec.h). A run that exceeds
// its timeout, or whose process is stopped, is ended and fails. Outputs
// are written through OutputFile (models/util/output_file.h): a failed or
// interrupted run leaves nothing half-written under an output's name.
// A kernel error fails its run (RunResult::error); SystemC's default
// actions for its report (kKernelErrorType, models/pe/cpu/pe_cpu.h) display
// nothing, and run_in_process leaves them as configured.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/config/pe_config.h"
#include "models/pe/cpu/pe_cpu.h"
#include "models/trace/chrome_trace.h"
#include "models/trace/op_log.h"
#include "models/trace/stats.h"
#include "tb/run/isolated.h"

namespace kb {

struct RunSpec {
  PeConfig config;
  std::vector<std::pair<std::string, Kernel>> launches;
  std::string oplog_path;     // non-empty: stream the op log here as CSV
  bool keep_records = false;  // return every op-log record in the result
  // Compute RunResult::stats (the summary of every report), as the run goes
  // and in constant memory (StreamingStats). Speed benchmarks turn it off to
  // time the model alone.
  bool summary = true;
  std::string record_path;    // non-empty: write the PE_CPU command stream here
  // Observability outputs, written by the simulating process (the child):
  std::string trace_path;     // non-empty: Chrome / Perfetto trace JSON (models/trace/chrome_trace.h)
  TraceWindow trace_window;   // the span the trace keeps
  uint64_t trace_warn_bytes = kTraceWarnBytes;  // warn_on_large_trace (tb/run/harness.h)
  std::string vcd_path;       // non-empty: VCD waveforms (models/trace/vcd_trace.h)
  std::string stats_path;     // non-empty: statistics JSON (models/trace/stats.h)
  // SystemC time resolution in fs, set before elaboration (a power of ten).
  // 1000 (1 ps, SystemC's default) leaves the resolution as it is. Figures
  // do not depend on it; a resolution coarser than 1 ps fails the run.
  uint64_t time_resolution_fs = 1000;
  // > 0: the run's child is ended after this many wall-clock seconds and
  // the run fails with "timed out after N s" (run_isolated and
  // run_many_isolated; run_in_process ignores it).
  double timeout_s = 0;
  // The instant calendar runs instants ahead of SystemC's time while nothing
  // else is due (models/util/instant_calendar.h, look-ahead): the same op
  // log, fewer process activations. false: every instant at its SystemC time.
  bool lookahead = true;
};

struct RunResult {
  bool ok = false;
  std::string error;  // the first failing launch's message, or a crash
  std::vector<LaunchResult> launches;
  uint64_t busy_ps[kNumComponents] = {};  // summed over the whole run
  uint64_t end_ps = 0;                    // simulated time at the end
  uint64_t data_bytes = 0;                // data-mode backing store allocated (0 in timing mode)
  double sim_wall_seconds = 0;            // wall time of sc_start (speed figures only)
  uint64_t peak_rss_kb = 0;               // the run's process, at its end
  uint64_t records_by_component[kNumComponents] = {};  // op-log records (stages per engine)
  std::vector<OpRecord> records;          // when keep_records
  std::vector<CounterSample> occupancy;   // queue occupancy changes, when keep_records
  RunStats stats;                         // when spec.summary (StreamingStats, in the child)

  uint64_t latency_ps() const;  // summed over launches
};

// Elaborates and simulates in this process. Call at most once per process.
RunResult run_in_process(const RunSpec& spec);
// The same in a forked child (the usual entry point).
RunResult run_isolated(const RunSpec& spec);
// Several runs, up to `jobs` children at once; results in the order of
// `specs`. `on_done(done, total)` is called after each completion.
std::vector<RunResult> run_many_isolated(const std::vector<RunSpec>& specs, int jobs,
                                         const std::function<void(size_t, size_t)>& on_done = {});

// The whole result as one document (small runs and tests; run_isolated
// streams it instead). Both forms: tb/run/result_codec.cpp.
nlohmann::json to_json(const RunResult& r);
RunResult run_result_from_json(const nlohmann::json& j);

}  // namespace kb
