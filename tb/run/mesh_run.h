// A mesh run: one elaboration of a cube mesh (MeshTop from the
// configuration's topology), one SPMD kernel launched on every PE (or a
// chosen set), simulated until nothing is left to do.
//
// A run where launched PEs are left unfinished with no event pending fails
// with the deadlock report (models/top/deadlock.h): who waits for what.
// Outputs: the op log of every PE and link as one CSV, streamed as the run
// goes (tb/run/mesh_op_log.h), component names
// carrying the hierarchy ("cube6.pe3.pe_dma", "link.c5-c6"), in the
// canonical order with the component name as a key; a Chrome trace with
// one process per PE (pid = global PE number + 1, as a single PE's:
// op-log slices, occupancy counter, launches) and, when the mesh has
// links, a "links" process after them with one track per link direction
// (chrome_trace.h add_track_process); a VCD with one scope per PE,
// busy_ipc included.
#pragma once

#include <chrono>
#include <optional>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/config/pe_config.h"
#include "models/tl/tl_target.h"
#include "models/trace/chrome_trace.h"
#include "models/trace/launch_result.h"

namespace kb {

struct MeshRunSpec {
  PeConfig config;              // config.topology shapes the mesh
  std::string kernel_name;
  Kernel kernel;                // run by every PE of `pes`
  std::vector<uint32_t> pes;    // global PE numbers launched; empty: every PE
  std::string oplog_path;       // non-empty: the merged op log as CSV
  std::string trace_path;       // non-empty: Chrome / Perfetto trace JSON
  TraceWindow trace_window;     // the span the trace keeps
  uint64_t trace_warn_bytes = kTraceWarnBytes;  // warn_on_large_trace (tb/run/harness.h)
  std::string vcd_path;         // non-empty: VCD waveforms
  std::string stats_path;       // non-empty: the run's statistics as JSON (to_json, per PE and totals)
  // run_mesh_isolated: > 0 ends the child after this many s, or at
  // `deadline` if that comes first (a bench's several mesh runs share one
  // --timeout); the error names timeout_s.
  double timeout_s = 0;
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // run_mesh_isolated: the mesh's memory estimate must fit under this
  // (tb/run/memory_limit.h; 0: what the machine has), or the run is refused
  // with MemoryLimitError before it starts; what the estimate leaves caps
  // data mode's storage.
  uint64_t max_memory_bytes = 0;
  bool lookahead = true;        // as RunSpec::lookahead (tb/run/runner.h)
};

struct MeshPeResult {
  uint32_t global = 0;
  std::string name;             // hierarchical, "cube6.pe3"
  bool launched = false;
  LaunchResult launch;          // when launched and finished
  uint64_t busy_ps[kNumComponents] = {};
};

struct MeshLinkResult {
  std::string name;             // "link.c5-c6"
  uint64_t bytes = 0, transactions = 0, busy_ps = 0;
};

struct MeshRunResult {
  bool ok = false;
  std::string error;            // the first failing launch, or the deadlock report
  uint32_t mesh_h = 0, mesh_w = 0, pes_per_cube = 0;
  uint64_t start_ps = 0, end_ps = 0;  // first launch start, last launch end
  uint64_t commands = 0;        // descriptors written by every PE
  uint64_t stages = 0;          // engine stages of every PE
  uint64_t dispatch_ps = 0;     // PE_CPU busy dispatching, summed over PEs
  std::vector<MeshPeResult> pes;
  std::vector<MeshLinkResult> links;
  std::vector<std::pair<std::string, double>> metrics;  // PE 0's tl.metric figures
  double sim_wall_seconds = 0;
  uint64_t peak_rss_kb = 0;
  uint64_t data_bytes = 0;
  uint64_t latency_ps() const { return end_ps - start_ps; }
};

// In this process (at most once per process: SystemC elaborates once).
MeshRunResult run_mesh_in_process(const MeshRunSpec& spec);
// In a forked child, the result returned as JSON.
MeshRunResult run_mesh_isolated(const MeshRunSpec& spec);

// The whole result as JSON, the statistics file's figures (tb/run/mesh_result_codec.cpp).
nlohmann::json to_json(const MeshRunResult& r);
MeshRunResult mesh_run_result_from_json(const nlohmann::json& j);

}  // namespace kb
