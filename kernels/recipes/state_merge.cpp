#include "kernels/recipes/state_merge.h"

#include <vector>

namespace kb {

std::array<MergeStep, 3> joint_max_steps(const Tensor& m_a, const Tensor& m_b, const Tensor& m_out,
                                         const Tensor& corr) {
  return {{
      {MathOp::kMax, m_out, m_a, m_b, true},  // m'
      {MathOp::kSub, corr, m_a, m_out, true},
      {MathOp::kExp, corr, corr, {}, false},  // c_a
  }};
}

std::array<MergeStep, kStateMergeSteps> state_merge_steps(const SoftmaxMergeState& acc, const PartialState& in,
                                                          const StateMergeScratch& x) {
  const std::array<MergeStep, 3> head = joint_max_steps(acc.m_in, in.m, acc.m_out, x.corr_a);
  return {{
      head[0], head[1], head[2],
      {MathOp::kSub, x.corr_b, in.m, acc.m_out, true},
      {MathOp::kExp, x.corr_b, x.corr_b, {}, false},         // c_b
      {MathOp::kMul, acc.l, acc.l, x.corr_a, true},
      {MathOp::kMul, x.l_b, in.l, x.corr_b, true},
      {MathOp::kAdd, acc.l, acc.l, x.l_b, true},             // l'
      {MathOp::kMulBcast, acc.o, acc.o, x.corr_a, true},
      {MathOp::kMulBcast, in.o, in.o, x.corr_b, true},
      {MathOp::kAdd, acc.o, acc.o, in.o, true},              // O'
  }};
}

void state_merge(Tl& tl, const SoftmaxMergeState& acc, const PartialState& in, const StateMergeScratch& x) {
  std::vector<TypedOp> ops;
  ops.reserve(kStateMergeSteps);
  for (const MergeStep& m : state_merge_steps(acc, in, x)) {
    ops.push_back(m.binary ? typed_math_op(m.op, OpScope::kPrologue, m.out, {m.a, m.b})
                           : typed_math_op(m.op, OpScope::kPrologue, m.out, {m.a}));
  }
  tl.composite("state_merge", std::move(ops), {acc.l, acc.o, in.o});
}

}  // namespace kb
