// `kernbench list`: the benches and their parameters.
#include <iostream>

#include "tb/benches/bench_registry.h"
#include "tb/cli/subcommands.h"

namespace kb::cli {

Subcommand add_list(CLI::App& app) {
  CLI::App* list = app.add_subcommand("list", "list the benches and their parameters");
  return {list, [] {
            for (const Bench& b : BenchRegistry::instance().all()) {
              std::cout << b.name << "  " << b.description << "\n";
              for (const BenchParam& p : b.params) {
                std::cout << "    --param " << p.name << "=" << p.default_value << "  " << p.doc << "\n";
              }
            }
            return 0;
          }};
}

}  // namespace kb::cli
