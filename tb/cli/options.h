// The options that several kernbench subcommands take, and the checks of
// their values (CLI11 validators whose messages say what is expected).
#pragma once

#include <charconv>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "tb/cli/cli_util.h"

namespace kb::cli {

// Whole-number options. CLI11's own range check prints the type's limits
// (a 309-digit number), so the message says what is expected instead.
template <typename T>
CLI::Validator whole_number(T lo, T hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        T v{};
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec == std::errc() && end == s.data() + s.size() && v >= lo && v <= hi) return "";
        return "expected a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) + ", got '" +
               shown(s) + "'";
      },
      "", "whole_number");
}

// --config, --set and --data: the run's configuration.
struct ConfigOptions {
  std::string config;
  std::vector<std::string> sets;
  bool data = false;
  // The --set values, then --data's (pe.attrs.data_mode=true).
  std::vector<std::string> all_sets() const;
};
// --config and --set, with every configuration key in the help's footer.
void add_config_options(CLI::App* sub, ConfigOptions& o);
void add_data_option(CLI::App* sub, ConfigOptions& o);
// --timeout SECONDS: a wall-clock limit per run.
void add_timeout_option(CLI::App* sub, double& timeout);
// --max-memory SIZE: the memory a mesh run may use (tb/run/memory_limit.h).
void add_max_memory_option(CLI::App* sub, uint64_t& bytes);

// -j's default: the number of cores, within 1 .. kMaxJobs.
int default_jobs();

}  // namespace kb::cli
