// kernbench: run benches on the PE model, sweep them over configuration keys
// and bench parameters, record and replay command streams, check goldens,
// print the effective configuration. One file per subcommand
// (tb/cli/subcommands.h); here the app, the parse and the exit statuses.
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "models/config/pe_config.h"
#include "models/util/output_file.h"
#include "tb/benches/bench_registry.h"
#include "tb/cli/cli_util.h"
#include "tb/cli/subcommands.h"
#include "tb/replay/command_stream.h"
#include "tb/run/child_signals.h"
#include "tb/run/memory_limit.h"

// libsystemc.so references sc_main; kernbench drives SystemC from main().
int sc_main(int, char**) { return 0; }

int main(int argc, char** argv) {
  using namespace kb::cli;
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
  // CLI11's messages quote the arguments: their first line escaped as every
  // other error is (tb/cli/cli_util.h), the "Run with --help" hint kept.
  app.failure_message([](const CLI::App* a, const CLI::Error& e) {
    const std::string text = CLI::FailureMessage::simple(a, e);
    const size_t first = text.find('\n');
    return first == std::string::npos ? terminal_safe(text) : terminal_safe(text.substr(0, first)) + text.substr(first);
  });
  const std::vector<Subcommand> subcommands = {add_list(app),   add_run(app),     add_sweep(app), add_replay(app),
                                               add_config(app), add_goldens(app), add_perf(app)};

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
  // Every message is one line a terminal shows as text: an input's bytes in
  // it (a --param value, a file's key) are escaped (tb/cli/cli_util.h).
  try {
    for (const Subcommand& s : subcommands) {
      if (*s.app) return s.run();
    }
  } catch (const kb::ConfigError& e) {
    std::cerr << "kernbench: " << terminal_safe(e.what()) << "\n";
    return kExitBadInput;
  } catch (const kb::BenchError& e) {
    std::cerr << "kernbench: " << terminal_safe(e.what()) << "\n";
    return kExitBadInput;
  } catch (const kb::StreamError& e) {
    std::cerr << "kernbench: " << terminal_safe(e.what()) << "\n";
    return kExitBadInput;
  } catch (const kb::cli::PathClash& e) {
    std::cerr << "kernbench: " << terminal_safe(e.what()) << "\n";
    return kExitBadInput;
  } catch (const kb::MemoryLimitError& e) {  // refused before it ran (tb/run/memory_limit.h)
    std::cerr << "kernbench: " << terminal_safe(e.what()) << "\n";
    return kExitBadInput;
  } catch (const kb::OutputError& e) {  // an output of this process (--json, --csv, goldens)
    std::cerr << "kernbench: " << terminal_safe(e.what()) << "\n";
    return kExitRunFailed;
  } catch (const std::exception& e) {
    std::cerr << "kernbench: " << terminal_safe(e.what()) << "\n";
    return kExitRunFailed;
  }
  return 0;
}
