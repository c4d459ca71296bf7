// Long-context GQA decode across a mesh of cubes: one query token per
// request, the KV cache split over the mesh in one of four partitionings.
// Every case is an SPMD kernel written with tl only: each PE runs today's
// per-tile opt2 composites (kernels/attention/gqa_decode.h) over its part
// of the cache, giving a partial online-softmax state (m, l, O) per query
// head, and the partial states are combined by the one shared merge
// (kernels/recipes/state_merge.h), carried between PEs by tl.send / recv.
//
// C = mesh_h x mesh_w cubes of P PEs, context L, KV heads H:
//   cube_sp_pe_tp   cube c holds tokens split(L, C, c); inside it PE p takes
//                   KV heads split(H, P, p). Partials of the same heads are
//                   merged across cubes into the root cube's PE p.
//   cube_tp_pe_sp   cube c takes KV heads split(H, C, c); its PE p takes
//                   tokens split(L, P, p); merged inside the cube at PE 0.
//   cube_repl_pe_sp cube c serves its own request c (C independent
//                   requests, each with the whole cache); PE p takes tokens
//                   split(L, P, p); merged inside the cube at PE 0.
//   cube_sp_pe_sp   PE p of cube c takes tokens split(split(L, C, c), P, p)
//                   of every head; an LRAB reduction of the states (local
//                   root PE 0 of each cube, then the root cube
//                   lrab_root(h, w)) with the merge as its combination, then
//                   the normalised O broadcast back the same way: every PE
//                   ends with the whole output.
// split(n, k, i) = [n i / k, n (i + 1) / k). A PE whose part is empty
// (more PEs than heads) does nothing; a token part must not be empty
// (KernelError). A PE that is alone in its merge group (a 1-PE cube, a
// 1-cube mesh) runs exactly gqa_decode_opt2 on its part: the cases reduce
// to the base kernel.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/attention/gqa_decode.h"
#include "models/tl/tl.h"

namespace kb {

enum class LongCtxCase { kCubeSpPeTp, kCubeTpPeSp, kCubeReplPeSp, kCubeSpPeSp };
constexpr LongCtxCase kLongCtxCases[] = {LongCtxCase::kCubeSpPeTp, LongCtxCase::kCubeTpPeSp,
                                         LongCtxCase::kCubeReplPeSp, LongCtxCase::kCubeSpPeSp};
const char* long_ctx_case_name(LongCtxCase c);  // "cube_sp_pe_tp", ...
// false when `name` is none of the four.
bool long_ctx_case_from_name(const std::string& name, LongCtxCase* out);

// [n i / k, n (i + 1) / k) as {begin, size}.
struct Range {
  int64_t begin = 0, size = 0;
};
Range split_range(int64_t n, int64_t k, int64_t i);

// What one PE does in a case: a pure function of the case, the shape and
// the PE's place, so a bench or a model can ask it without simulating.
struct LongCtxPlan {
  int64_t request = 0;       // whose Q, K, V: the cube in cube_repl_pe_sp, else 0
  Range heads;               // KV heads; size 0: the PE is idle
  Range tokens;              // context positions
  uint32_t merge_to = 0;     // global PE its partial state goes to; itself: it is a root
  int64_t merge_in = 0;      // partial states it receives and merges, at every level
  bool writes_output = false;  // ends with final O rows [heads.begin g, heads.end g) of its request
};
LongCtxPlan long_ctx_plan(LongCtxCase c, const GqaShape& s, const PePlace& place);
// Independent requests served by the mesh at once (C for cube_repl_pe_sp).
int64_t long_ctx_requests(LongCtxCase c, const PePlace& place);

// Input values as a pure function of (seed, request, tensor, row, column),
// uniform in [-s.input_range, s.input_range) before rounding to s.dtype:
// which 0 = Q [q_heads, d], 1 = K and 2 = V [kv_heads x context, d] (head
// h's cache is rows [h L, (h + 1) L)). Each PE writes its own part in data
// mode; a test rebuilds the whole tensors from the same function.
float long_ctx_input(uint64_t seed, int64_t request, int which, int64_t row, int64_t col, double range);

struct LongCtxOptions {
  uint64_t seed = 7;
  // false: each PE computes its partial state and stops (no IPC, no
  // output): the attention phase alone, for the bench's time split.
  bool merge = true;
};

// Where this PE's final output is (writes_output): O [rows, d] fp32 in its
// own HBM slice, rows [row0, row0 + rows) of request `request`'s output.
struct LongCtxOutput {
  bool final = false;
  Tensor out;
  int64_t request = 0, row0 = 0, rows = 0;
};

LongCtxOutput gqa_long_ctx(Tl& tl, LongCtxCase c, const GqaShape& s, const LongCtxOptions& opt = {});

}  // namespace kb
