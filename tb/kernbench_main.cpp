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
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>

#include <CLI/CLI.hpp>

#include "models/config/pe_config.h"
#include "models/util/checked.h"
#include "models/util/output_file.h"
#include "models/trace/schema_version.h"
#include "tb/bench_registry.h"
#include "tb/command_stream.h"
#include "tb/goldens.h"
#include "tb/perf.h"
#include "tb/report.h"
#include "tb/runner.h"

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
  kb::TraceWindow trace_window;  // --trace-window (issue 16 item 3)
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
                "in constant memory; leaving it out makes long runs about 15-40% faster)");
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

// A system bench (issue 14): its own mesh runs, its figures, its report.
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
  explicit Progress(size_t total) : total_(total), tty_(isatty(STDERR_FILENO)) {}
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
// bounded before anything of it is (issue 11: 2000 x 2000 points took 3.3 GB
// and died of std::bad_alloc).
constexpr uint64_t kMaxSweepPoints = 10000;

int cmd_sweep(const std::string& name, const std::string& config,
              const std::vector<std::string>& sets, const std::vector<std::string>& axes_text,
              const std::string& csv, int jobs, double timeout) {
  auto& registry = kb::BenchRegistry::instance();
  const kb::Bench& bench = registry.get(name);
  std::vector<Axis> axes;
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

  // Every point of the cartesian product, first axis slowest.
  std::vector<std::vector<std::string>> points{{}};
  for (const Axis& a : axes) {
    std::vector<std::vector<std::string>> next;
    for (const auto& p : points)
      for (const std::string& v : a.values) {
        next.push_back(p);
        next.back().push_back(v);
      }
    points = std::move(next);
  }
  std::vector<kb::RunSpec> specs;
  std::vector<kb::PeConfig> cfgs;
  std::vector<kb::BenchParams> params;
  for (const auto& point : points) {
    std::vector<std::string> point_sets = sets, point_params;
    for (size_t i = 0; i < axes.size(); ++i) {
      (axes[i].config ? point_sets : point_params).push_back(axes[i].key + "=" + point[i]);
    }
    // The config file is read again only when a point changes a key.
    const bool config_axis = point_sets.size() > sets.size();
    cfgs.push_back(config_axis || cfgs.empty() ? kb::load_pe_config(config, point_sets) : cfgs.back());
    params.push_back(registry.params(bench, point_params));
    if (bench.is_system()) continue;  // runs its own meshes, below
    kb::RunSpec spec;
    spec.config = cfgs.back();
    spec.launches = bench.launches(params.back(), cfgs.back());
    spec.timeout_s = timeout;
    specs.push_back(std::move(spec));
  }
  const auto csv_out = open_output(csv, "sweep CSV");
  Progress progress(points.size());
  progress.update(0);
  // Each point's figures, or its error.
  std::vector<nlohmann::json> figures(points.size());
  std::vector<std::string> errors(points.size());
  if (bench.is_system()) {
    for (size_t i = 0; i < points.size(); ++i) {
      try {
        kb::SystemOutputs none;
        none.timeout_s = timeout;
        figures[i] = bench.system(params[i], cfgs[i], none);
      } catch (const kb::SystemRunError& e) {
        errors[i] = e.what();
      }
      progress.update(i + 1);
    }
  } else {
    const auto results = kb::run_many_isolated(specs, jobs, [&](size_t d, size_t) { progress.update(d); });
    for (size_t i = 0; i < results.size(); ++i) {
      if (results[i].ok) figures[i] = kb::bench_figures(bench, params[i], cfgs[i], results[i]);
      else errors[i] = results[i].error.empty() ? "failed" : results[i].error;
    }
  }

  std::vector<std::string> header;
  for (const Axis& a : axes) header.push_back(a.key);
  std::vector<std::vector<std::string>> csv_rows;
  std::vector<std::string> csv_header = header;
  int failures = 0;
  // Figures can differ between points (keyed by a swept parameter, such as
  // a size): the columns are every figure of any point, in order of first
  // appearance, and a point without one leaves its cell empty.
  std::vector<std::map<std::string, std::string>> cells(points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    std::vector<std::pair<std::string, nlohmann::json>> leaves;
    if (errors[i].empty()) {
      flatten(figures[i], "", leaves);
    } else {
      ++failures;
      std::cerr << "kernbench: point " << i + 1 << " failed: " << errors[i] << "\n";
    }
    for (const auto& [k, v] : leaves) {
      if (std::find(csv_header.begin() + long(header.size()), csv_header.end(), k) == csv_header.end()) {
        csv_header.push_back(k);
      }
      cells[i][k] = cell(v);
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

  CLI::App* sweep = app.add_subcommand(
      "sweep", "run a bench at every point of a grid of configuration keys and bench parameters");
  sweep->add_option("name", bench, "bench name (see `kernbench list`)")->required();
  add_config_options(sweep);
  add_data_option(sweep);
  sweep->add_option("--param", params,
                    "an axis: a configuration key (pe.attrs....) or a bench parameter with its "
                    "values, e.g. pe.attrs.pe_cost_model.byte_cycles_recip=0.25,0.0625 or "
                    "context=1024,4096 (repeatable: the grid is their product, at most 10000 points; "
                    "each key once)")
      ->type_name("KEY=V1,V2,...")
      ->required();
  sweep->add_option("--csv", csv, "write every figure of every point as CSV");
  sweep->add_option("-j,--jobs", jobs, "runs at once (default: the number of cores)")
      ->check(whole_number(1, kb::kMaxJobs));
  add_timeout_option(sweep);

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
    if (*sweep) return cmd_sweep(bench, config, sets, params, csv, jobs, timeout);
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
