// PE_MATH's operations, one row each in kMathOps: everything the model
// knows of an op is its row. The dispatch checks (the operand shapes), the
// descriptor (the opcode and the extra's field), PE_MATH's timing (the cost
// class) and its data mode (the arithmetic), the replay format and tl's
// composites (the name) all read the row, so a new op is a row here and a
// call in tl.h (docs/extending.md, "Adding a math op").
//
// The opcode is the op's value in a binary descriptor (docs/descriptors.md):
// explicit and stable, whatever the enum's order; tests/unit/test_commands.cpp
// pins every one. Rows sit at their enumerator's index (checked below).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace kb {

enum class MathOp : uint8_t {
  kAdd,
  kSub,
  kMul,
  kMax,
  kDiv,
  kAddBcast,  // "_bcast": src_b is a [rows, 1] column broadcast over src_a's rows
  kSubBcast,
  kMulBcast,
  kDivBcast,
  kExp,
  kScale,   // out = a * extra "factor"
  kFill,    // out = extra "value"
  kRowMax,  // [rows, cols] -> [rows, 1]
  kRowSum,
};

// The operand shapes an op takes (command_check.cpp checks them).
enum class MathShape : uint8_t {
  kElementwise,      // out and every operand the same shape
  kBroadcastColumn,  // out and src_a the same shape, src_b [rows, 1]
  kRowReduction,     // src_a [rows, cols] -> out [rows, 1]
  kFill,             // no operand: any out
};

// Which per-lane-group cost an op pays: pe.attrs.math.elementwise_cycles or
// pe.attrs.math.transcendental_cycles (engine_timing, pe_math.h).
enum class MathCost : uint8_t { kElementwise, kTranscendental };

// The one number an op may take as an extra (its descriptor field).
enum class MathAttr : uint8_t { kNone, kFactor, kValue };
constexpr const char* math_attr_name(MathAttr a) {
  return a == MathAttr::kFactor ? "factor" : a == MathAttr::kValue ? "value" : nullptr;
}

// fp32 arithmetic of data mode: out = apply(a, b, attr) per element (a row
// reduction folds a row: acc = apply(acc, v), from reduce_init).
namespace math_fn {
inline float add(float a, float b, float) { return a + b; }
inline float sub(float a, float b, float) { return a - b; }
inline float mul(float a, float b, float) { return a * b; }
inline float div(float a, float b, float) { return a / b; }
inline float max(float a, float b, float) { return a < b ? b : a; }  // std::max's order
inline float exp(float a, float, float) { return std::exp(a); }
inline float scale(float a, float, float factor) { return a * factor; }
inline float fill(float, float, float value) { return value; }
}  // namespace math_fn

struct MathOpInfo {
  MathOp op;
  std::string_view name;  // tl's, the replay format's and composites' name (a literal: NUL-terminated)
  uint8_t opcode;    // in a binary descriptor: stable, 0 .. kNumMathOps - 1
  int arity;         // operands read
  MathShape shape;
  MathCost cost;
  MathAttr attr;
  float (*apply)(float a, float b, float attr);
  float reduce_init;  // kRowReduction
};

