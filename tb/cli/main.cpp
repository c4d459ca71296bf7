// kernbench: run benches on the PE model, sweep them over configuration keys
// and bench parameters, record and replay command streams, check goldens,
// print the effective configuration.
#include <dirent.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>

#include <CLI/CLI.hpp>

#include "models/config/pe_config.h"
#include "models/util/checked.h"
#include "models/util/output_file.h"
#include "models/trace/schema_version.h"
#include "tb/benches/bench_registry.h"
#include "tb/replay/command_stream.h"
#include "tb/goldens/goldens.h"
#include "tb/perf/perf.h"
#include "tb/run/report.h"
#include "tb/run/runner.h"
#include "tb/cli/sweep_jobs.h"

// libsystemc.so references sc_main; kernbench drives SystemC from main().
int sc_main(int, char**) { return 0; }

namespace {

constexpr int kExitRunFailed = 1;
constexpr int kExitBadInput = 2;

std::string config_keys_help() {
  std::string s = "Configuration keys (--set KEY=VALUE):\n";
  for (const kb::ConfigKeyInfo& k : kb::pe_config_keys()) {
    s += "  " + k.key + " (" + k.type + ", default " + k.default_value + "): " + k.doc + "\n";
  }
  return s;
}

// JSON for the user's files: invalid UTF-8 in a name is replaced, not thrown on.
std::string dump(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

// An output of this process (--json, --csv, goldens), opened before any run
// so that a path that cannot be written fails at once (exit 1); null when
// not asked for.
std::unique_ptr<kb::OutputFile> open_output(const std::string& path, const char* what) {
  return path.empty() ? nullptr : std::make_unique<kb::OutputFile>(path, what);
}

// A user's value in a message, cut short and on one line (control
// characters and bytes from 0x7f escaped as \xNN).
std::string shown(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size() && i < 40; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += char(c);
    } else {
      static const char kHex[] = "0123456789abcdef";
      out += std::string("\\x") + kHex[c >> 4] + kHex[c & 15];
    }
  }
  return s.size() <= 40 ? out : out + "... (" + std::to_string(s.size()) + " characters)";
}

// Whole-number options. CLI11's own range check prints the type's limits
// (a 309-digit number), so the message says what is expected instead.
template <typename T>
CLI::Validator whole_number(T lo, T hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        T v{};
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec == std::errc() && end == s.data() + s.size() && v >= lo && v <= hi) return "";
        return "expected a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) + ", got '" +
               shown(s) + "'";
      },
      "", "whole_number");
}

// --timeout SECONDS: a wall-clock limit per run.
constexpr double kMaxTimeoutSeconds = 7 * 24 * 3600;
CLI::Validator timeout_seconds() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        char* end = nullptr;
        errno = 0;
        const double v = s.empty() ? 0 : std::strtod(s.c_str(), &end);
        if (!s.empty() && errno == 0 && *end == '\0' && std::isfinite(v) && v > 0 && v <= kMaxTimeoutSeconds) {
          return "";
        }
        return "expected seconds, more than 0 and at most " + std::to_string(int(kMaxTimeoutSeconds)) +
               " (a week), got '" + shown(s) + "'";
      },
      "", "timeout_seconds");
}

int cmd_list() {
  for (const kb::Bench& b : kb::BenchRegistry::instance().all()) {
    std::cout << b.name << "  " << b.description << "\n";
    for (const kb::BenchParam& p : b.params) {
      std::cout << "    --param " << p.name << "=" << p.default_value << "  " << p.doc << "\n";
    }
  }
  return 0;
}

int cmd_config(const std::string& config, const std::vector<std::string>& sets) {
  std::cout << kb::dump_pe_config_yaml(kb::load_pe_config(config, sets));
  return 0;
}

// Observability outputs of `run` and `replay` (--trace, --vcd, --stats),
// written by the simulating child process.
struct Outputs {
  std::string trace, vcd, stats;
  kb::TraceWindow trace_window;  // --trace-window
  bool no_summary = false;
  void apply(kb::RunSpec& spec) const {
    spec.trace_path = trace;
    spec.trace_window = trace_window;
    spec.vcd_path = vcd;
    spec.stats_path = stats;
    spec.summary = !no_summary || !stats.empty();
  }
};

void add_output_options(CLI::App* sub, Outputs& o) {
  sub->add_option("--trace", o.trace,
                  "write a Chrome / Perfetto trace (JSON; open in ui.perfetto.dev or chrome://tracing)")
      ->type_name("FILE.json");
  // Parsed where the text enters: bad values exit 2 before any run.
  sub->add_option_function<std::string>(
         "--trace-window",
         [&o](const std::string& text) {
           try {
             o.trace_window = kb::parse_trace_window(text);
           } catch (const std::invalid_argument& e) {
             throw CLI::ValidationError("--trace-window", "'" + shown(text) + "': " + e.what());
           }
         },
         "write only the trace events overlapping this span of simulated time (slices kept whole, "
         "process and thread names always): a whole number of ps or a number with a unit ps, ns, us, "
         "ms, s, e.g. 100us:250us; for runs whose whole trace is too large for a browser (README)")
      ->type_name("START:END")
      ->needs("--trace");
  sub->add_option("--vcd", o.vcd,
                  "write VCD waveforms (GTKWave): engine busy, queue occupancy, PE_CPU state, "
                  "descriptors written")
      ->type_name("FILE.vcd");
  sub->add_option("--stats", o.stats,
                  "write statistics as JSON: busy time and utilisation, commands and logical "
                  "bytes by type, dispatch, stall, CPU- or engine-bound verdict")
      ->type_name("FILE.json");
  sub->add_flag("--no-summary", o.no_summary,
                "leave the statistics summary out of the report (it is computed as the run goes, "
                "in constant memory; leaving it out makes long runs about 10-20% faster)");
}

