// `kernbench goldens`: every bench at its defaults against its golden
// figures, or the golden files rewritten (--update).
#include <dirent.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <memory>

#include "tb/cli/options.h"
#include "tb/cli/subcommands.h"
#include "tb/goldens/goldens.h"

namespace kb::cli {

namespace {

struct GoldensCommand {
  bool update = false;
  std::string dir = kGoldenDir;
  int jobs = default_jobs();
};

int goldens(bool update, const std::string& dir, int jobs) {
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
      std::cerr << "kernbench: bench '" << benches[i].name << "' failed: " << terminal_safe(pe_results[k].error, SIZE_MAX)
                << "\n";
      ++failed;
    }
  }
  for (size_t i = 0; i < benches.size(); ++i) {
    if (!benches[i].is_system()) continue;
    try {
      actuals[i] = kb::golden_run(benches[i]);
      ok[i] = true;
    } catch (const std::exception& e) {
      std::cerr << "kernbench: bench '" << benches[i].name << "' failed: " << terminal_safe(e.what(), SIZE_MAX) << "\n";
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

Subcommand add_goldens(CLI::App& app) {
  auto c = std::make_shared<GoldensCommand>();
  CLI::App* goldens_app = app.add_subcommand(
      "goldens", "compare every bench at its defaults with its golden figures (exit 1 on a "
                 "difference), or regenerate them with --update");
  goldens_app->add_flag("--update", c->update, "rewrite the golden files from fresh runs");
  goldens_app->add_option("--dir", c->dir,
                          "golden directory (default tests/goldens); one that cannot be read is bad input (exit 2)");
  goldens_app->add_option("-j,--jobs", c->jobs, "runs at once (default: the number of cores)")
      ->check(whole_number(1, kMaxJobs));
  return {goldens_app, [c] { return goldens(c->update, c->dir, c->jobs); }};
}

}  // namespace kb::cli
