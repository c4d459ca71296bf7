#include "tb/cli/sweep_table.h"

#include <algorithm>
#include <charconv>
#include <iomanip>
#include <iostream>
#include <map>

#include "tb/cli/cli_util.h"

namespace kb::cli {

namespace {

// Leaves of a figures document as dotted keys, in document order.
void flatten(const nlohmann::json& j, const std::string& prefix,
             std::vector<std::pair<std::string, nlohmann::json>>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) flatten(v, prefix.empty() ? k : prefix + "." + k, out);
  } else {
    out.emplace_back(prefix, j);
  }
}

// A CSV field. Floating-point figures in their shortest form that reads
// back as the same double (std::to_chars), so the CSV holds every figure
// exactly; text quoted when it holds a comma, a quote or a line break (RFC 4180).
std::string cell(const nlohmann::json& v) {
  if (v.is_null()) return "";  // a figure that does not apply (docs/observability.md)
  if (v.is_number_float()) {
    char buf[64];
    const auto res = std::to_chars(buf, buf + sizeof buf, v.get<double>());
    return std::string(buf, res.ptr);
  }
  const std::string text =
      v.is_string() ? v.get<std::string>() : v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace

std::vector<std::pair<std::string, std::string>> cells_of(const nlohmann::json& figures) {
  std::vector<std::pair<std::string, nlohmann::json>> leaves;
  flatten(figures, "", leaves);
  std::vector<std::pair<std::string, std::string>> cells;
  for (const auto& [k, v] : leaves) cells.emplace_back(k, cell(v));
  return cells;
}

int print_sweep(const Bench& bench, const std::vector<std::string>& header,
                const std::vector<std::vector<std::string>>& points,
                const std::vector<std::vector<std::pair<std::string, std::string>>>& point_cells,
                const std::vector<std::string>& errors, OutputFile* csv_out, const std::string& csv) {
  std::vector<std::vector<std::string>> csv_rows;
  std::vector<std::string> csv_header = header;
  int failures = 0;
  // Figures can differ between points (keyed by a swept parameter, such as
  // a size): the columns are every figure of any point, in order of first
  // appearance, and a point without one leaves its cell empty.
  std::vector<std::map<std::string, std::string>> cells(points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    if (!errors[i].empty()) {
      ++failures;
      std::cerr << "kernbench: point " << i + 1 << " failed: " << terminal_safe(errors[i]) << "\n";
      continue;
    }
    for (const auto& [k, v] : point_cells[i]) {
      if (std::find(csv_header.begin() + long(header.size()), csv_header.end(), k) == csv_header.end()) {
        csv_header.push_back(k);
      }
      cells[i][k] = v;
    }
  }
  for (size_t i = 0; i < points.size(); ++i) {
    std::vector<std::string> full = points[i];
    if (errors[i].empty()) {
      for (size_t c = header.size(); c < csv_header.size(); ++c) {
        auto it = cells[i].find(csv_header[c]);
        full.push_back(it == cells[i].end() ? "" : it->second);
      }
    }
    csv_rows.push_back(full);
  }
  // Terminal columns: the bench's sweep_columns, where "*suffix" matches
  // every figure ending in suffix; every figure when it names none.
  auto shown_on_terminal = [&](const std::string& key) {
    if (bench.sweep_columns.empty()) return true;
    for (const std::string& pattern : bench.sweep_columns) {
      if (pattern == key) return true;
      if (pattern[0] == '*' && key.size() >= pattern.size() - 1 &&
          key.compare(key.size() - (pattern.size() - 1), pattern.size() - 1, pattern, 1) == 0) {
        return true;
      }
    }
    return false;
  };
  std::vector<size_t> columns;
  for (size_t c = 0; c < csv_header.size(); ++c) {
    if (c < header.size() || shown_on_terminal(csv_header[c])) columns.push_back(c);
  }
  std::vector<std::string> shown;
  for (size_t c : columns) shown.push_back(csv_header[c]);
  std::vector<std::vector<std::string>> rows;
  for (const auto& full : csv_rows) {
    std::vector<std::string> row;
    for (size_t c : columns) row.push_back(c < full.size() ? full[c] : "failed");
    rows.push_back(row);
  }
  std::vector<size_t> width(shown.size());
  for (size_t c = 0; c < shown.size(); ++c) {
    width[c] = shown[c].size();
    for (const auto& r : rows) width[c] = std::max(width[c], c < r.size() ? r[c].size() : 0);
  }
  for (size_t c = 0; c < shown.size(); ++c) std::cout << (c ? "  " : "") << std::setw(int(width[c])) << shown[c];
  std::cout << "\n";
  for (const auto& r : rows) {
    for (size_t c = 0; c < shown.size(); ++c)
      std::cout << (c ? "  " : "") << std::setw(int(width[c])) << (c < r.size() ? r[c] : "");
    std::cout << "\n";
  }
  if (csv_out) {
    auto csv_line = [&](const std::vector<std::string>& fields) {
      for (size_t c = 0; c < fields.size(); ++c) csv_out->stream() << (c ? "," : "") << fields[c];
      csv_out->stream() << "\n";
    };
    csv_line(csv_header);
    for (const auto& r : csv_rows) csv_line(r);
    csv_out->commit();
    std::cout << "sweep written to " << csv << "\n";
  }
  return failures ? kExitRunFailed : 0;
}

}  // namespace kb::cli
