// What the single-PE benches share (tb/benches/gemm_benches.cpp,
// softmax_merge_bench.cpp, gqa_decode_bench.cpp): picking a launch and a
// metric out of a run, the data-mode check against the C++ reference, and
// the checks of shapes built from bench parameters (bad input before any run).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/tl/tl.h"
#include "tb/benches/bench_registry.h"
#include "tb/benches/reference.h"

namespace kb::pe_bench {

using Launches = std::vector<std::pair<std::string, Kernel>>;

// A launch's tl.metric figure; NaN when it reported none.
double metric(const LaunchResult& l, const std::string& name);
// num / den, or NaN when den is 0 (or either is NaN): a ratio that does not
// apply, which ratio_json makes null and ratio_text "n/a".
double ratio(double num, double den);
nlohmann::json ratio_json(double r);
std::string ratio_text(const char* printf_format, double r);
// The run's launch of `kernel`; throws BenchError when it has none.
const LaunchResult& launch(const RunResult& r, const std::string& kernel);

// Data mode: report the output's error against the reference as metrics
// and fail the run beyond the tolerance (tb/benches/reference.h).
void report_check(Tl& tl, const std::string& what, const ErrorStats& e);

// The number of elements of a tensor a kernel declares from bench
// parameters, checked: a product beyond 2^63 - 1 is bad input naming the
// parameters, not a wrapped, negative shape. `factors` are
// parameter names with their values.
void check_elements(const BenchParams& p, const char* tensor,
                    std::initializer_list<std::pair<const char*, int64_t>> factors);

// Loops step through `total` by `step` (tiles, KV tiles): total + step must
// not overflow int64, or the index wraps and the loop never ends.
void check_step(const BenchParams& p, const char* total_name, int64_t total, const char* step_name, int64_t step);

}  // namespace kb::pe_bench
