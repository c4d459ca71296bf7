// A sweep's table on stdout and its CSV: every figure of a point as a CSV
// cell, and the table of every point's cells or error. The same for a local
// sweep and for --collect (tb/cli/sweep_jobs.h), byte for byte.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/util/output_file.h"
#include "tb/benches/bench_registry.h"

namespace kb::cli {

// A point's figures as the CSV's (key, cell) pairs, in document order:
// the leaves as dotted keys; floating-point figures in their shortest form
// that reads back as the same double (std::to_chars), text quoted when it
// holds a comma, a quote or a line break (RFC 4180).
std::vector<std::pair<std::string, std::string>> cells_of(const nlohmann::json& figures);

// The table and (csv_out not null) the CSV of every point's cells or error
// (errors[i] not empty). Exit status 1 when a point failed.
int print_sweep(const Bench& bench, const std::vector<std::string>& header,
                const std::vector<std::vector<std::string>>& points,
                const std::vector<std::vector<std::pair<std::string, std::string>>>& point_cells,
                const std::vector<std::string>& errors, OutputFile* csv_out, const std::string& csv);

}  // namespace kb::cli