inline constexpr MathOpInfo kMathOps[] = {
    // op              name        code ar shape                        cost                       attr
    {MathOp::kAdd, "add", 0, 2, MathShape::kElementwise, MathCost::kElementwise, MathAttr::kNone, math_fn::add, 0},
    {MathOp::kSub, "sub", 1, 2, MathShape::kElementwise, MathCost::kElementwise, MathAttr::kNone, math_fn::sub, 0},
    {MathOp::kMul, "mul", 2, 2, MathShape::kElementwise, MathCost::kElementwise, MathAttr::kNone, math_fn::mul, 0},
    {MathOp::kMax, "max", 3, 2, MathShape::kElementwise, MathCost::kElementwise, MathAttr::kNone, math_fn::max, 0},
    {MathOp::kDiv, "div", 4, 2, MathShape::kElementwise, MathCost::kTranscendental, MathAttr::kNone, math_fn::div, 0},
    {MathOp::kAddBcast, "add_bcast", 5, 2, MathShape::kBroadcastColumn, MathCost::kElementwise, MathAttr::kNone,
     math_fn::add, 0},
    {MathOp::kSubBcast, "sub_bcast", 6, 2, MathShape::kBroadcastColumn, MathCost::kElementwise, MathAttr::kNone,
     math_fn::sub, 0},
    {MathOp::kMulBcast, "mul_bcast", 7, 2, MathShape::kBroadcastColumn, MathCost::kElementwise, MathAttr::kNone,
     math_fn::mul, 0},
    {MathOp::kDivBcast, "div_bcast", 8, 2, MathShape::kBroadcastColumn, MathCost::kTranscendental, MathAttr::kNone,
     math_fn::div, 0},
    {MathOp::kExp, "exp", 9, 1, MathShape::kElementwise, MathCost::kTranscendental, MathAttr::kNone, math_fn::exp, 0},
    {MathOp::kScale, "scale", 10, 1, MathShape::kElementwise, MathCost::kElementwise, MathAttr::kFactor,
     math_fn::scale, 0},
    {MathOp::kFill, "fill", 11, 0, MathShape::kFill, MathCost::kElementwise, MathAttr::kValue, math_fn::fill, 0},
    {MathOp::kRowMax, "rowmax", 12, 1, MathShape::kRowReduction, MathCost::kElementwise, MathAttr::kNone,
     math_fn::max, -std::numeric_limits<float>::infinity()},
    {MathOp::kRowSum, "rowsum", 13, 1, MathShape::kRowReduction, MathCost::kElementwise, MathAttr::kNone,
     math_fn::add, 0},
};
constexpr int kNumMathOps = int(sizeof(kMathOps) / sizeof(kMathOps[0]));

// Rows at their enumerator's index (lookups are indexing); opcodes are
// 0 .. kNumMathOps - 1, each once (the decoder's message names that range);
// arity fits the shape and at most two operands (HandleList's inline two).
constexpr bool math_op_table_consistent() {
  for (int i = 0; i < kNumMathOps; ++i) {
    const MathOpInfo& r = kMathOps[i];
    if (int(r.op) != i || r.opcode >= kNumMathOps || r.arity < 0 || r.arity > 2) return false;
    for (int j = 0; j < i; ++j)
      if (kMathOps[j].opcode == r.opcode) return false;
    if ((r.shape == MathShape::kBroadcastColumn && r.arity != 2) ||
        (r.shape == MathShape::kRowReduction && r.arity != 1) || (r.shape == MathShape::kFill && r.arity != 0))
      return false;
  }
  return true;
}
static_assert(math_op_table_consistent(), "kMathOps: one row per MathOp, in order, opcodes 0..N-1 once each");

constexpr const MathOpInfo& math_op_info(MathOp op) { return kMathOps[int(op)]; }
inline const char* to_string(MathOp op) { return math_op_info(op).name.data(); }
inline int math_op_arity(MathOp op) { return math_op_info(op).arity; }
inline bool math_op_is_reduction(MathOp op) { return math_op_info(op).shape == MathShape::kRowReduction; }
inline bool math_op_is_transcendental(MathOp op) { return math_op_info(op).cost == MathCost::kTranscendental; }
// A value outside the table (a corrupt op built in code) is no row: it
// encodes as its own value, which a decoder refuses, and takes no extra.
constexpr bool is_math_op(MathOp op) { return int(op) < kNumMathOps; }
inline uint8_t math_opcode(MathOp op) { return is_math_op(op) ? math_op_info(op).opcode : uint8_t(op); }
inline MathAttr math_op_attr(MathOp op) { return is_math_op(op) ? math_op_info(op).attr : MathAttr::kNone; }

// The op of a descriptor's opcode; false if none has it.
bool math_op_from_opcode(uint8_t opcode, MathOp* op);
// The op of a name (tl's, the replay format's); false if none has it.
bool math_op_from_string(const std::string& name, MathOp* op);

}  // namespace kb
