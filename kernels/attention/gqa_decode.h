// GQA attention decode: one query token, q_heads query heads sharing
// kv_heads KV heads (g = q_heads / kv_heads query heads per group), a KV
// cache of `context` tokens walked in KV tiles of kv_tile tokens (the last
// tile is shorter when context is not a multiple). Per KV head and tile, the
// online-softmax update (kernels/recipes/softmax_merge.h) folds the tile into
// the running (m, l, O); at the end O / l is stored.
//
// opt3: every tile in single-op primitives: load K, dot, scale, the ten
//       softmax-merge MathCmds, load V, dot, accumulate (16 commands).
// opt2: every tile as two composites: #1 S = (Q K^T) * scale with K streamed
//       by the scheduler, #2 the softmax_merge recipe with V streamed.
//
// Both report per-tile dispatch figures (tl.metric): tiles,
// tile_commands, tile_logical_bytes, tile_dispatch_cycles_exact,
// tile_dispatch_cycles_charged, tile_dispatch_ns (averages over every
// head's tile loop).
#pragma once

#include <cstdint>
#include <string>

#include "models/tl/tl.h"

namespace kb {

struct GqaShape {
  int64_t q_heads = 32;
  int64_t kv_heads = 8;
  int64_t head_dim = 128;
  int64_t context = 4096;
  int64_t kv_tile = 128;
  Dtype dtype = Dtype::kBf16;  // Q, K, V in HBM; scores, state and O are fp32
  double input_range = 1.0;    // inputs are uniform in [-input_range, input_range)
};

// HBM tensors: Q [q_heads, d], K and V [kv_heads x context, d] (head h's
// cache is rows [h x context, (h + 1) x context)), the output O [q_heads, d]
// in fp32. Q, K and V hold seeded random inputs.
struct GqaTensors {
  Tensor q, k, v, out;
};
GqaTensors gqa_inputs(Tl& tl, const GqaShape& s, uint64_t seed = 7);

void gqa_decode_opt3(Tl& tl, const GqaShape& s, const GqaTensors& t);
void gqa_decode_opt2(Tl& tl, const GqaShape& s, const GqaTensors& t);
// On fresh gqa_inputs().
void gqa_decode_opt3(Tl& tl, const GqaShape& s);
void gqa_decode_opt2(Tl& tl, const GqaShape& s);

// opt2 without its epilogue (the long-context cases): every
// head's partial online-softmax state is kept instead of finalised, in
// stacked TCM tensors, head h in rows [h g, (h + 1) g): the running max in
// m[0] / m[1] (it ping-pongs tile by tile; it ends in
// m[gqa_final_max_index(s)]), l [q_heads, 1] and O [q_heads, d], fp32.
// t.out is not written.
struct GqaStateBuffers {
  Tensor m[2], l, o;
};
GqaStateBuffers gqa_state_buffers(Tl& tl, const GqaShape& s, const std::string& prefix);
int gqa_final_max_index(const GqaShape& s);
void gqa_partial_opt2(Tl& tl, const GqaShape& s, const GqaTensors& t, const GqaStateBuffers& state);

}  // namespace kb
