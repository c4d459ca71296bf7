// Human-readable and JSON reports of a run.
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "models/config/pe_config.h"
#include "tb/run/runner.h"

namespace kb {

// One number through a printf format for one double ("%8.2f"): the
// figure of a table cell.
std::string fmt(const char* printf_format, double v);

// Generic figures of one launch: latency, dispatch totals, stall, per-
// component utilisation, the bottleneck verdict and the kernel's metrics.
nlohmann::json launch_figures(const LaunchResult& l, const PeConfig& cfg);
// The busiest component of a launch and whether that makes it CPU-bound.
std::string bottleneck(const LaunchResult& l);

// Latency, dispatch totals, stall time and per-engine busy time/utilisation,
// then print_stats_summary().
void print_run_report(std::ostream& os, const std::string& title, const PeConfig& cfg,
                      const RunResult& r);
// The same figures as JSON (times in ns, exact cycles as numbers), plus
// "stats": the statistics of models/trace/stats.h (times in ps).
nlohmann::json run_summary_json(const std::string& bench, const PeConfig& cfg, const RunResult& r);
// Writes run_summary_json (with "figures" unless null) as dump(2) would,
// a launch at a time: memory does not grow with the number of launches.
void write_run_summary_json(std::ostream& os, const std::string& bench, const PeConfig& cfg,
                            const RunResult& r, const nlohmann::json& figures);

// The short statistics summary for a bench table: one line per launch with
// span, PE_CPU busy / stalled / exposed-dispatch fractions, the busiest
// engine's fraction, the time the queue was full and the verdict
// (models/trace/stats.h, kVerdictRule).
void print_stats_table(std::ostream& os, const RunStats& s);
// Per launch: the verdict with its fractions, per-component utilisation,
// PE_CPU dispatch / stall, queue occupancy, and command counts and logical
// bytes by type.
void print_stats_summary(std::ostream& os, const RunStats& s);

}  // namespace kb
