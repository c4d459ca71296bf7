// `kernbench sweep` and the sweep engine's entry: a local sweep, --emit-jobs,
// --point-json and --collect (tb/cli/sweep.h).
#include "tb/cli/sweep.h"

#include <charconv>
#include <filesystem>
#include <iostream>
#include <memory>

#include "tb/cli/cli_util.h"
#include "tb/cli/options.h"
#include "tb/cli/subcommands.h"
#include "tb/cli/sweep_grid.h"
#include "tb/cli/sweep_jobs.h"
#include "tb/cli/sweep_table.h"

namespace kb::cli {

namespace {

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
  // sweep.json (JSON text) holds these as they are: the id is made of their bytes.
  require_utf8(config, "--config (as an absolute path)");
  for (const std::string& set : rq.sets) require_utf8(set, "--set");

  // The identity of the sweep: everything its lines carry but the index,
  // written beside the points for --collect to check them against.
  kb::SweepManifest manifest;
  manifest.bench = bench.name;
  manifest.config = config;
  manifest.timeout = timeout;
  manifest.sets = rq.sets;
  for (const Axis& a : grid.axes) manifest.axes.emplace_back(a.key, a.values);
  const std::string id = manifest.id();
  const std::string manifest_path = dir + "/" + kb::kSweepManifestName;
  check_distinct_paths({{"--emit-jobs", rq.emit_jobs},
                        {"--emit-jobs's Slurm script", rq.emit_jobs + ".sbatch"},
                        {"--jobs-dir", dir},
                        {std::string("--jobs-dir's ") + kb::kSweepManifestName, manifest_path}});
  // Nor may the jobs file be one the points write or collect reads.
  for (const std::string& written : {jobs_file, jobs_file + ".sbatch"}) {
    const fs::path w(written);
    const std::string name = w.filename().string();
    const bool point_like = name == kb::kSweepManifestName || (name.rfind("point-", 0) == 0 && w.extension() == ".json");
    if (point_like && fs::weakly_canonical(w.parent_path(), ec) == fs::weakly_canonical(dir, ec)) {
      throw kb::BenchError("--emit-jobs '" + shown(rq.emit_jobs) + "' is in --jobs-dir '" + shown(dir) + "' under a name " +
                           "the points write or --collect reads (point-INDEX.json, sweep.json); give it another");
    }
  }

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
      << "# kernbench sweep of " << count << " points as a Slurm array (docs/cli.md, Sweeps on many machines): task ID runs\n"
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
  const auto manifest_out = open_output(manifest_path, "sweep grid");
  manifest_out->stream() << sweep_manifest_json(manifest).dump(1) << "\n";
  manifest_out->commit();
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
  run_points(bench, pp, 1, rq.timeout, rq.max_memory, progress, figures, errors);
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
              << ") failed: " << terminal_safe(p.error) << " (written to " << rq.point_json << ")\n";
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
  // The CSV must not overwrite what it is made from.
  const std::string manifest = rq.collect + "/" + kb::kSweepManifestName;
  check_distinct_paths({{"--csv", rq.csv}, {std::string("--collect's ") + kb::kSweepManifestName, manifest, false}});
  for (const kb::SweepPoint& p : points) check_distinct_paths({{"--csv", rq.csv}, {"--collect's point file", p.path, false}});
  const auto csv_out = open_output(rq.csv, "sweep CSV");
  return print_sweep(*bench, points.front().axes, values, cells, errors, csv_out.get(), rq.csv);
}

}  // namespace

int run_sweep(const SweepRequest& rq) {
  check_distinct_paths({{"--config", rq.config, false},
                        {"--csv", rq.csv},
                        {"--emit-jobs", rq.emit_jobs},
                        {"--emit-jobs's Slurm script", rq.emit_jobs.empty() ? "" : rq.emit_jobs + ".sbatch"},
                        {"--point-json", rq.point_json}});
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
  run_points(bench, pp, rq.jobs, rq.timeout, rq.max_memory, progress, figures, errors);
  std::vector<std::vector<std::pair<std::string, std::string>>> cells(grid.points.size());
  for (size_t i = 0; i < grid.points.size(); ++i) {
    if (errors[i].empty()) cells[i] = cells_of(figures[i]);
  }
  std::vector<std::string> header;
  for (const Axis& a : grid.axes) header.push_back(a.key);
  return print_sweep(bench, header, grid.points, cells, errors, csv_out.get(), rq.csv);
}

namespace {

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

struct SweepCommand {
  SweepRequest rq;
  ConfigOptions config;
  CLI::App* app = nullptr;
  CLI::Option* name = nullptr;
  CLI::Option* jobs = nullptr;
};

}  // namespace

Subcommand add_sweep(CLI::App& app) {
  auto c = std::make_shared<SweepCommand>();
  SweepRequest& sweep_rq = c->rq;
  sweep_rq.jobs = default_jobs();
  CLI::App* sweep = c->app = app.add_subcommand(
      "sweep", "run a bench at every point of a grid of configuration keys and bench parameters, here or "
               "as jobs for GNU parallel or a Slurm array (--emit-jobs, then --collect)");
  c->name = sweep->add_option("name", sweep_rq.name, "bench name (see `kernbench list`); not with --collect");
  add_config_options(sweep, c->config);
  add_data_option(sweep, c->config);
  sweep->add_option("--param", sweep_rq.axes,
                    "an axis: a configuration key (pe.attrs....) or a bench parameter with its "
                    "values, e.g. pe.attrs.pe_cost_model.byte_cycles_recip=0.25,0.0625 or "
                    "context=1024,4096 (repeatable: the grid is their product, at most 10000 points; "
                    "each key once; at least one)")
      ->type_name("KEY=V1,V2,...");
  sweep->add_option("--csv", sweep_rq.csv, "write every figure of every point as CSV (a local sweep, or --collect)");
  c->jobs = sweep->add_option("-j,--jobs", sweep_rq.jobs, "runs at once (default: the number of cores)")
                ->check(whole_number(1, kb::kMaxJobs));
  add_timeout_option(sweep, sweep_rq.timeout);
  add_max_memory_option(sweep, sweep_rq.max_memory);
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
  return {sweep, [c] {
            check_sweep_options(*c->app, c->name, c->jobs, c->config.data, c->rq);
            SweepRequest rq = c->rq;
            rq.config = c->config.config;
            rq.sets = c->config.all_sets();
            return run_sweep(rq);
          }};
}

}  // namespace kb::cli
