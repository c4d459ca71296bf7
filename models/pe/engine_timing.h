// Engine timing formulas, in cycles of the PE clock (DESIGN.md "Engines").
// Pure functions so tests can check stage durations without a simulation;
// the engine modules annotate exactly these cycles (stage_engine.h). Dispatch cost never enters
// here (ADR-0064 D5, Test Requirement 5).
#pragma once

#include <cstdint>

#include "models/config/pe_config.h"
#include "models/pe/stage.h"

namespace kb {

// Without overflow for any a (a + b - 1 could wrap).
inline uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }
// ceil(bytes / per_cycle). Every formula below is computed with checked
// arithmetic and throws KernelError when its cycle count does not fit in 64
// bits (issue 11: never a wrapped figure).
uint64_t ceil_div_real(uint64_t bytes, double per_cycle);

// HBM access, uncontended: latency + ceil(bytes / (channels x GB/s x eff /
// f)); the HBM model's formula (models/mem/hbm.h), with KernelError.
uint64_t hbm_access_cycles(const PeConfig& cfg, uint64_t bytes);
// DMA stage: setup + HBM access (DMA_READ/WRITE), or setup + TCM copy.
uint64_t dma_cycles(const PeConfig& cfg, const Stage& s);
// ceil(m/R) * ceil(n/C) * k + R + C (systolic fill and drain).
uint64_t gemm_cycles(const PeConfig& cfg, int64_t m, int64_t n, int64_t k);
// A GEMM stage: gemm_cycles, plus for a single-op GemmCmd the serial operand
// fetch from and result drain to TCM (tcm_cycles of each). A composite
// pipelines those as FETCH/STORE stages on PE_TCM instead.
uint64_t gemm_stage_cycles(const PeConfig& cfg, const Stage& s);
// latency + ceil(elements/lanes) * op cost (+ ceil(log2(row_len)) tree depth
// for reductions).
uint64_t math_cycles(const PeConfig& cfg, MathOp op, uint64_t elements,
                     int64_t row_len);
// FETCH / STORE: latency + ceil(bytes / TCM bytes per cycle).
uint64_t tcm_cycles(const PeConfig& cfg, uint64_t bytes);

// Dispatches on the stage's engine.
uint64_t stage_cycles(const PeConfig& cfg, const Stage& s);

}  // namespace kb
