// `kernbench config`: the effective configuration as YAML.
#include <iostream>
#include <memory>

#include "models/config/pe_config.h"
#include "tb/cli/options.h"
#include "tb/cli/subcommands.h"

namespace kb::cli {

Subcommand add_config(CLI::App& app) {
  auto o = std::make_shared<ConfigOptions>();
  CLI::App* conf = app.add_subcommand(
      "config", "print the effective configuration as YAML (after --config and --set)");
  add_config_options(conf, *o);
  return {conf, [o] {
            std::cout << dump_pe_config_yaml(load_pe_config(o->config, o->all_sets()));
            return 0;
          }};
}

}  // namespace kb::cli
