// The bench registry: every bench registers a name, a one-line description,
// its parameters (with defaults and docs) and how to turn parameters and a
// PE configuration into kernel launches. `kernbench list` shows them. The
// built-in benches are a table (tb/benches/builtin_benches.h).
#pragma once

#include <chrono>

#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/config/pe_config.h"
#include "models/pe/cpu/pe_cpu.h"
#include "tb/run/mesh_run.h"
#include "tb/run/report.h"  // launch_figures, bottleneck
#include "tb/run/runner.h"

namespace kb {

struct BenchParam {
  std::string name;
  std::string default_value;
  std::string doc;
};

// Parameter values by name, defaults filled in; typed access with clear
// errors for malformed values.
class BenchParams {
 public:
  BenchParams(std::string bench, std::map<std::string, std::string> values)
      : bench_(std::move(bench)), values_(std::move(values)) {}
  const std::map<std::string, std::string>& values() const { return values_; }
  const std::string& bench() const { return bench_; }
  // A comma-separated list: at most kMaxListValues values, each once
  // (BenchError otherwise: a repeated value would run a point again).
  static constexpr size_t kMaxListValues = 64;
  std::vector<int64_t> integers(const std::string& name) const;
  std::vector<std::string> words(const std::string& name) const;
  int64_t integer(const std::string& name) const;  // > 0
  std::string text(const std::string& name) const;
  Dtype dtype(const std::string& name) const;

 private:
  std::string bench_;
  std::map<std::string, std::string> values_;
};

// Outputs a system bench writes for its one mesh run (tb/run/mesh_run.h).
struct SystemOutputs {
  std::string oplog, trace, vcd, stats;
  // > 0: the bench's mesh runs together end within this many s of `start`
  // (--timeout bounds the whole run).
  double timeout_s = 0;
  TraceWindow trace_window;  // of the trace (models/trace/chrome_trace.h)
  uint64_t max_memory_bytes = 0;  // --max-memory (tb/run/memory_limit.h); 0: what the machine has
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  // system() checks its parameters and configuration, throws BenchError on
  // bad input, and returns null without a run: a sweep finds every point's
  // bad input before the first runs (--emit-jobs before any job exists).
  bool check_only = false;
  bool any() const { return !oplog.empty() || !trace.empty() || !vcd.empty() || !stats.empty(); }
  // Into the spec of that mesh run: its outputs and limits.
  void apply(MeshRunSpec& spec) const;
  // Into the spec of any of the bench's mesh runs: the limits only.
  void apply_limits(MeshRunSpec& spec) const;
};

struct Bench {
  std::string name;
  std::string description;
  std::vector<BenchParam> params;
  std::function<std::vector<std::pair<std::string, Kernel>>(const BenchParams&, const PeConfig&)>
      launches;
  // The bench's figures as JSON (what --json, sweeps and goldens use).
  // Default: launch_figures() of every launch, keyed by kernel name.
  std::function<nlohmann::json(const BenchParams&, const PeConfig&, const RunResult&)> figures;
  // The human-readable table. Default: print_run_report().
  std::function<void(std::ostream&, const BenchParams&, const PeConfig&, const RunResult&)> report;
  // Flattened figure keys shown by `kernbench sweep` on the terminal
  // (every key goes to --csv). Empty: every key.
  std::vector<std::string> sweep_columns;
  // `NAME=VALUE` overrides of the defaults for the golden run (tb/goldens/goldens.h):
  // a bench whose defaults run for minutes keeps a small golden.
  std::vector<std::string> golden_params;
  // A system bench runs meshes of cubes (tb/run/mesh_run.h), each
  // mesh run in a forked child, instead of launches on one PE: system()
  // returns its figures (and throws BenchError when a run fails) and
  // system_report prints them. `launches`, `figures` and `report` are then
  // unused. Outputs (op log, trace, VCD, statistics) need a single mesh run: a bench
  // throws BenchError for outputs with parameters that make several.
  std::function<nlohmann::json(const BenchParams&, const PeConfig&, const SystemOutputs&)> system;
  std::function<void(std::ostream&, const BenchParams&, const PeConfig&, const nlohmann::json&)>
      system_report;
  bool is_system() const { return bool(system); }
};

// Figures of a run through the bench's figures() (or the default).
nlohmann::json bench_figures(const Bench& b, const BenchParams& p, const PeConfig& cfg,
                             const RunResult& r);

struct BenchError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A system bench's mesh run failed (a kernel error, a deadlock, a crash):
// the CLI's exit status 1, where BenchError is bad input (2).
struct SystemRunError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class BenchRegistry {
 public:
  static BenchRegistry& instance();
  void add(Bench b);
  const Bench& get(const std::string& name) const;  // throws BenchError
  const std::vector<Bench>& all() const { return benches_; }
  // Defaults overridden by `NAME=VALUE` strings; unknown names are errors.
  BenchParams params(const Bench& b, const std::vector<std::string>& overrides) const;

 private:
  std::vector<Bench> benches_;
};

// Adds the benches kernbench ships (tb/benches/builtin_benches.h) to the
// registry, once per process however often it is called.
void register_builtin_benches();

}  // namespace kb
