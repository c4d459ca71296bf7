// The online-softmax combination of two partial attention states: the
// one merge every long-context case uses, between PEs and
// between cubes. A partial state over a set of keys is, per query row,
//   m = max score,  l = sum exp(s - m),  O = sum exp(s - m) v
// and two states over disjoint key sets combine into the state over their
// union:
//   m' = max(m_a, m_b);  c_a = exp(m_a - m');  c_b = exp(m_b - m')
//   l' = l_a c_a + l_b c_b;  O' = O_a c_a + O_b c_b
// softmax_merge (softmax_merge.h) is this merge between the running state
// and one KV tile, with the tile's state computed at the joint max (so
// c_b = 1): both start with joint_max_steps.
#pragma once

#include <array>

#include "kernels/recipes/softmax_merge.h"

namespace kb {

// A partial state of `rows` query rows: m, l [rows, 1] and O [rows, d], fp32.
struct PartialState {
  Tensor m, l, o;
};

struct StateMergeScratch {
  Tensor corr_a;  // [rows, 1] exp(m_a - m')
  Tensor corr_b;  // [rows, 1] exp(m_b - m')
  Tensor l_b;     // [rows, 1] l_b c_b
};

// m_out = max(m_a, m_b); corr = exp(m_a - m_out): the start of every merge.
std::array<MergeStep, 3> joint_max_steps(const Tensor& m_a, const Tensor& m_b, const Tensor& m_out,
                                         const Tensor& corr);

constexpr int kStateMergeSteps = 11;
// acc (+)= in: acc.m_in -> acc.m_out, acc.l and acc.o in place; in.o is
// scaled in place (it is consumed).
std::array<MergeStep, kStateMergeSteps> state_merge_steps(const SoftmaxMergeState& acc, const PartialState& in,
                                                          const StateMergeScratch& x);

// The merge as one CompositeCmd "state_merge" of prologue-scope math ops.
void state_merge(Tl& tl, const SoftmaxMergeState& acc, const PartialState& in, const StateMergeScratch& x);

}  // namespace kb
