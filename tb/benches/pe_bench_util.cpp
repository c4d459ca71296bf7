#include "tb/benches/pe_bench_util.h"

#include <cmath>
#include <limits>
#include <optional>

#include "models/util/checked.h"

namespace kb::pe_bench {

double metric(const LaunchResult& l, const std::string& name) {
  for (const auto& [n, v] : l.metrics)
    if (n == name) return v;
  return std::numeric_limits<double>::quiet_NaN();
}

double ratio(double num, double den) {
  if (den == 0 || std::isnan(num) || std::isnan(den)) return std::numeric_limits<double>::quiet_NaN();
  return num / den;
}

nlohmann::json ratio_json(double r) { return std::isfinite(r) ? nlohmann::json(r) : nlohmann::json(); }

std::string ratio_text(const char* printf_format, double r) {
  return std::isfinite(r) ? fmt(printf_format, r) : std::string("n/a");
}

const LaunchResult& launch(const RunResult& r, const std::string& kernel) {
  for (const LaunchResult& l : r.launches)
    if (l.kernel == kernel) return l;
  throw BenchError("run has no launch '" + kernel + "'");
}

void report_check(Tl& tl, const std::string& what, const ErrorStats& e) {
  tl.metric("max_abs_err", e.max_abs);
  tl.metric("max_rel_err", e.max_rel);
  if (!e.ok()) throw KernelError("data check failed: " + what + " vs the C++ reference: " + e.describe());
}

void check_elements(const BenchParams& p, const char* tensor,
                    std::initializer_list<std::pair<const char*, int64_t>> factors) {
  uint64_t product = 1;
  bool fits = true;
  std::string names, values;
  for (const auto& [name, value] : factors) {
    const std::optional<uint64_t> next = checked_mul(product, uint64_t(value));
    fits = fits && next && *next <= uint64_t(std::numeric_limits<int64_t>::max());
    if (fits) product = *next;
    names += std::string(names.empty() ? "" : " x ") + name;
    values += std::string(values.empty() ? "" : ", ") + name + "=" + std::to_string(value);
  }
  if (!fits) {
    throw BenchError("bench '" + p.bench() + "' parameters " + values + ": " + tensor + " would have " + names +
                     " elements; expected at most 2^63 - 1 (" +
                     std::to_string(std::numeric_limits<int64_t>::max()) + ")");
  }
}

void check_step(const BenchParams& p, const char* total_name, int64_t total, const char* step_name, int64_t step) {
  if (total > std::numeric_limits<int64_t>::max() - step) {
    throw BenchError("bench '" + p.bench() + "' parameters " + total_name + "=" + std::to_string(total) + ", " +
                     step_name + "=" + std::to_string(step) + ": expected " + total_name + " + " + step_name +
                     " at most 2^63 - 1");
  }
}

}  // namespace kb::pe_bench
