// Plain C++ references for data-mode checks, in double precision from the
// exact input values the model holds (inputs are read back after their
// dtype rounding, so the reference sees what the kernel saw).
//
// Error measure: max_abs = max |out - ref| over all elements; max_rel =
// max_abs / max |ref| (relative to the output's scale, so elements near zero
// do not blow it up). Tolerance: max_rel <= kDataTolerance. The model keeps
// every accumulator and all softmax state in fp32, so its error against a
// double reference is a few fp32 roundings per accumulated term: for the
// GEMM sum over K <= 4096 of products of values in [-1, 1) the classic bound
// K x 2^-24 x sum|a||b| / |ref| is about 2.4e-4 x (sum|a||b| / |ref|), but
// rounding errors add like a random walk, about sqrt(K) x 2^-24 ~ 4e-6 of the
// output scale; 1e-4 leaves a wide margin over that and still fails on any
// real mistake (a wrong transpose or a missed tile gives errors of order 1).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kb {

constexpr double kDataTolerance = 1e-4;

struct ErrorStats {
  double max_abs = 0;
  double max_rel = 0;
  bool ok() const { return max_rel <= kDataTolerance; }
  std::string describe() const;
};
ErrorStats compare(const std::vector<float>& out, const std::vector<double>& ref);

// C [m, n] = A [m, k] @ B [k, n], row-major.
std::vector<double> reference_matmul(const std::vector<float>& a, const std::vector<float>& b,
                                     int64_t m, int64_t n, int64_t k);

// GQA decode: O [q_heads, d] = softmax(Q K_h^T / sqrt(d)) V_h for each query
// head, K_h / V_h the rows [h x ctx, (h + 1) x ctx) of its KV head h.
std::vector<double> reference_gqa_decode(const std::vector<float>& q, const std::vector<float>& k,
                                         const std::vector<float>& v, int64_t q_heads,
                                         int64_t kv_heads, int64_t head_dim, int64_t context);

}  // namespace kb
