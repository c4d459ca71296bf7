#include "kernels/recipes/softmax_merge.h"

#include "kernels/recipes/state_merge.h"

namespace kb {

std::array<MergeStep, kMergeSteps> softmax_merge_steps(const Tensor& s, const SoftmaxMergeState& st,
                                                       const SoftmaxMergeScratch& x) {
  // The tile's state at the joint max m' (P = exp(S - m'), so its own
  // correction is 1): the state merge (state_merge.h) after its first steps.
  const std::array<MergeStep, 3> head = joint_max_steps(st.m_in, x.m_tile, st.m_out, x.corr);
  return {{
      {MathOp::kRowMax, x.m_tile, s, {}, false},
      head[0], head[1], head[2],                          // m', corr
      {MathOp::kSubBcast, x.p, s, st.m_out, true},
      {MathOp::kExp, x.p, x.p, {}, false},                // P
      {MathOp::kRowSum, x.row_sum, x.p, {}, false},
      {MathOp::kMul, st.l, st.l, x.corr, true},
      {MathOp::kAdd, st.l, st.l, x.row_sum, true},        // l'
      {MathOp::kMulBcast, st.o, st.o, x.corr, true},
  }};
}

std::vector<TypedOp> softmax_merge_typed_math_ops(const Tensor& s, const SoftmaxMergeState& st,
                                                  const SoftmaxMergeScratch& x) {
  std::vector<TypedOp> ops;
  ops.reserve(kMergeSteps + 1);
  for (const MergeStep& m : softmax_merge_steps(s, st, x)) {
    ops.push_back(m.binary ? typed_math_op(m.op, OpScope::kPrologue, m.out, {m.a, m.b})
                           : typed_math_op(m.op, OpScope::kPrologue, m.out, {m.a}));
  }
  return ops;
}

std::vector<TypedOp> softmax_merge_typed_ops(const Tensor& s, const Tensor& v, const SoftmaxMergeState& st,
                                             const SoftmaxMergeScratch& x) {
  std::vector<TypedOp> ops = softmax_merge_typed_math_ops(s, st, x);
  ops.push_back(typed_gemm_op(OpScope::kTile, st.o, x.p, v, {/*transpose_b=*/false, /*accumulate=*/true}));  // O'
  return ops;
}

namespace {
std::vector<OpSpec> as_text(const std::vector<TypedOp>& ops) {
  std::vector<OpSpec> text;
  text.reserve(ops.size());
  for (const TypedOp& op : ops) text.push_back(to_spec(op));
  return text;
}
}  // namespace

std::vector<OpSpec> softmax_merge_math_ops(const Tensor& s, const SoftmaxMergeState& st,
                                           const SoftmaxMergeScratch& x) {
  return as_text(softmax_merge_typed_math_ops(s, st, x));
}

std::vector<OpSpec> softmax_merge_ops(const Tensor& s, const Tensor& v,
                                      const SoftmaxMergeState& st,
                                      const SoftmaxMergeScratch& x) {
  return as_text(softmax_merge_typed_ops(s, v, st, x));
}

void softmax_merge(Tl& tl, const Tensor& s, const Tensor& v, const SoftmaxMergeState& st,
                   const SoftmaxMergeScratch& scratch) {
  tl.composite("softmax_merge", softmax_merge_typed_ops(s, v, st, scratch), {st.l, st.o});
}

}  // namespace kb
