#include "tb/benches/reference.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kb {

std::string ErrorStats::describe() const {
  char buf[160];
  std::snprintf(buf, sizeof buf, "max abs error %.3g, max rel error %.3g (tolerance %.0e)", max_abs,
                max_rel, kDataTolerance);
  return buf;
}

ErrorStats compare(const std::vector<float>& out, const std::vector<double>& ref) {
  ErrorStats e;
  double scale = 0;
  for (size_t i = 0; i < ref.size() && i < out.size(); ++i) {
    const double diff = std::abs(double(out[i]) - ref[i]);
    // std::max would drop a NaN (NaN < x is false): a NaN or infinite
    // output is an infinite error, not a skipped element.
    e.max_abs = std::isfinite(diff) ? std::max(e.max_abs, diff) : INFINITY;
    if (std::isfinite(ref[i])) scale = std::max(scale, std::abs(ref[i]));
  }
  if (out.size() != ref.size()) e.max_abs = INFINITY;
  e.max_rel = scale > 0 ? e.max_abs / scale : e.max_abs;
  if (std::isnan(e.max_rel)) e.max_rel = INFINITY;
  return e;
}

std::vector<double> reference_matmul(const std::vector<float>& a, const std::vector<float>& b,
                                     int64_t m, int64_t n, int64_t k) {
  std::vector<double> c(size_t(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) {
      const double x = a[size_t(i * k + p)];
      for (int64_t j = 0; j < n; ++j) c[size_t(i * n + j)] += x * double(b[size_t(p * n + j)]);
    }
  return c;
}

std::vector<double> reference_gqa_decode(const std::vector<float>& q, const std::vector<float>& k,
                                         const std::vector<float>& v, int64_t q_heads,
                                         int64_t kv_heads, int64_t d, int64_t ctx) {
  const int64_t g = q_heads / kv_heads;
  const double scale = 1.0 / std::sqrt(double(d));
  std::vector<double> out(size_t(q_heads * d), 0.0);
  std::vector<double> s(static_cast<size_t>(ctx));
  for (int64_t qh = 0; qh < q_heads; ++qh) {
    const int64_t h = qh / g;
    double max_s = -INFINITY;
    for (int64_t t = 0; t < ctx; ++t) {
      double dot = 0;
      for (int64_t j = 0; j < d; ++j) dot += double(q[size_t(qh * d + j)]) * double(k[size_t((h * ctx + t) * d + j)]);
      s[size_t(t)] = dot * scale;
      max_s = std::max(max_s, s[size_t(t)]);
    }
    double sum = 0;
    for (int64_t t = 0; t < ctx; ++t) sum += (s[size_t(t)] = std::exp(s[size_t(t)] - max_s));
    for (int64_t t = 0; t < ctx; ++t) {
      const double p = s[size_t(t)] / sum;
      for (int64_t j = 0; j < d; ++j) out[size_t(qh * d + j)] += p * double(v[size_t((h * ctx + t) * d + j)]);
    }
  }
  return out;
}

}  // namespace kb