// Prints a finished run's report and writes its JSON; the shared tail of
// `run` and `replay`.
int report_run(const std::string& title, const std::string& name, const kb::RunResult& r, const kb::PeConfig& cfg,
               const kb::Bench* bench, const kb::BenchParams* params, const std::string& oplog,
               kb::OutputFile* json, const Outputs& outputs = {}) {
  if (!r.ok) {
    std::cerr << "kernbench: " << title << " failed: " << r.error << "\n";
    return kExitRunFailed;
  }
  if (bench && bench->report) bench->report(std::cout, *params, cfg, r);
  else kb::print_run_report(std::cout, title, cfg, r);
  // The child wrote these and checked them: the run failed if one could not be.
  if (!oplog.empty()) std::cout << "op log written to " << oplog << "\n";
  if (!outputs.trace.empty()) std::cout << "trace written to " << outputs.trace << "\n";
  if (!outputs.vcd.empty()) std::cout << "VCD written to " << outputs.vcd << "\n";
  if (!outputs.stats.empty()) std::cout << "statistics written to " << outputs.stats << "\n";
  if (json) {
    // Written a launch at a time: as dump(j) of run_summary_json + "figures".
    kb::write_run_summary_json(json->stream(), name, cfg, r,
                               bench ? kb::bench_figures(*bench, *params, cfg, r) : nlohmann::json());
    json->stream() << "\n";
    json->commit();
  }
  return 0;
}

// A system bench: its own mesh runs, its figures, its report.
int run_system(const kb::Bench& bench, const kb::BenchParams& p, const kb::PeConfig& cfg, const std::string& oplog,
               const std::string& json, const std::string& record, const Outputs& outputs, double timeout) {
  if (!record.empty()) throw kb::BenchError("--record: bench '" + bench.name + "' runs meshes; only PE benches record a command stream");
  const auto json_out = open_output(json, "JSON summary");
  nlohmann::json figures;
  try {
    figures = bench.system(p, cfg, kb::SystemOutputs{oplog, outputs.trace, outputs.vcd, outputs.stats, timeout, outputs.trace_window});
  } catch (const kb::SystemRunError& e) {
    std::cerr << "kernbench: run '" << bench.name << "' failed: " << e.what() << "\n";
    return kExitRunFailed;
  }
  bench.system_report(std::cout, p, cfg, figures);
  if (!oplog.empty()) std::cout << "op log written to " << oplog << "\n";
  if (!outputs.trace.empty()) std::cout << "trace written to " << outputs.trace << "\n";
  if (!outputs.vcd.empty()) std::cout << "VCD written to " << outputs.vcd << "\n";
  if (!outputs.stats.empty()) std::cout << "statistics written to " << outputs.stats << "\n";
  if (json_out) {
    nlohmann::json j;
    j["schema_version"] = kb::kSchemaVersion;
    j["bench"] = bench.name;
    j["clock_freq_ghz"] = cfg.clock_freq_ghz;
    j["figures"] = figures;
    json_out->stream() << j.dump(2) << "\n";
    json_out->commit();
  }
  return 0;
}

int cmd_run(const std::string& name, const std::string& config,
            const std::vector<std::string>& sets, const std::vector<std::string>& params,
            const std::string& oplog, const std::string& json, const std::string& record,
            const Outputs& outputs, double timeout) {
  const kb::PeConfig cfg = kb::load_pe_config(config, sets);
  auto& registry = kb::BenchRegistry::instance();
  const kb::Bench& bench = registry.get(name);
  const kb::BenchParams p = registry.params(bench, params);
  if (bench.is_system()) return run_system(bench, p, cfg, oplog, json, record, outputs, timeout);
  kb::RunSpec spec;
  spec.config = cfg;
  spec.launches = bench.launches(p, cfg);
  spec.oplog_path = oplog;
  spec.record_path = record;
  spec.timeout_s = timeout;
  outputs.apply(spec);
  const auto json_out = open_output(json, "JSON summary");
  const int rc = report_run("run '" + name + "'", name, kb::run_isolated(spec), cfg, &bench, &p, oplog,
                            json_out.get(), outputs);
  if (rc == 0 && !record.empty()) std::cout << "command stream written to " << record << "\n";
  return rc;
}

int cmd_replay(const std::string& file, const std::string& config,
               const std::vector<std::string>& sets, const std::string& oplog,
               const std::string& json, const Outputs& outputs, double timeout) {
  const kb::PeConfig cfg = kb::load_pe_config(config, sets);
  kb::RunSpec spec;
  spec.config = cfg;
  spec.launches = kb::load_command_stream(file);  // parse errors before simulating
  spec.oplog_path = oplog;
  spec.timeout_s = timeout;
  outputs.apply(spec);
  const auto json_out = open_output(json, "JSON summary");
  return report_run("replay '" + file + "'", file, kb::run_isolated(spec), cfg, nullptr, nullptr, oplog,
                    json_out.get(), outputs);
}

// --- sweep

struct Axis {
  std::string key;
  std::vector<std::string> values;
  bool config;  // a pe.* or topology.* configuration key, else a bench parameter
};

Axis parse_axis(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    throw kb::BenchError("--param " + text + ": expected KEY=V1,V2,...");
  }
  Axis a{text.substr(0, eq), {}, text.rfind("pe.", 0) == 0 || text.rfind("topology.", 0) == 0};
  std::stringstream ss(text.substr(eq + 1));
  for (std::string v; std::getline(ss, v, ',');) {
    if (v.empty()) throw kb::BenchError("--param " + text + ": empty value");
    a.values.push_back(v);
  }
  return a;
}

// Leaves of a figures document as dotted keys, in document order.
void flatten(const nlohmann::json& j, const std::string& prefix,
             std::vector<std::pair<std::string, nlohmann::json>>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) flatten(v, prefix.empty() ? k : prefix + "." + k, out);
  } else {
    out.emplace_back(prefix, j);
  }
}

