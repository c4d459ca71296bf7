#include "models/pe/engine_timing.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "models/mem/hbm.h"
#include "models/pe/tensor_table.h"
#include "models/util/checked.h"

namespace kb {

namespace {

// A cycle count that does not fit in 64 bits is an error, never a wrapped
// or saturated figure (issue 11).
[[noreturn]] void too_many_cycles(const std::string& what) {
  throw KernelError(what + ": the cycle count does not fit in 64 bits");
}

uint64_t add(uint64_t a, uint64_t b, const char* what) {
  const std::optional<uint64_t> r = checked_add(a, b);
  if (!r) too_many_cycles(what);
  return *r;
}

uint64_t mul(uint64_t a, uint64_t b, const char* what) {
  const std::optional<uint64_t> r = checked_mul(a, b);
  if (!r) too_many_cycles(what);
  return *r;
}

}  // namespace

uint64_t ceil_div_real(uint64_t bytes, double per_cycle) {
  const std::optional<uint64_t> c = ceil_to_u64(double(bytes) / per_cycle - 1e-9);
  if (!c) {
    char rate[32];
    std::snprintf(rate, sizeof rate, "%.17g", per_cycle);
    too_many_cycles(std::to_string(bytes) + " bytes at " + rate + " bytes per cycle");
  }
  return *c;
}

uint64_t hbm_access_cycles(const PeConfig& cfg, uint64_t bytes) {
  try {
    return hbm_access_cycles(hbm_timing(cfg), bytes);  // the HBM's own formula (models/mem/hbm.h)
  } catch (const std::overflow_error& e) {
    throw KernelError(e.what());
  }
}

uint64_t dma_cycles(const PeConfig& cfg, const Stage& s) {
  if (s.tcm_only) return add(cfg.dma.setup_cycles, ceil_div_real(s.bytes, cfg.tcm.bytes_per_cycle), "DMA copy");
  return add(cfg.dma.setup_cycles, hbm_access_cycles(cfg, s.bytes), "DMA");
}

uint64_t gemm_cycles(const PeConfig& cfg, int64_t m, int64_t n, int64_t k) {
  const char* what = "GEMM";
  if (m < 0 || n < 0 || k < 0) {
    throw KernelError("GEMM m/n/k = " + std::to_string(m) + "/" + std::to_string(n) + "/" +
                      std::to_string(k) + ": expected non-negative sizes");
  }
  const uint64_t passes = mul(ceil_div(uint64_t(m), cfg.gemm.array_rows),
                              ceil_div(uint64_t(n), cfg.gemm.array_cols), what);
  return add(add(mul(passes, uint64_t(k), what), cfg.gemm.array_rows, what), cfg.gemm.array_cols,
             what);
}

uint64_t gemm_stage_cycles(const PeConfig& cfg, const Stage& s) {
  uint64_t c = gemm_cycles(cfg, s.m, s.n, s.k);
  if (s.fetch_bytes) c = add(c, tcm_cycles(cfg, s.fetch_bytes), "GEMM stage");
  if (s.store_bytes) c = add(c, tcm_cycles(cfg, s.store_bytes), "GEMM stage");
  return c;
}

uint64_t math_cycles(const PeConfig& cfg, MathOp op, uint64_t elements,
                     int64_t row_len) {
  const uint64_t per_vector = math_op_is_transcendental(op)
                                  ? cfg.math.transcendental_cycles
                                  : cfg.math.elementwise_cycles;
  const char* what = "MATH";
  uint64_t c = add(cfg.math.pipeline_latency_cycles,
                   mul(ceil_div(elements, cfg.math.lanes), per_vector, what), what);
  if (math_op_is_reduction(op) && row_len > 1) {
    // ceil(log2(n)) exactly, in integers: the bit width of n - 1.
    c = add(c, uint64_t(64 - __builtin_clzll(uint64_t(row_len - 1))), what);
  }
  return c;
}

uint64_t tcm_cycles(const PeConfig& cfg, uint64_t bytes) {
  return add(cfg.tcm.latency_cycles, ceil_div_real(bytes, cfg.tcm.bytes_per_cycle), "TCM access");
}

uint64_t stage_cycles(const PeConfig& cfg, const Stage& s) {
  switch (s.engine) {
    case Engine::kDma: return dma_cycles(cfg, s);
    case Engine::kGemm: return gemm_stage_cycles(cfg, s);
    case Engine::kMath: return math_cycles(cfg, s.op, s.elements, s.row_len);
    case Engine::kTcm: return tcm_cycles(cfg, s.bytes);
  }
  return 0;
}

}  // namespace kb
