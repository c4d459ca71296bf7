// Human-readable and JSON reports of a run.
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "models/config/pe_config.h"
#include "tb/runner.h"

namespace kb {

// Latency, dispatch totals, stall time and per-engine busy time/utilisation.
void print_run_report(std::ostream& os, const std::string& title, const PeConfig& cfg,
                      const RunResult& r);
// The same figures as JSON (times in ns, exact cycles as numbers).
nlohmann::json run_summary_json(const std::string& bench, const PeConfig& cfg, const RunResult& r);

}  // namespace kb
