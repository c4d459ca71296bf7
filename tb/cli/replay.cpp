// `kernbench replay`: a recorded or hand-written command stream through
// PE_CPU, without kernel code.
#include <memory>

#include "tb/cli/options.h"
#include "tb/cli/run_output.h"
#include "tb/cli/subcommands.h"
#include "tb/replay/command_stream.h"

namespace kb::cli {

namespace {

struct ReplayCommand {
  std::string file;
  ConfigOptions config;
  std::string oplog, json;
  Outputs outputs;
  double timeout = 0;
};

int replay(const ReplayCommand& c) {
  std::vector<PathUse> paths = {{"the stream", c.file, false}, {"--config", c.config.config, false},
                                {"--oplog", c.oplog}, {"--json", c.json}};
  for (const PathUse& u : c.outputs.uses()) paths.push_back(u);
  check_distinct_paths(paths);
  const PeConfig cfg = load_pe_config(c.config.config, c.config.all_sets());
  RunSpec spec;
  spec.config = cfg;
  spec.launches = load_command_stream(c.file);  // parse errors before simulating
  spec.oplog_path = c.oplog;
  spec.timeout_s = c.timeout;
  c.outputs.apply(spec);
  const auto json_out = open_output(c.json, "JSON summary");
  return report_run("replay '" + c.file + "'", c.file, run_isolated(spec), cfg, nullptr, nullptr, c.oplog,
                    json_out.get(), c.outputs);
}

}  // namespace

Subcommand add_replay(CLI::App& app) {
  auto c = std::make_shared<ReplayCommand>();
  CLI::App* replay_app = app.add_subcommand(
      "replay", "feed a recorded (or hand-written) command stream through PE_CPU, without kernel code");
  replay_app->add_option("file", c->file, "command stream file (format: README)")
      ->required()
      ->check(CLI::ExistingFile);
  add_config_options(replay_app, c->config);
  add_data_option(replay_app, c->config);
  replay_app->add_option("--oplog", c->oplog, "write the op log as CSV (columns: see README)");
  replay_app->add_option("--json", c->json, "write the run's figures as JSON");
  add_output_options(replay_app, c->outputs);
  add_timeout_option(replay_app, c->timeout);
  return {replay_app, [c] { return replay(*c); }};
}

}  // namespace kb::cli
