// The kernbench subcommands, one file each (tb/cli/<name>.cpp). Each adds
// itself to the app with its options (the order of the adds is the order
// of `kernbench --help`) and returns what runs it once the command line is
// parsed: the exit status, or an exception that main() maps to one.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace kb::cli {

struct Subcommand {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

Subcommand add_list(CLI::App& app);
Subcommand add_run(CLI::App& app);
Subcommand add_sweep(CLI::App& app);
Subcommand add_replay(CLI::App& app);
Subcommand add_config(CLI::App& app);
Subcommand add_goldens(CLI::App& app);
Subcommand add_perf(CLI::App& app);

}  // namespace kb::cli
