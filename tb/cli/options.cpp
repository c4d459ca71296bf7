#include "tb/cli/options.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "models/config/pe_config.h"
#include "tb/cli/cli_util.h"
#include "tb/run/child_signals.h"  // kMaxJobs
#include "tb/run/memory_limit.h"

namespace kb::cli {

namespace {

std::string config_keys_help() {
  std::string s = "Configuration keys (--set KEY=VALUE):\n";
  for (const ConfigKeyInfo& k : pe_config_keys()) {
    s += "  " + k.key + " (" + k.type + ", default " + k.default_value + "): " + k.doc + "\n";
  }
  return s;
}

constexpr double kMaxTimeoutSeconds = 7 * 24 * 3600;

CLI::Validator timeout_seconds() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        char* end = nullptr;
        errno = 0;
        const double v = s.empty() ? 0 : std::strtod(s.c_str(), &end);
        if (!s.empty() && errno == 0 && *end == '\0' && std::isfinite(v) && v > 0 && v <= kMaxTimeoutSeconds) {
          return "";
        }
        return "expected seconds, more than 0 and at most " + std::to_string(int(kMaxTimeoutSeconds)) +
               " (a week), got '" + shown(s) + "'";
      },
      "", "timeout_seconds");
}

}  // namespace

std::vector<std::string> ConfigOptions::all_sets() const {
  std::vector<std::string> out = sets;
  if (data) out.push_back("pe.attrs.data_mode=true");
  return out;
}

void add_config_options(CLI::App* sub, ConfigOptions& o) {
  sub->add_option("--config", o.config,
                  "topology YAML (default: built-in defaults, identical to configs/pe.yaml)")
      ->check(CLI::ExistingFile);
  sub->add_option("--set", o.sets,
                  "override one key, e.g. pe.attrs.pe_cost_model.byte_cycles_recip=0.25 "
                  "(repeatable; applied after --config, in order)")
      ->type_name("KEY=VALUE");
  sub->footer(config_keys_help());
}

void add_data_option(CLI::App* sub, ConfigOptions& o) {
  sub->add_flag("--data", o.data,
                "data mode: memories hold real values, engines compute them and benches check "
                "their outputs against a C++ reference (same as --set pe.attrs.data_mode=true)");
}

void add_timeout_option(CLI::App* sub, double& timeout) {
  sub->add_option("--timeout", timeout,
                  "end a run after this many wall-clock seconds: it fails with \"timed out\" (exit 1)")
      ->type_name("SECONDS")
      ->check(timeout_seconds());
}

void add_max_memory_option(CLI::App* sub, uint64_t& bytes) {
  sub->add_option_function<std::string>(
         "--max-memory",
         [&bytes](const std::string& s) { bytes = parse_memory_size(s); },
         "the memory a mesh run may use, e.g. 4GiB (units B, KiB, MiB, GiB, TiB): a mesh whose estimate is "
         "larger is refused before it is built (exit 2), and data mode's storage stops there (exit 1); default: "
         "what the machine has (MemAvailable, the cgroup's memory.max); docs/cli.md, \"Memory limits\"")
      ->type_name("SIZE")
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            try {
              parse_memory_size(s);
              return "";
            } catch (const std::invalid_argument& e) {
              return std::string(e.what()) + ", got '" + shown(s) + "'";
            }
          },
          "", "memory_size"));
}

int default_jobs() { return int(std::clamp(sysconf(_SC_NPROCESSORS_ONLN), 1L, long(kMaxJobs))); }

}  // namespace kb::cli
