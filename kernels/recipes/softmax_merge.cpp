#include "kernels/recipes/softmax_merge.h"

namespace kb {

std::vector<OpSpec> softmax_merge_math_ops(const Tensor& s, const SoftmaxMergeState& st,
                                           const SoftmaxMergeScratch& x) {
  const OpScope pro = OpScope::kPrologue;
  return {
      math_op(MathOp::kRowMax, pro, x.m_tile, {s}),
      math_op(MathOp::kMax, pro, st.m_out, {st.m_in, x.m_tile}),  // m'
      math_op(MathOp::kSub, pro, x.corr, {st.m_in, st.m_out}),
      math_op(MathOp::kExp, pro, x.corr, {x.corr}),              // corr
      math_op(MathOp::kSubBcast, pro, x.p, {s, st.m_out}),
      math_op(MathOp::kExp, pro, x.p, {x.p}),                    // P
      math_op(MathOp::kRowSum, pro, x.row_sum, {x.p}),
      math_op(MathOp::kMul, pro, st.l, {st.l, x.corr}),
      math_op(MathOp::kAdd, pro, st.l, {st.l, x.row_sum}),       // l'
      math_op(MathOp::kMulBcast, pro, st.o, {st.o, x.corr}),
  };
}

std::vector<OpSpec> softmax_merge_ops(const Tensor& s, const Tensor& v,
                                      const SoftmaxMergeState& st,
                                      const SoftmaxMergeScratch& x) {
  std::vector<OpSpec> ops = softmax_merge_math_ops(s, st, x);
  ops.push_back(gemm_op(OpScope::kTile, st.o, x.p, v, {/*transpose_b=*/false, /*accumulate=*/true}));  // O'
  return ops;
}

void softmax_merge(Tl& tl, const Tensor& s, const Tensor& v, const SoftmaxMergeState& st,
                   const SoftmaxMergeScratch& scratch) {
  tl.composite("softmax_merge", softmax_merge_ops(s, v, st, scratch), {st.l, st.o});
}

}  // namespace kb
