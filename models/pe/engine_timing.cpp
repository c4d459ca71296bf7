#include "models/pe/engine_timing.h"

#include <cmath>

namespace kb {

Component engine_component(Engine e) {
  switch (e) {
    case Engine::kDma: return Component::kPeDma;
    case Engine::kGemm: return Component::kPeGemm;
    case Engine::kMath: return Component::kPeMath;
    case Engine::kTcm: return Component::kPeTcm;
  }
  return Component::kPeDma;
}

uint64_t ceil_div_real(uint64_t bytes, double per_cycle) {
  return uint64_t(std::ceil(double(bytes) / per_cycle - 1e-9));
}

uint64_t hbm_access_cycles(const PeConfig& cfg, uint64_t bytes) {
  return cfg.hbm.latency_cycles + ceil_div_real(bytes, cfg.hbm_bytes_per_cycle());
}

uint64_t dma_cycles(const PeConfig& cfg, const Stage& s) {
  if (s.tcm_only) return cfg.dma.setup_cycles + ceil_div_real(s.bytes, cfg.tcm.bytes_per_cycle);
  return cfg.dma.setup_cycles + hbm_access_cycles(cfg, s.bytes);
}

uint64_t gemm_cycles(const PeConfig& cfg, int64_t m, int64_t n, int64_t k) {
  return ceil_div(uint64_t(m), cfg.gemm.array_rows) *
             ceil_div(uint64_t(n), cfg.gemm.array_cols) * uint64_t(k) +
         cfg.gemm.array_rows + cfg.gemm.array_cols;
}

uint64_t gemm_stage_cycles(const PeConfig& cfg, const Stage& s) {
  uint64_t c = gemm_cycles(cfg, s.m, s.n, s.k);
  if (s.fetch_bytes) c += tcm_cycles(cfg, s.fetch_bytes);
  if (s.store_bytes) c += tcm_cycles(cfg, s.store_bytes);
  return c;
}

uint64_t math_cycles(const PeConfig& cfg, MathOp op, uint64_t elements,
                     int64_t row_len) {
  const uint64_t per_vector = math_op_is_transcendental(op)
                                  ? cfg.math.transcendental_cycles
                                  : cfg.math.elementwise_cycles;
  uint64_t c = cfg.math.pipeline_latency_cycles +
               ceil_div(elements, cfg.math.lanes) * per_vector;
  if (math_op_is_reduction(op) && row_len > 1) {
    c += uint64_t(std::ceil(std::log2(double(row_len))));
  }
  return c;
}

uint64_t tcm_cycles(const PeConfig& cfg, uint64_t bytes) {
  return cfg.tcm.latency_cycles + ceil_div_real(bytes, cfg.tcm.bytes_per_cycle);
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
