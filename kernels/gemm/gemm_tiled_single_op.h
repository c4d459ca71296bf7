// A tiled GEMM written with single-op commands only: C = A @ B with A, B, C
// in HBM. Per output block and K step: load the A and B blocks into TCM,
// dot with accumulation; then store the block. Two TCM buffers per operand
// (double buffering): the scoreboard's WAR ordering keeps reuse safe, and
// the next step's loads overlap the current dot.
#pragma once

#include <cstdint>

#include "models/tl/tl.h"

namespace kb {

// C [m, n] = A [m, k] @ B [k, n]; A and B in `dtype`, C (and every
// accumulator) in fp32, as the array accumulates in fp32.
struct GemmShape {
  int64_t m = 256, n = 256, k = 256;
  Dtype dtype = Dtype::kBf16;
  int64_t tile_m = 64, tile_n = 64, tile_k = 64;  // kernel tiles (single-op kernels)
};

// The operands in HBM: A and B hold seeded random inputs, C is the output.
struct GemmTensors {
  Tensor a, b, c;
};
GemmTensors gemm_inputs(Tl& tl, const GemmShape& s, uint64_t seed = 1);

void gemm_tiled_single_op(Tl& tl, const GemmShape& s, const GemmTensors& t);
// Declares fresh inputs (gemm_inputs) and runs the kernel on them.
void gemm_tiled_single_op(Tl& tl, const GemmShape& s);

}  // namespace kb
