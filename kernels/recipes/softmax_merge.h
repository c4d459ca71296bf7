// softmax_merge: the online-softmax update for one KV tile as one composite
// (docs/cost-model.md; the first stateful recipe).
//
//   m' = max(m, rowmax(S));  corr = exp(m - m');  P = exp(S - m')
//   l' = l * corr + rowsum(P);  O' = O * corr + P @ V
//
// Every math op is prologue scope (standalone stages on PE_MATH, no DMA);
// P @ V is the tile-scope GEMM, so the scheduler streams V from HBM inside
// its tile loop while the prologue runs. The running max ping-pongs between
// two buffers (m_in -> m_out) because corr still needs the old value; l and O
// are updated in place and are the composite's rw_handles.
#pragma once

#include <array>
#include <vector>

#include "models/tl/tl.h"

namespace kb {

struct SoftmaxMergeState {
  Tensor m_in;   // [g, 1] running max before this tile
  Tensor m_out;  // [g, 1] running max after this tile
  Tensor l;      // [g, 1] running sum, updated in place
  Tensor o;      // [g, d] output accumulator, updated in place
};

struct SoftmaxMergeScratch {
  Tensor m_tile;   // [g, 1] rowmax of the tile's scores
  Tensor corr;     // [g, 1] exp(m - m')
  Tensor p;        // [g, T] exp(S - m')
  Tensor row_sum;  // [g, 1] rowsum(P)
};

// One math step of the update: out = op(a[, b]).
struct MergeStep {
  MathOp op;
  Tensor out, a, b;
  bool binary;
};
constexpr int kMergeSteps = 10;
// The update's ten math steps in order: m', corr, P, l' and O * corr. The
// single source for both the recipe's OpSpecs and opt3's MathCmds.
std::array<MergeStep, kMergeSteps> softmax_merge_steps(const Tensor& s, const SoftmaxMergeState& st,
                                                       const SoftmaxMergeScratch& scratch);

// The recipe's ten math ops (all prologue scope) and the whole recipe
// (below) typed, as softmax_merge() emits them.
std::vector<TypedOp> softmax_merge_typed_math_ops(const Tensor& s, const SoftmaxMergeState& st,
                                                  const SoftmaxMergeScratch& scratch);
std::vector<TypedOp> softmax_merge_typed_ops(const Tensor& s, const Tensor& v, const SoftmaxMergeState& st,
                                             const SoftmaxMergeScratch& scratch);
// The same as OpSpecs (to_spec), for replay text and tests.
std::vector<OpSpec> softmax_merge_math_ops(const Tensor& s, const SoftmaxMergeState& st,
                                           const SoftmaxMergeScratch& scratch);

// The whole recipe for scores S [g, T] (TCM) and values V [T, d]: the math
// ops plus the tile-scope GEMM O += P @ V.
std::vector<OpSpec> softmax_merge_ops(const Tensor& s, const Tensor& v,
                                      const SoftmaxMergeState& st,
                                      const SoftmaxMergeScratch& scratch);

// Emits the recipe as one CompositeCmd named "softmax_merge".
void softmax_merge(Tl& tl, const Tensor& s, const Tensor& v, const SoftmaxMergeState& st,
                   const SoftmaxMergeScratch& scratch);

}  // namespace kb
