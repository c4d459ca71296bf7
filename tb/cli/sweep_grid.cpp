#include "tb/cli/sweep_grid.h"

#include <unistd.h>

#include <cstdio>
#include <optional>
#include <set>

#include "models/util/checked.h"
#include "tb/cli/cli_util.h"
#include "tb/run/memory_limit.h"

namespace kb::cli {

namespace {

Axis parse_axis(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    throw kb::BenchError("--param " + shown(text) + ": expected KEY=V1,V2,...");
  }
  Axis a{text.substr(0, eq), {}, text.rfind("pe.", 0) == 0 || text.rfind("topology.", 0) == 0};
  // Every comma separates two values: "1,2," has an empty third one.
  std::set<std::string> seen;
  for (size_t start = eq + 1;;) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string v = text.substr(start, comma - start);
    if (v.empty()) throw kb::BenchError("--param " + shown(text) + ": empty value (a comma at an end, or two together)");
    if (!seen.insert(v).second) {
      throw kb::BenchError("--param " + shown(text) + ": '" + shown(v) +
                           "' is listed twice; expected distinct values (each point once)");
    }
    a.values.push_back(v);
    if (comma == text.size()) break;
    start = comma + 1;
  }
  return a;
}

}  // namespace

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
    for (size_t i = 0; i < axes.size(); ++i) {
      const Axis& a = axes[i];
      if (i < 8) grid += (grid.empty() ? "" : " x ") + shown(a.key) + " (" + std::to_string(a.values.size()) + " values)";
      if (i == 8) grid += " x ... (" + std::to_string(axes.size()) + " axes)";  // one line of a readable length
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
    if (bench.is_system()) {  // runs its own meshes (run_points); its bad input now
      kb::SystemOutputs check;
      check.check_only = true;
      (void)bench.system(pp.params.back(), pp.cfgs.back(), check);
      continue;
    }
    kb::RunSpec spec;
    spec.config = pp.cfgs.back();
    spec.launches = bench.launches(pp.params.back(), pp.cfgs.back());
    spec.timeout_s = timeout;
    if (keep_specs) pp.specs.push_back(std::move(spec));
  }
  return pp;
}

Progress::Progress(size_t total, bool show) : total_(total), tty_(show && isatty(STDERR_FILENO)) {}

void Progress::update(size_t done) {
  if (!tty_) return;
  const double elapsed = seconds();
  const double remaining = done ? elapsed / double(done) * double(total_ - done) : 0.0;
  std::fprintf(stderr, "\r[%zu/%zu] elapsed %.1f s, remaining ~%.1f s   ", done, total_, elapsed,
               remaining);
  if (done == total_) std::fprintf(stderr, "\n");
  std::fflush(stderr);
}

double Progress::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void run_points(const kb::Bench& bench, const PreparedPoints& pp, int jobs, double timeout, uint64_t max_memory,
                Progress& progress,
                std::vector<nlohmann::json>& figures, std::vector<std::string>& errors) {
  const size_t n = pp.params.size();
  figures.assign(n, nlohmann::json());
  errors.assign(n, std::string());
  if (bench.is_system()) {
    for (size_t i = 0; i < n; ++i) {
      try {
        kb::SystemOutputs none;
        none.timeout_s = timeout;
        none.max_memory_bytes = max_memory;
        figures[i] = bench.system(pp.params[i], pp.cfgs[i], none);
      } catch (const kb::SystemRunError& e) {
        errors[i] = e.what();
      } catch (const kb::MemoryLimitError& e) {  // this point cannot fit; the others may
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

}  // namespace kb::cli
