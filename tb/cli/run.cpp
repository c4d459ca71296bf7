// `kernbench run`: one bench, its report, its outputs.
#include <iostream>
#include <memory>

#include "models/trace/schema_version.h"
#include "tb/cli/options.h"
#include "tb/cli/run_output.h"
#include "tb/cli/subcommands.h"

namespace kb::cli {

namespace {

struct RunCommand {
  std::string bench;
  ConfigOptions config;
  std::vector<std::string> params;
  std::string oplog, json, record;
  Outputs outputs;
  double timeout = 0;
  uint64_t max_memory = 0;
};

// A system bench: its own mesh runs, its figures, its report.
int run_system(const Bench& bench, const BenchParams& p, const PeConfig& cfg, const RunCommand& c) {
  if (!c.record.empty()) {
    throw BenchError("--record: bench '" + bench.name + "' runs meshes; only PE benches record a command stream");
  }
  const auto json_out = open_output(c.json, "JSON summary");
  nlohmann::json figures;
  try {
    figures = bench.system(p, cfg,
                           SystemOutputs{c.oplog, c.outputs.trace, c.outputs.vcd, c.outputs.stats, c.timeout,
                                         c.outputs.trace_window, c.max_memory});
  } catch (const SystemRunError& e) {
    std::cerr << "kernbench: run '" << bench.name << "' failed: " << terminal_safe(e.what(), SIZE_MAX) << "\n";
    return kExitRunFailed;
  }
  bench.system_report(std::cout, p, cfg, figures);
  print_written(c.oplog, c.outputs);
  if (json_out) {
    nlohmann::json j;
    j["schema_version"] = kSchemaVersion;
    j["bench"] = bench.name;
    j["clock_freq_ghz"] = cfg.clock_freq_ghz;
    j["figures"] = figures;
    json_out->stream() << j.dump(2) << "\n";
    json_out->commit();
  }
  return 0;
}

int run(const RunCommand& c) {
  std::vector<PathUse> paths = {{"--config", c.config.config, false}, {"--oplog", c.oplog}, {"--json", c.json},
                                {"--record", c.record}};
  for (const PathUse& u : c.outputs.uses()) paths.push_back(u);
  check_distinct_paths(paths);
  const PeConfig cfg = load_pe_config(c.config.config, c.config.all_sets());
  auto& registry = BenchRegistry::instance();
  const Bench& bench = registry.get(c.bench);
  const BenchParams p = registry.params(bench, c.params);
  if (bench.is_system()) return run_system(bench, p, cfg, c);
  RunSpec spec;
  spec.config = cfg;
  spec.launches = bench.launches(p, cfg);
  spec.oplog_path = c.oplog;
  spec.record_path = c.record;
  spec.timeout_s = c.timeout;
  c.outputs.apply(spec);
  const auto json_out = open_output(c.json, "JSON summary");
  const int rc = report_run("run '" + c.bench + "'", c.bench, run_isolated(spec), cfg, &bench, &p, c.oplog,
                            json_out.get(), c.outputs);
  if (rc == 0 && !c.record.empty()) std::cout << "command stream written to " << c.record << "\n";
  return rc;
}

}  // namespace

Subcommand add_run(CLI::App& app) {
  auto c = std::make_shared<RunCommand>();
  CLI::App* run_app = app.add_subcommand(
      "run", "run a bench and print its latency, dispatch and per-engine busy time");
  run_app->add_option("name", c->bench, "bench name (see `kernbench list`)")->required();
  add_config_options(run_app, c->config);
  add_data_option(run_app, c->config);
  run_app->add_option("--param", c->params, "bench parameter (repeatable; see `kernbench list`)")
      ->type_name("NAME=VALUE");
  run_app->add_option("--oplog", c->oplog, "write the op log as CSV (columns: see README)");
  run_app->add_option("--json", c->json, "write the run's figures as JSON");
  run_app->add_option("--record", c->record,
                      "write the command stream PE_CPU emitted, for `kernbench replay` (format: README)");
  add_output_options(run_app, c->outputs);
  add_timeout_option(run_app, c->timeout);
  add_max_memory_option(run_app, c->max_memory);
  return {run_app, [c] { return run(*c); }};
}

}  // namespace kb::cli
