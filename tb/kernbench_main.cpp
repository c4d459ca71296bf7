// kernbench: run benches on the PE model, print the effective configuration.
#include <cstdlib>
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>

#include "models/config/pe_config.h"
#include "models/trace/op_log.h"
#include "tb/bench_registry.h"
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

int cmd_run(const std::string& name, const std::string& config,
            const std::vector<std::string>& sets, const std::vector<std::string>& params,
            const std::string& oplog, const std::string& json) {
  const kb::PeConfig cfg = kb::load_pe_config(config, sets);
  auto& registry = kb::BenchRegistry::instance();
  const kb::Bench& bench = registry.get(name);
  kb::RunSpec spec;
  spec.config = cfg;
  spec.launches = bench.launches(registry.params(bench, params), cfg);
  spec.oplog_path = oplog;
  const kb::RunResult r = kb::run_isolated(spec);
  if (!r.ok) {
    std::cerr << "kernbench: run '" << name << "' failed: " << r.error << "\n";
    return kExitRunFailed;
  }
  kb::print_run_report(std::cout, "bench " + name, cfg, r);
  if (!oplog.empty()) std::cout << "op log written to " << oplog << "\n";
  if (!json.empty()) {
    std::ofstream out(json);
    out << kb::run_summary_json(name, cfg, r).dump(2) << "\n";
    if (!out) {
      std::cerr << "kernbench: cannot write '" << json << "'\n";
      return kExitBadInput;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1);
  kb::register_builtin_benches();

  CLI::App app{
      "kernbench: run kernels on the kernbench-sc SystemC/TLM-2.0 PE model and see where "
      "time goes (PE_CPU dispatch, DMA, GEMM, MATH).\n"
      "Exit status: 0 success, 1 the run failed (kernel error, D7 cap, crash), 2 bad input."};
  app.require_subcommand(1);

  std::string config;
  std::vector<std::string> sets, params;
  std::string oplog, json, bench;
  auto add_config_options = [&](CLI::App* sub) {
    sub->add_option("--config", config,
                    "topology YAML (default: built-in defaults, identical to configs/pe.yaml)")
        ->check(CLI::ExistingFile);
    sub->add_option("--set", sets,
                    "override one key, e.g. pe.attrs.pe_cost_model.byte_cycles_recip=0.25 "
                    "(repeatable; applied after --config, in order)")
        ->type_name("KEY=VALUE");
  };

  CLI::App* list = app.add_subcommand("list", "list the benches and their parameters");
  CLI::App* run = app.add_subcommand("run", "run a bench and print its latency, dispatch and "
                                            "per-engine busy time");
  run->add_option("name", bench, "bench name (see `kernbench list`)")->required();
  add_config_options(run);
  run->add_option("--param", params, "bench parameter (repeatable; see `kernbench list`)")
      ->type_name("NAME=VALUE");
  run->add_option("--oplog", oplog, "write the op log as CSV (columns: see README)");
  run->add_option("--json", json, "write the run's figures as JSON");
  run->footer(config_keys_help());
  CLI::App* conf = app.add_subcommand(
      "config", "print the effective configuration as YAML (after --config and --set)");
  add_config_options(conf);
  conf->footer(config_keys_help());

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kExitBadInput;
  }
  try {
    if (*list) return cmd_list();
    if (*conf) return cmd_config(config, sets);
    if (*run) return cmd_run(bench, config, sets, params, oplog, json);
  } catch (const kb::ConfigError& e) {
    std::cerr << "kernbench: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const kb::BenchError& e) {
    std::cerr << "kernbench: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "kernbench: " << e.what() << "\n";
    return kExitRunFailed;
  }
  return 0;
}