// A CSV field. Floating-point figures in their shortest form that reads
// back as the same double (std::to_chars), so the CSV holds every figure
// exactly; text quoted when it holds a comma, a quote or a line break (RFC 4180).
std::string cell(const nlohmann::json& v) {
  if (v.is_number_float()) {
    char buf[64];
    const auto res = std::to_chars(buf, buf + sizeof buf, v.get<double>());
    return std::string(buf, res.ptr);
  }
  const std::string text =
      v.is_string() ? v.get<std::string>() : v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

// Progress on a terminal only, so output piped to a file stays clean.
class Progress {
 public:
  explicit Progress(size_t total, bool show = true) : total_(total), tty_(show && isatty(STDERR_FILENO)) {}
  void update(size_t done) {
    if (!tty_) return;
    const double elapsed = seconds();
    const double remaining = done ? elapsed / double(done) * double(total_ - done) : 0.0;
    std::fprintf(stderr, "\r[%zu/%zu] elapsed %.1f s, remaining ~%.1f s   ", done, total_, elapsed,
                 remaining);
    if (done == total_) std::fprintf(stderr, "\n");
    std::fflush(stderr);
  }

 private:
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  size_t total_;
  bool tty_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// The most points a sweep runs. Each point is a forked simulation and its
// specification is built before the first run starts, so the grid is
// bounded before anything of it is (2000 x 2000 points would take 3.3 GB
// and end in std::bad_alloc).
constexpr uint64_t kMaxSweepPoints = 10000;

// What `sweep` is asked to do: run the grid here, write it as jobs
// (--emit-jobs), run one point of those jobs (--point-json) or merge their
// point files (--collect).
struct SweepRequest {
  std::string name, config, csv;
  std::vector<std::string> sets, axes;
  int jobs = 1;
  double timeout = 0;
  std::string emit_jobs, jobs_dir, collect;
  std::string point_json, sweep_id;  // point mode
  uint64_t point_index = 0, point_count = 0;
};

// Axes and every point of their product, first axis slowest.
struct Grid {
  std::vector<Axis> axes;
  std::vector<std::vector<std::string>> points;
};

Grid build_grid(const std::vector<std::string>& axes_text) {
  Grid g;
  std::vector<Axis>& axes = g.axes;
  for (const std::string& t : axes_text) {
    axes.push_back(parse_axis(t));
    for (size_t i = 0; i + 1 < axes.size(); ++i) {
      if (axes[i].key == axes.back().key) {
        throw kb::BenchError("--param " + shown(t) + ": axis '" + shown(axes.back().key) +
                             "' is given twice; expected each key once");
      }
    }
  }
  if (axes.empty()) throw kb::BenchError("sweep needs at least one --param KEY=V1,V2,...");
  {
    std::string grid;
    std::optional<uint64_t> count = 1;
    for (const Axis& a : axes) {
      grid += (grid.empty() ? "" : " x ") + shown(a.key) + " (" + std::to_string(a.values.size()) + " values)";
      if (count) count = kb::checked_mul(*count, a.values.size());
    }
    if (!count || *count > kMaxSweepPoints) {
      throw kb::BenchError("sweep grid " + grid + " has " +
                           (count ? std::to_string(*count) : std::string("more than 2^64")) +
                           " points; expected at most " + std::to_string(kMaxSweepPoints));
    }
  }
  g.points = {{}};
  for (const Axis& a : axes) {
    std::vector<std::vector<std::string>> next;
    for (const auto& p : g.points)
      for (const std::string& v : a.values) {
        next.push_back(p);
        next.back().push_back(v);
      }
    g.points = std::move(next);
  }
  return g;
}

// Every point's configuration, parameters and (PE benches) run
// specification: all bad input is found here, before any run. `keep_specs`
// false checks the specifications and drops them (--emit-jobs runs nothing).
struct PreparedPoints {
  std::vector<kb::PeConfig> cfgs;
  std::vector<kb::BenchParams> params;
  std::vector<kb::RunSpec> specs;
};

PreparedPoints prepare_points(const kb::Bench& bench, const std::string& config, const std::vector<std::string>& sets,
                              const Grid& grid, double timeout, bool keep_specs) {
  auto& registry = kb::BenchRegistry::instance();
  PreparedPoints pp;
  for (const auto& point : grid.points) {
    std::vector<std::string> point_sets = sets, point_params;
    for (size_t i = 0; i < grid.axes.size(); ++i) {
      (grid.axes[i].config ? point_sets : point_params).push_back(grid.axes[i].key + "=" + point[i]);
    }
    // The config file is read again only when a point changes a key.
    const bool config_axis = point_sets.size() > sets.size();
    pp.cfgs.push_back(config_axis || pp.cfgs.empty() ? kb::load_pe_config(config, point_sets) : pp.cfgs.back());
    pp.params.push_back(registry.params(bench, point_params));
    if (bench.is_system()) continue;  // runs its own meshes, below
    kb::RunSpec spec;
    spec.config = pp.cfgs.back();
    spec.launches = bench.launches(pp.params.back(), pp.cfgs.back());
    spec.timeout_s = timeout;
    if (keep_specs) pp.specs.push_back(std::move(spec));
  }
  return pp;
}

// Runs every prepared point: each one's figures, or its error.
void run_points(const kb::Bench& bench, const PreparedPoints& pp, int jobs, double timeout, Progress& progress,
                std::vector<nlohmann::json>& figures, std::vector<std::string>& errors) {
  const size_t n = pp.params.size();
  figures.assign(n, nlohmann::json());
  errors.assign(n, std::string());
  if (bench.is_system()) {
    for (size_t i = 0; i < n; ++i) {
      try {
        kb::SystemOutputs none;
        none.timeout_s = timeout;
        figures[i] = bench.system(pp.params[i], pp.cfgs[i], none);
      } catch (const kb::SystemRunError& e) {
        errors[i] = e.what();
      }
      progress.update(i + 1);
    }
  } else {
    const auto results = kb::run_many_isolated(pp.specs, jobs, [&](size_t d, size_t) { progress.update(d); });
    for (size_t i = 0; i < results.size(); ++i) {
      if (results[i].ok) figures[i] = kb::bench_figures(bench, pp.params[i], pp.cfgs[i], results[i]);
      else errors[i] = results[i].error.empty() ? "failed" : results[i].error;
    }
  }
}

// A point's figures as the CSV's (key, cell) pairs, in document order.
std::vector<std::pair<std::string, std::string>> cells_of(const nlohmann::json& figures) {
  std::vector<std::pair<std::string, nlohmann::json>> leaves;
  flatten(figures, "", leaves);
  std::vector<std::pair<std::string, std::string>> cells;
  for (const auto& [k, v] : leaves) cells.emplace_back(k, cell(v));
  return cells;
}

// The sweep's table on stdout and its CSV, from every point's cells or
// error; the same for a local sweep and for --collect. Exit status 1 when a
// point failed.
int print_sweep(const kb::Bench& bench, const std::vector<std::string>& header,
                const std::vector<std::vector<std::string>>& points,
                const std::vector<std::vector<std::pair<std::string, std::string>>>& point_cells,
                const std::vector<std::string>& errors, kb::OutputFile* csv_out, const std::string& csv) {
  std::vector<std::vector<std::string>> csv_rows;
  std::vector<std::string> csv_header = header;
  int failures = 0;
  // Figures can differ between points (keyed by a swept parameter, such as
  // a size): the columns are every figure of any point, in order of first
  // appearance, and a point without one leaves its cell empty.
  std::vector<std::map<std::string, std::string>> cells(points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    if (!errors[i].empty()) {
      ++failures;
      std::cerr << "kernbench: point " << i + 1 << " failed: " << errors[i] << "\n";
      continue;
    }
    for (const auto& [k, v] : point_cells[i]) {
      if (std::find(csv_header.begin() + long(header.size()), csv_header.end(), k) == csv_header.end()) {
        csv_header.push_back(k);
      }
      cells[i][k] = v;
    }
  }
  for (size_t i = 0; i < points.size(); ++i) {
    std::vector<std::string> full = points[i];
    if (errors[i].empty()) {
      for (size_t c = header.size(); c < csv_header.size(); ++c) {
        auto it = cells[i].find(csv_header[c]);
        full.push_back(it == cells[i].end() ? "" : it->second);
      }
    }
    csv_rows.push_back(full);
  }
  // Terminal columns: the bench's sweep_columns, where "*suffix" matches
  // every figure ending in suffix; every figure when it names none.
  auto shown_on_terminal = [&](const std::string& key) {
    if (bench.sweep_columns.empty()) return true;
    for (const std::string& pattern : bench.sweep_columns) {
      if (pattern == key) return true;
      if (pattern[0] == '*' && key.size() >= pattern.size() - 1 &&
          key.compare(key.size() - (pattern.size() - 1), pattern.size() - 1, pattern, 1) == 0) {
        return true;
      }
    }
    return false;
  };
  std::vector<size_t> columns;
  for (size_t c = 0; c < csv_header.size(); ++c) {
    if (c < header.size() || shown_on_terminal(csv_header[c])) columns.push_back(c);
  }
  std::vector<std::string> shown;
  for (size_t c : columns) shown.push_back(csv_header[c]);
  std::vector<std::vector<std::string>> rows;
  for (const auto& full : csv_rows) {
    std::vector<std::string> row;
    for (size_t c : columns) row.push_back(c < full.size() ? full[c] : "failed");
    rows.push_back(row);
  }
  std::vector<size_t> width(shown.size());
  for (size_t c = 0; c < shown.size(); ++c) {
    width[c] = shown[c].size();
    for (const auto& r : rows) width[c] = std::max(width[c], c < r.size() ? r[c].size() : 0);
  }
  for (size_t c = 0; c < shown.size(); ++c) std::cout << (c ? "  " : "") << std::setw(int(width[c])) << shown[c];
  std::cout << "\n";
  for (const auto& r : rows) {
    for (size_t c = 0; c < shown.size(); ++c)
      std::cout << (c ? "  " : "") << std::setw(int(width[c])) << (c < r.size() ? r[c] : "");
    std::cout << "\n";
  }
  if (csv_out) {
    auto csv_line = [&](const std::vector<std::string>& fields) {
      for (size_t c = 0; c < fields.size(); ++c) csv_out->stream() << (c ? "," : "") << fields[c];
      csv_out->stream() << "\n";
    };
    csv_line(csv_header);
    for (const auto& r : csv_rows) csv_line(r);
    csv_out->commit();
    std::cout << "sweep written to " << csv << "\n";
  }
  return failures ? kExitRunFailed : 0;
}

// A number as its shortest text that reads back as the same double.
std::string shortest(double v) {
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

// Text that goes into a point file (JSON) must be UTF-8.
void require_utf8(const std::string& s, const std::string& what) {
  try {
    (void)nlohmann::json(s).dump();
  } catch (const nlohmann::json::exception&) {
    throw kb::BenchError(what + " '" + shown(s) + "' is not UTF-8 text; a point file (JSON) cannot hold it");
  }
}

// --emit-jobs FILE: one sh command per point, a Slurm array script beside
// it; runs nothing.
int emit_jobs(const SweepRequest& rq, const kb::Bench& bench, const Grid& grid) {
  namespace fs = std::filesystem;
  for (const Axis& a : grid.axes) {
    require_utf8(a.key, "--param key");
    for (const std::string& v : a.values) require_utf8(v, "--param " + shown(a.key) + " value");
  }
  std::error_code ec;
  // Read back by line (parallel, sed in the Slurm script) and written beside
  // (FILE.sbatch): a file, not a device or a pipe.
  const fs::file_status st = fs::status(rq.emit_jobs, ec);
  if (fs::exists(st) && !fs::is_regular_file(st)) {
    throw kb::BenchError("--emit-jobs '" + shown(rq.emit_jobs) +
                         "': expected a file (its lines are read back, FILE.sbatch is written beside it)");
  }
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw kb::OutputError("--emit-jobs: cannot find this kernbench's path: " + ec.message());
  const std::string config = rq.config.empty() ? "" : fs::absolute(rq.config).lexically_normal().string();
  const std::string jobs_file = fs::absolute(rq.emit_jobs).lexically_normal().string();
  const std::string dir =
      fs::absolute(rq.jobs_dir.empty() ? rq.emit_jobs + ".points" : rq.jobs_dir).lexically_normal().string();
  const std::string timeout = rq.timeout > 0 ? shortest(rq.timeout) : "";

  // The identity of the sweep: everything its lines carry but the index.
  std::vector<std::string> id_fields = {kb::kSweepPointFormat, bench.name, config, timeout,
                                        std::to_string(rq.sets.size())};
  id_fields.insert(id_fields.end(), rq.sets.begin(), rq.sets.end());
  for (const Axis& a : grid.axes) {
    id_fields.push_back(a.key);
    id_fields.push_back(std::to_string(a.values.size()));
    id_fields.insert(id_fields.end(), a.values.begin(), a.values.end());
  }
  const std::string id = kb::sweep_id(id_fields);

  std::string prefix = kb::sh_quote(exe.string(), "kernbench's path") + " sweep " + kb::sh_quote(bench.name, "NAME");
  if (!config.empty()) prefix += " --config " + kb::sh_quote(config, "--config");
  for (const std::string& s : rq.sets) prefix += " --set " + kb::sh_quote(s, "--set " + shown(s));
  if (!timeout.empty()) prefix += " --timeout " + timeout;
  const std::string count = std::to_string(grid.points.size());
  const std::string jobs_quoted = kb::sh_quote(jobs_file, "--emit-jobs");  // a line break refused before writing

  const auto jobs_out = open_output(rq.emit_jobs, "jobs file");
  const auto sbatch_out = open_output(rq.emit_jobs + ".sbatch", "Slurm array script");
  for (size_t i = 0; i < grid.points.size(); ++i) {
    std::string line = prefix;
    for (size_t a = 0; a < grid.axes.size(); ++a) {
      const std::string kv = grid.axes[a].key + "=" + grid.points[i][a];
      line += " --param " + kb::sh_quote(kv, "--param " + shown(kv));
    }
    line += " --point-index " + std::to_string(i) + " --point-count " + count + " --sweep-id " + id +
            " --point-json " + kb::sh_quote(dir + "/point-" + std::to_string(i) + ".json", "--jobs-dir");
    jobs_out->stream() << line << "\n";
  }
  sbatch_out->stream()
      << "#!/bin/sh\n"
      << "# kernbench sweep of " << count << " points as a Slurm array (issue 16 item 4): task ID runs\n"
      << "# line ID + 1 of the jobs file. Submit this script with sbatch; once every task is done:\n"
      << "# kernbench sweep --collect " << kb::sh_quote(dir, "--jobs-dir") << " [--csv FILE]\n"
      << "#SBATCH --job-name=kernbench-sweep\n"
      << "#SBATCH --array=0-" << grid.points.size() - 1 << "\n"
      << "set -eu\n"
      << ": \"${SLURM_ARRAY_TASK_ID:?is not set: submit this script with sbatch (a Slurm array job)}\"\n"
      << "jobs=" << jobs_quoted << "\n"
      << "line=$(sed -n \"$((SLURM_ARRAY_TASK_ID + 1))p\" \"$jobs\")\n"
      << "if [ -z \"$line\" ]; then\n"
      << "  echo \"kernbench sweep: $jobs has no line $((SLURM_ARRAY_TASK_ID + 1))\" >&2\n"
      << "  exit 2\n"
      << "fi\n"
      << "exec sh -c \"$line\"\n";
  fs::create_directories(dir, ec);
  if (ec) throw kb::OutputError("cannot create the point folder '" + dir + "': " + ec.message());
  jobs_out->commit();
  sbatch_out->commit();
  std::cout << count << " jobs written to " << rq.emit_jobs << " (one sh command per line; run them with "
            << "`parallel --will-cite < " << rq.emit_jobs << "`)\n"
            << "Slurm array script written to " << rq.emit_jobs << ".sbatch (--array=0-" << grid.points.size() - 1
            << ")\n"
            << "each point writes " << dir << "/point-INDEX.json; then: kernbench sweep --collect " << dir
            << " [--csv FILE]\n";
  return 0;
}

// --point-json FILE: one point of an emitted sweep, run exactly as the
// local sweep runs it; its cells (or error) written as a point file.
int sweep_point(const SweepRequest& rq, const kb::Bench& bench, const Grid& grid) {
  if (grid.points.size() != 1) {
    throw kb::BenchError("--point-json: expected each --param with the point's one value; got " +
                         std::to_string(grid.points.size()) + " points");
  }
  if (!kb::is_sweep_id(rq.sweep_id)) {
    throw kb::BenchError("--sweep-id '" + shown(rq.sweep_id) + "': expected 16 hex digits (as --emit-jobs writes)");
  }
  if (rq.point_index >= rq.point_count) {
    throw kb::BenchError("--point-index " + std::to_string(rq.point_index) + ": expected less than --point-count " +
                         std::to_string(rq.point_count));
  }
  kb::SweepPoint p;
  p.sweep_id = rq.sweep_id;
  p.bench = bench.name;
  p.index = rq.point_index;
  p.points = rq.point_count;
  for (const Axis& a : grid.axes) {
    require_utf8(a.key, "--param key");
    require_utf8(a.values[0], "--param " + shown(a.key) + " value");
    p.axes.push_back(a.key);
    p.values.push_back(a.values[0]);
  }
  const PreparedPoints pp = prepare_points(bench, rq.config, rq.sets, grid, rq.timeout, true);
  const auto out = open_output(rq.point_json, "sweep point");
  Progress progress(1, false);  // one of many jobs: its runner shows progress
  std::vector<nlohmann::json> figures;
  std::vector<std::string> errors;
  run_points(bench, pp, 1, rq.timeout, progress, figures, errors);
  p.error = errors[0];
  if (p.error.empty()) p.cells = cells_of(figures[0]);
  std::string text;
  try {
    text = kb::sweep_point_json(p).dump(1) + "\n";
  } catch (const nlohmann::json::exception&) {
    throw kb::OutputError("sweep point '" + rq.point_json + "': a figure is not UTF-8 text; JSON cannot hold it");
  }
  out->stream() << text;
  out->commit();
  if (!p.error.empty()) {
    std::cerr << "kernbench: point " << p.index << " (row " << p.index + 1 << " of " << p.points
              << ") failed: " << p.error << " (written to " << rq.point_json << ")\n";
    return kExitRunFailed;
  }
  std::cout << "point " << p.index << " of " << p.points << " written to " << rq.point_json << "\n";
  return 0;
}

// --collect DIR: the table and CSV of a sweep from its point files, as the
// local sweep prints and writes them.
int collect_sweep(const SweepRequest& rq) {
  const std::vector<kb::SweepPoint> points = kb::collect_sweep_points(rq.collect, kMaxSweepPoints);
  const kb::Bench* bench = &kb::BenchRegistry::instance().get(points.front().bench);  // known: checked
  std::vector<std::vector<std::string>> values;
  std::vector<std::vector<std::pair<std::string, std::string>>> cells;
  std::vector<std::string> errors;
  for (const kb::SweepPoint& p : points) {
    values.push_back(p.values);
    cells.push_back(p.cells);
    errors.push_back(p.error);
  }
  const auto csv_out = open_output(rq.csv, "sweep CSV");
  return print_sweep(*bench, points.front().axes, values, cells, errors, csv_out.get(), rq.csv);
}

int cmd_sweep(const SweepRequest& rq) {
  if (!rq.collect.empty()) return collect_sweep(rq);
  auto& registry = kb::BenchRegistry::instance();
  const kb::Bench& bench = registry.get(rq.name);
  const Grid grid = build_grid(rq.axes);
  if (!rq.point_json.empty()) return sweep_point(rq, bench, grid);
  const PreparedPoints pp = prepare_points(bench, rq.config, rq.sets, grid, rq.timeout, rq.emit_jobs.empty());
  if (!rq.emit_jobs.empty()) return emit_jobs(rq, bench, grid);

  const auto csv_out = open_output(rq.csv, "sweep CSV");
  Progress progress(grid.points.size());
  progress.update(0);
  std::vector<nlohmann::json> figures;
  std::vector<std::string> errors;
  run_points(bench, pp, rq.jobs, rq.timeout, progress, figures, errors);
  std::vector<std::vector<std::pair<std::string, std::string>>> cells(grid.points.size());
  for (size_t i = 0; i < grid.points.size(); ++i) {
    if (errors[i].empty()) cells[i] = cells_of(figures[i]);
  }
  std::vector<std::string> header;
  for (const Axis& a : grid.axes) header.push_back(a.key);
  return print_sweep(bench, header, grid.points, cells, errors, csv_out.get(), rq.csv);
}

// Which sweep options go together: --collect takes only
// --csv; --emit-jobs runs nothing, so no -j and no --csv; the point options
// come as the four --emit-jobs writes.
void check_sweep_options(const CLI::App& sweep, const CLI::Option* name, const CLI::Option* jobs, bool data,
                         const SweepRequest& rq) {
  auto given = [&](const char* opt) { return sweep.count(opt) > 0; };
  for (const auto& [opt, path] : {std::pair<const char*, const std::string&>{"--emit-jobs", rq.emit_jobs},
                                  {"--jobs-dir", rq.jobs_dir},
                                  {"--collect", rq.collect},
                                  {"--point-json", rq.point_json}}) {
    if (given(opt) && path.empty()) throw kb::BenchError(std::string(opt) + ": expected a path, got ''");
  }
  const bool point = given("--point-json") || given("--point-index") || given("--point-count") || given("--sweep-id");
  if (given("--collect")) {
    std::string extra;
    if (name->count()) extra = "a bench name";
    for (const char* opt : {"--param", "--config", "--set", "--timeout", "--emit-jobs", "--jobs-dir"}) {
      if (extra.empty() && given(opt)) extra = opt;
    }
    if (extra.empty() && data) extra = "--data";
    if (extra.empty() && jobs->count()) extra = "-j";
    if (extra.empty() && point) extra = "the point options";
    if (!extra.empty()) {
      throw kb::BenchError("sweep --collect takes only --csv: the point files carry their sweep (bench, "
                           "configuration, axes); got " + extra);
    }
    return;
  }
  if (!name->count()) throw kb::BenchError("sweep needs a bench name (see `kernbench list`), or --collect DIR");
  if (given("--jobs-dir") && !given("--emit-jobs")) throw kb::BenchError("--jobs-dir goes with --emit-jobs");
  if (given("--emit-jobs")) {
    if (jobs->count()) {
      throw kb::BenchError("--emit-jobs runs nothing, so -j has nothing to do: give GNU parallel its own -j "
                           "(a Slurm array runs as the scheduler allows)");
    }
    if (given("--csv")) {
      throw kb::BenchError("--emit-jobs writes no CSV: once the points have run, `kernbench sweep --collect DIR "
                           "--csv FILE` writes it");
    }
    if (point) throw kb::BenchError("--emit-jobs does not take the point options; it writes them");
  }
  if (point) {
    if (!(given("--point-json") && given("--point-index") && given("--point-count") && given("--sweep-id"))) {
      throw kb::BenchError("--point-json, --point-index, --point-count and --sweep-id go together: they are "
                           "what --emit-jobs writes in each line");
    }
    if (jobs->count() || given("--csv")) {
      throw kb::BenchError("--point-json runs one point and writes its point file: no -j, no --csv");
    }
  }
}

// --- goldens

int cmd_goldens(bool update, const std::string& dir, int jobs) {
  const auto& benches = kb::BenchRegistry::instance().all();
  // A folder that cannot be read is one error before any run, not a
  // "cannot open" difference per bench. (--update: each golden file is
  // opened below, and an unwritable one is a failed output, exit 1.)
  if (!update) {
    DIR* d = opendir(dir.c_str());
    if (!d) {
      throw kb::BenchError("goldens --dir '" + shown(dir) + "': cannot read the golden folder: " +
                           std::strerror(errno));
    }
    closedir(d);
  }
  // PE benches run in parallel children; system benches fork their own.
  std::vector<kb::RunSpec> specs;
  std::vector<size_t> pe_bench;  // benches[pe_bench[i]] is specs[i]
  for (size_t i = 0; i < benches.size(); ++i) {
    if (benches[i].is_system()) continue;
    pe_bench.push_back(i);
    specs.push_back(kb::golden_spec(benches[i]));
  }
  // --update: every golden file opened before the runs, and none replaced
  // unless every bench ran.
  std::vector<std::unique_ptr<kb::OutputFile>> files;
  for (const kb::Bench& b : benches) {
    files.push_back(update ? open_output(kb::golden_path(dir, b.name), "golden file") : nullptr);
  }
  const auto pe_results = kb::run_many_isolated(specs, jobs);
  std::vector<nlohmann::json> actuals(benches.size());
  std::vector<bool> ok(benches.size(), false);
  int failed = 0;
  for (size_t k = 0; k < pe_bench.size(); ++k) {
    const size_t i = pe_bench[k];
    if (pe_results[k].ok) {
      actuals[i] = kb::golden_figures(benches[i], pe_results[k]);
      ok[i] = true;
    } else {
      std::cerr << "kernbench: bench '" << benches[i].name << "' failed: " << pe_results[k].error << "\n";
      ++failed;
    }
  }
  for (size_t i = 0; i < benches.size(); ++i) {
    if (!benches[i].is_system()) continue;
    try {
      actuals[i] = kb::golden_run(benches[i]);
      ok[i] = true;
    } catch (const std::exception& e) {
      std::cerr << "kernbench: bench '" << benches[i].name << "' failed: " << e.what() << "\n";
      ++failed;
    }
  }
  if (update && failed) {
    std::cerr << "kernbench: no golden file rewritten\n";
    return kExitRunFailed;
  }
  int differing = failed;
  for (size_t i = 0; i < benches.size(); ++i) {
    const nlohmann::json& actual = actuals[i];
    const std::string path = kb::golden_path(dir, benches[i].name);
    if (update) {
      files[i]->stream() << dump(actual);
      files[i]->commit();
      std::cout << "wrote " << path << "\n";
      continue;
    }
    if (!ok[i]) continue;
    std::vector<std::string> diff;
    try {
      diff = kb::golden_diff(kb::read_json_file(path), actual);
    } catch (const kb::BenchError& e) {
      diff = {e.what()};
    }
    std::cout << benches[i].name << ": " << (diff.empty() ? "matches" : "DIFFERS") << " " << path << "\n";
    for (const std::string& d : diff) std::cout << "    " << d << "\n";
    differing += !diff.empty();
  }
  return differing ? kExitRunFailed : 0;
}

}  // namespace

int main(int argc, char** argv) {
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1);
  kb::install_interrupt_handlers();
  kb::register_builtin_benches();

  CLI::App app{
      "kernbench: run kernels on the kernbench-sc SystemC/TLM-2.0 PE model and see where "
      "time goes (PE_CPU dispatch, DMA, GEMM, MATH).\n"
      "Exit status: 0 success; 1 a run failed (kernel error, D7 cap, crash, timeout, golden "
      "mismatch) or an output could not be written; 2 bad input; 128+N ended by signal N "
      "(SIGINT, SIGTERM, SIGHUP: runs are stopped, no output is left half-written)."};
  app.require_subcommand(1);

  std::string config, oplog, json, bench, record, csv, file, golden_dir = kb::kGoldenDir;
  std::vector<std::string> sets, params;
  int jobs = int(std::clamp(sysconf(_SC_NPROCESSORS_ONLN), 1L, long(kb::kMaxJobs)));
  double timeout = 0;
  bool update = false, data = false;
  Outputs outputs;
  auto add_config_options = [&](CLI::App* sub) {
    sub->add_option("--config", config,
                    "topology YAML (default: built-in defaults, identical to configs/pe.yaml)")
        ->check(CLI::ExistingFile);
    sub->add_option("--set", sets,
                    "override one key, e.g. pe.attrs.pe_cost_model.byte_cycles_recip=0.25 "
                    "(repeatable; applied after --config, in order)")
        ->type_name("KEY=VALUE");
    sub->footer(config_keys_help());
  };

  auto add_timeout_option = [&](CLI::App* sub) {
    sub->add_option("--timeout", timeout,
                    "end a run after this many wall-clock seconds: it fails with \"timed out\" (exit 1)")
        ->type_name("SECONDS")
        ->check(timeout_seconds());
  };

  auto add_data_option = [&](CLI::App* sub) {
    sub->add_flag("--data", data,
                  "data mode: memories hold real values, engines compute them and benches check "
                  "their outputs against a C++ reference (same as --set pe.attrs.data_mode=true)");
  };

  CLI::App* list = app.add_subcommand("list", "list the benches and their parameters");

  CLI::App* run = app.add_subcommand(
      "run", "run a bench and print its latency, dispatch and per-engine busy time");
  run->add_option("name", bench, "bench name (see `kernbench list`)")->required();
  add_config_options(run);
  add_data_option(run);
  run->add_option("--param", params, "bench parameter (repeatable; see `kernbench list`)")
      ->type_name("NAME=VALUE");
  run->add_option("--oplog", oplog, "write the op log as CSV (columns: see README)");
  run->add_option("--json", json, "write the run's figures as JSON");
  run->add_option("--record", record,
                  "write the command stream PE_CPU emitted, for `kernbench replay` (format: README)");
  add_output_options(run, outputs);
  add_timeout_option(run);

  SweepRequest sweep_rq;
  CLI::App* sweep = app.add_subcommand(
      "sweep", "run a bench at every point of a grid of configuration keys and bench parameters, here or "
               "as jobs for GNU parallel or a Slurm array (--emit-jobs, then --collect)");
  CLI::Option* sweep_name = sweep->add_option("name", bench, "bench name (see `kernbench list`); not with --collect");
  add_config_options(sweep);
  add_data_option(sweep);
  sweep->add_option("--param", params,
                    "an axis: a configuration key (pe.attrs....) or a bench parameter with its "
                    "values, e.g. pe.attrs.pe_cost_model.byte_cycles_recip=0.25,0.0625 or "
                    "context=1024,4096 (repeatable: the grid is their product, at most 10000 points; "
                    "each key once; at least one)")
      ->type_name("KEY=V1,V2,...");
  sweep->add_option("--csv", csv, "write every figure of every point as CSV (a local sweep, or --collect)");
  CLI::Option* sweep_jobs = sweep->add_option("-j,--jobs", jobs, "runs at once (default: the number of cores)")
                                ->check(whole_number(1, kb::kMaxJobs));
  add_timeout_option(sweep);
  sweep->add_option("--emit-jobs", sweep_rq.emit_jobs,
                    "run nothing: write FILE, one self-contained sh command per point (line INDEX + 1 runs point "
                    "INDEX, from 0), for `parallel < FILE` (GNU parallel, also across hosts with --sshloginfile), "
                    "and FILE.sbatch, a Slurm array script (#SBATCH --array=0-(N-1)) whose task ID runs line "
                    "ID + 1; each point writes DIR/point-INDEX.json. The kernbench binary and --config go into "
                    "the lines as absolute paths. Not with -j or --csv")
      ->type_name("FILE");
  sweep->add_option("--jobs-dir", sweep_rq.jobs_dir,
                    "with --emit-jobs: the folder the points write their files to, created by --emit-jobs "
                    "(default: FILE.points beside FILE); on several hosts, a folder they all share")
      ->type_name("DIR");
  sweep->add_option("--collect", sweep_rq.collect,
                    "merge the point files (point-INDEX.json) of an emitted sweep in DIR into the table and "
                    "--csv the local sweep prints and writes, byte for byte. Every point must be there, once, of "
                    "one sweep; else exit 2 naming the file, nothing written. Takes only --csv")
      ->type_name("DIR");
  const char* kPointGroup = "Point mode (what --emit-jobs writes in each line; not to be typed)";
  sweep->add_option("--point-json", sweep_rq.point_json,
                    "run the one point the --param options give and write its point file to FILE")
      ->type_name("FILE")
      ->group(kPointGroup);
  sweep->add_option("--point-index", sweep_rq.point_index, "the point's index in its sweep, from 0")
      ->check(whole_number<uint64_t>(0, kMaxSweepPoints - 1))
      ->group(kPointGroup);
  sweep->add_option("--point-count", sweep_rq.point_count, "the points in its sweep")
      ->check(whole_number<uint64_t>(1, kMaxSweepPoints))
      ->group(kPointGroup);
  sweep->add_option("--sweep-id", sweep_rq.sweep_id, "the sweep's identity (16 hex digits)")->group(kPointGroup);

  CLI::App* replay = app.add_subcommand(
      "replay", "feed a recorded (or hand-written) command stream through PE_CPU, without kernel code");
  replay->add_option("file", file, "command stream file (format: README)")
      ->required()
      ->check(CLI::ExistingFile);
  add_config_options(replay);
  add_data_option(replay);
  replay->add_option("--oplog", oplog, "write the op log as CSV (columns: see README)");
  replay->add_option("--json", json, "write the run's figures as JSON");
  add_output_options(replay, outputs);
  add_timeout_option(replay);

  CLI::App* conf = app.add_subcommand(
      "config", "print the effective configuration as YAML (after --config and --set)");
  add_config_options(conf);

  CLI::App* goldens = app.add_subcommand(
      "goldens", "compare every bench at its defaults with its golden figures (exit 1 on a "
                 "difference), or regenerate them with --update");
  goldens->add_flag("--update", update, "rewrite the golden files from fresh runs");
  goldens->add_option("--dir", golden_dir,
                      "golden directory (default tests/goldens); one that cannot be read is bad input (exit 2)");
  goldens->add_option("-j,--jobs", jobs, "runs at once (default: the number of cores)")
      ->check(whole_number(1, kb::kMaxJobs));

  kb::PerfOptions perf_options;
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

  // CLI11 takes an unknown first word for a missing subcommand ("A
  // subcommand is required"): name the word and the subcommands instead.
  {
    std::string names;
    bool known = false;
    const std::string first = argc > 1 ? argv[1] : "";
    for (const CLI::App* sub : app.get_subcommands({})) {
      names += (names.empty() ? "" : ", ") + sub->get_name();
      known = known || sub->get_name() == first;
    }
    if (first.empty() || first[0] != '-' || first == "-") {
      if (!known) {
        std::cerr << "kernbench: " << (argc > 1 ? "unknown subcommand '" + shown(first) + "'" : std::string("a subcommand is required"))
                  << "; expected one of: " << names << " (see kernbench --help)\n";
        return kExitBadInput;
      }
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kExitBadInput;
  }
  if (data) sets.push_back("pe.attrs.data_mode=true");
  try {
    if (*list) return cmd_list();
    if (*conf) return cmd_config(config, sets);
    if (*run) return cmd_run(bench, config, sets, params, oplog, json, record, outputs, timeout);
    if (*sweep) {
      check_sweep_options(*sweep, sweep_name, sweep_jobs, data, sweep_rq);
      sweep_rq.name = bench;
      sweep_rq.config = config;
      sweep_rq.sets = sets;
      sweep_rq.axes = params;
      sweep_rq.csv = csv;
      sweep_rq.jobs = jobs;
      sweep_rq.timeout = timeout;
      return cmd_sweep(sweep_rq);
    }
    if (*replay) return cmd_replay(file, config, sets, oplog, json, outputs, timeout);
    if (*goldens) return cmd_goldens(update, golden_dir, jobs);
    if (*perf) return kb::run_perf(perf_options, std::cout);
  } catch (const kb::ConfigError& e) {
    std::cerr << "kernbench: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const kb::BenchError& e) {
    std::cerr << "kernbench: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const kb::StreamError& e) {
    std::cerr << "kernbench: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const kb::OutputError& e) {  // an output of this process (--json, --csv, goldens)
    std::cerr << "kernbench: " << e.what() << "\n";
    return kExitRunFailed;
  } catch (const std::exception& e) {
    std::cerr << "kernbench: " << e.what() << "\n";
    return kExitRunFailed;
  }
  return 0;
}
