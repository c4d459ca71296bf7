// The steps that every run of simulated PEs takes, whatever its top: one
// PE behind PeTop (tb/run/runner.h) or the PEs of a cube mesh (MeshTop,
// tb/run/mesh_run.h). Both harnesses go through these, over their list of
// PEs: each PE's trace process and queue occupancy history, the
// simulation to its end, the run's checks and the commit of its outputs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/pe/pe.h"
#include "models/trace/chrome_trace.h"
#include "models/trace/counter_probe.h"
#include "models/util/output_file.h"
#include "tb/run/output.h"  // open_output: a run's outputs are opened before it starts

namespace kb {

// Before any SystemC object: SystemC's info messages would mix into the
// reports. A kernel error's report is not displayed with SystemC's default
// actions for an error (SC_LOG | SC_CACHE_REPORT | SC_THROW; PE_CPU catches
// the thrown report): the result carries the message, which the caller
// prints. Then the instant calendar's look-ahead
// (models/util/instant_calendar.h), before its first sweep.
void prepare_run(bool lookahead);

// Per PE of a run: its process in the Chrome trace (when there is a trace),
// which its op log's records feed, and its queue occupancy's history, kept
// (`keep_occupancy`) and/or fed to that process as a counter. Made after
// the top and declared before it: the PEs' schedulers write to the
// histories until the top is gone.
class PeProbes {
 public:
  PeProbes(const std::vector<Pe*>& pes, ChromeTrace* trace, bool keep_occupancy);
  // Null when there is no trace.
  TraceProcess* process(size_t i) const { return processes_.empty() ? nullptr : processes_[i]; }
  // The kept history of PE i (empty unless keep_occupancy).
  const std::vector<CounterSample>& occupancy(size_t i) const { return occupancy_[i]->samples(); }
  // After the simulation: every PE's last instant's records and its last
  // occupancy sample.
  void flush();

 private:
  std::vector<Pe*> pes_;
  std::vector<TraceProcess*> processes_;
  std::vector<std::unique_ptr<CounterHistory>> occupancy_;  // null for a PE without one
};

// Warns on stderr once the trace passes `bytes` (kTraceWarnBytes), naming
// --trace-window (docs/observability.md); the run goes on.
void warn_on_large_trace(ChromeTrace& trace, uint64_t bytes);

// sc_start() until nothing is left to do; the wall time it took (speed
// figures only).
double simulate();

// The process's peak RSS so far, in KB.
uint64_t peak_rss_kb();

// "<pe> holds messages no recv took: ..." for each PE that holds any,
// joined by "; "; empty when none does (a run does not end silently with
// messages undelivered).
std::string undelivered_messages(const std::vector<Pe*>& pes);

// A run's state, ok and error, with an output's failure added to it: the
// run fails (exit 1) with the path and the OS error.
void add_error(bool& ok, std::string& error, const std::string& what);
// Writes one output and commits it; its failure is added to the run
// (add_error) without losing the other outputs. Outputs are written after
// a failed kernel too: what happened up to the failure.
void commit_output(bool& ok, std::string& error, const std::function<void()>& write);

}  // namespace kb
