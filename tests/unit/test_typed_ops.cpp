// Issue 12 item 5: a composite's OpSpecs are decoded once, at dispatch
// (check_command), into TypedOps: the op kind as an enum, operands by role,
// typed attributes. Decoding each kind gives the typed fields; a malformed
// op is refused with the message check_command has always given.
#include <gtest/gtest.h>

#include <gmock/gmock.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "models/pe/cpu/command_check.h"
#include "models/pe/commands.h"
#include "models/pe/tensor_table.h"

namespace kb {
namespace {

using ::testing::HasSubstr;

// The text form, as the replay parser builds it (names and extras in order).
OpSpec spec(const std::string& kind, OpScope scope, std::vector<NamedOperand> operands, Handle out,
            Extras extra = {}) {
  OpSpec op;
  op.kind = kind;
  op.scope = scope;
  op.operands = std::move(operands);
  op.has_out = true;
  op.out = out;
  op.extra = std::move(extra);
  return op;
}

Extras mnk(int64_t m, int64_t n, int64_t k) { return {{"m", m}, {"n", n}, {"k", k}}; }

TypedOp decode_one(const OpSpec& s) {
  OpDecoder d;
  TypedOp op;
  std::string why;
  EXPECT_TRUE(d.decode(s, &op, &why)) << why;
  return op;
}

std::string decode_error(const OpSpec& s) {
  OpDecoder d;
  TypedOp op;
  std::string why;
  EXPECT_FALSE(d.decode(s, &op, &why)) << s.kind;
  return why;
}

TEST(TypedOpDecode, GemmGivesOperandsByRoleAndTypedAttributes) {
  // b listed before a: roles come from the names, not the order.
  Extras extra = mnk(64, 32, 128);
  extra.push_back({"transpose_b", true});
  extra.push_back({"accumulate", true});
  const TypedOp op = decode_one(spec("gemm", OpScope::kEpilogue, {{"b", 22}, {"a", 11}}, 33, extra));
  EXPECT_EQ(op.kind, OpKind::kGemm);
  EXPECT_TRUE(op.is_gemm());
  EXPECT_EQ(op.scope, OpScope::kEpilogue);
  EXPECT_EQ(op.a(), 11u);
  EXPECT_EQ(op.b(), 22u);
  EXPECT_EQ(op.inputs, 2);
  EXPECT_EQ(op.out, 33u);
  EXPECT_EQ(op.gemm.m, 64);
  EXPECT_EQ(op.gemm.n, 32);
  EXPECT_EQ(op.gemm.k, 128);
  EXPECT_TRUE(op.gemm.transpose_b);
  EXPECT_TRUE(op.gemm.accumulate);
  EXPECT_STREQ(op.input_role(0), "a");
  EXPECT_STREQ(op.input_role(1), "b");
}

TEST(TypedOpDecode, GemmFlagsAreTheFirstExtraOfTheirNameWhenBoolTrue) {
  // Absent, false, or not a bool: off. A later bool of the same name does
  // not count (the validated shape used the first).
  const TypedOp plain = decode_one(spec("gemm", OpScope::kTile, {{"a", 1}, {"b", 2}}, 3, mnk(1, 1, 1)));
  EXPECT_FALSE(plain.gemm.transpose_b);
  EXPECT_FALSE(plain.gemm.accumulate);
  Extras extra = mnk(1, 1, 1);
  extra.push_back({"transpose_b", int64_t(1)});
  extra.push_back({"transpose_b", true});
  extra.push_back({"accumulate", false});
  const TypedOp odd = decode_one(spec("gemm", OpScope::kTile, {{"a", 1}, {"b", 2}}, 3, extra));
  EXPECT_FALSE(odd.gemm.transpose_b);
  EXPECT_FALSE(odd.gemm.accumulate);
}

TEST(TypedOpDecode, EveryMathOpGivesItsEnumAndPositionalOperands) {
  const MathOp all[] = {MathOp::kAdd,      MathOp::kSub,      MathOp::kMul,      MathOp::kMax,
                        MathOp::kDiv,      MathOp::kAddBcast, MathOp::kSubBcast, MathOp::kMulBcast,
                        MathOp::kDivBcast, MathOp::kExp,      MathOp::kScale,    MathOp::kFill,
                        MathOp::kRowMax,   MathOp::kRowSum};
  for (MathOp m : all) {
    SCOPED_TRACE(to_string(m));
    const int arity = math_op_arity(m);
    std::vector<NamedOperand> operands;
    // Names do not matter for math ops: the first is src_a, the second src_b.
    for (int i = 0; i < arity; ++i) operands.push_back({i == 0 ? "x" : "y", Handle(100 + i)});
    const TypedOp op = decode_one(spec(to_string(m), OpScope::kPrologue, operands, 7));
    EXPECT_EQ(op.kind, OpKind::kMath);
    EXPECT_FALSE(op.is_gemm());
    EXPECT_EQ(op.math, m);
    EXPECT_EQ(op.scope, OpScope::kPrologue);
    EXPECT_EQ(op.out, 7u);
    ASSERT_EQ(op.inputs, arity);
    for (int i = 0; i < arity; ++i) {
      EXPECT_EQ(op.in[i], Handle(100 + i));
      EXPECT_STREQ(op.input_role(i), i == 0 ? "src_a" : "src_b");
    }
    EXPECT_EQ(op.attrs.factor, 0.0);  // no extras
    EXPECT_EQ(op.attrs.value, 0.0);
  }
}

TEST(TypedOpDecode, MathAttributesTakeIntOrFloatExtras) {
  const TypedOp scale =
      decode_one(spec("scale", OpScope::kTile, {{"src_a", 1}}, 1, {{"factor", 0.125}}));
  EXPECT_EQ(scale.attrs.factor, 0.125);
  EXPECT_EQ(scale.attrs.value, 0.0);
  // An int counts as its value; a non-number before it is skipped.
  const TypedOp fill = decode_one(
      spec("fill", OpScope::kPrologue, {}, 1, {{"value", std::string("x")}, {"value", int64_t(-3)}}));
  EXPECT_EQ(fill.attrs.value, -3.0);
  const MathAttrs a = math_attrs({{"factor", int64_t(2)}, {"value", 1.5}, {"factor", 9.0}});
  EXPECT_EQ(a.factor, 2.0);
  EXPECT_EQ(a.value, 1.5);
}

TEST(TypedOpDecode, MalformedOpsKeepTheirMessages) {
  OpSpec no_out = spec("exp", OpScope::kPrologue, {{"src_a", 1}}, 0);
  no_out.has_out = false;
  EXPECT_EQ(decode_error(no_out), "needs an out handle");
  EXPECT_EQ(decode_error(spec("conv", OpScope::kTile, {}, 1)), "unknown op kind 'conv'");
  EXPECT_EQ(decode_error(spec("gemm", OpScope::kTile, {{"b", 2}}, 3, mnk(1, 1, 1))),
            "missing operand 'a'");
  EXPECT_EQ(decode_error(spec("gemm", OpScope::kTile, {{"a", 1}}, 3, mnk(1, 1, 1))),
            "missing operand 'b'");
  EXPECT_EQ(decode_error(spec("gemm", OpScope::kTile, {{"a", 1}, {"b", 2}}, 3, {{"n", int64_t(1)}, {"k", int64_t(1)}})),
            "needs int extra 'm'");
  // The wrong type is as good as missing.
  EXPECT_EQ(decode_error(spec("gemm", OpScope::kTile, {{"a", 1}, {"b", 2}}, 3,
                              {{"m", int64_t(1)}, {"n", 1.0}, {"k", int64_t(1)}})),
            "needs int extra 'n'");
  EXPECT_EQ(decode_error(spec("gemm", OpScope::kTile, {{"a", 1}, {"b", 2}}, 3,
                              {{"m", int64_t(1)}, {"n", int64_t(1)}, {"k", true}})),
            "needs int extra 'k'");
  EXPECT_EQ(decode_error(spec("add", OpScope::kTile, {{"src_a", 1}, {"src_b", 2}, {"src_a", 3}}, 4)),
            "takes at most two operands");
  EXPECT_EQ(decode_error(spec("exp", OpScope::kTile, {{"src_a", 1}, {"src_b", 2}}, 4)),
            "exp takes 1 operand(s), got 2");
  EXPECT_EQ(decode_error(spec("mul_bcast", OpScope::kTile, {{"src_a", 1}}, 4)),
            "mul_bcast takes 2 operand(s), got 1");
  EXPECT_EQ(math_arity_error(MathOp::kFill, 1), "fill takes 0 operand(s), got 1");
}

TEST(TypedOpDecode, GemmTakesExactlyAAndB) {
  // Such an operand was never checked against the table, yet read by the
  // uninitialised-read check past its buffer: refused.
  EXPECT_EQ(decode_error(spec("gemm", OpScope::kTile, {{"a", 1}, {"b", 2}, {"bias", 4}}, 3, mnk(1, 1, 1))),
            "unexpected operand 'bias' (a gemm op takes a and b)");
  EXPECT_EQ(decode_error(spec("gemm", OpScope::kTile, {{"a", 1}, {"b", 2}, {"a", 4}}, 3, mnk(1, 1, 1))),
            "duplicate operand 'a'");
  const std::string long_name(300, 'q');
  EXPECT_EQ(decode_error(spec("gemm", OpScope::kTile, {{"a", 1}, {"b", 2}, {long_name, 4}}, 3, mnk(1, 1, 1))),
            "unexpected operand '" + std::string(200, 'q') + "... (300 bytes)' (a gemm op takes a and b)");
}

TEST(TypedOpDecode, AtMostOneTileScopeGemmAcrossOps) {
  OpDecoder d;
  TypedOp op;
  std::string why;
  const OpSpec tile = spec("gemm", OpScope::kTile, {{"a", 1}, {"b", 2}}, 3, mnk(1, 1, 1));
  const OpSpec epilogue = spec("gemm", OpScope::kEpilogue, {{"a", 1}, {"b", 2}}, 3, mnk(1, 1, 1));
  EXPECT_TRUE(d.decode(epilogue, &op, &why)) << why;  // other scopes do not count
  EXPECT_TRUE(d.decode(tile, &op, &why)) << why;
  EXPECT_TRUE(d.decode(epilogue, &op, &why)) << why;
  EXPECT_FALSE(d.decode(tile, &op, &why));
  EXPECT_EQ(why, "a composite has at most one tile-scope gemm");
  // A failed tile gemm does not count as the composite's one.
  OpDecoder fresh;
  OpSpec broken = tile;
  broken.extra.clear();
  EXPECT_FALSE(fresh.decode(broken, &op, &why));
  EXPECT_TRUE(fresh.decode(tile, &op, &why)) << why;
}

TEST(TypedOpDecode, DecodeOpsNamesTheFailingOp) {
  CompositeCmd c;
  c.name = "c";
  c.ops = {spec("exp", OpScope::kPrologue, {{"src_a", 1}}, 1), spec("gemm", OpScope::kTile, {{"a", 1}}, 3, mnk(1, 1, 1))};
  std::vector<TypedOp> ops;
  size_t bad = 99;
  std::string why;
  EXPECT_FALSE(decode_ops(c, &ops, &bad, &why));
  EXPECT_EQ(bad, 1u);
  EXPECT_EQ(why, "missing operand 'b'");
  EXPECT_TRUE(ops.empty());
  std::vector<TypedOp> scratch;
  try {
    typed_ops(c, scratch);
    ADD_FAILURE() << "typed_ops decoded a malformed composite";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "CompositeCmd 'c' op 1: missing operand 'b'");
  }
}

TEST(TypedOpDecode, TypedOpsUsesTheDispatchDecodeElseDecodesIntoScratch) {
  CompositeCmd c;
  c.ops = {spec("exp", OpScope::kPrologue, {{"src_a", 5}}, 6)};
  std::vector<TypedOp> scratch;
  const std::vector<TypedOp>& fresh = typed_ops(c, scratch);
  EXPECT_EQ(&fresh, &scratch);
  ASSERT_EQ(fresh.size(), 1u);
  EXPECT_EQ(fresh[0].math, MathOp::kExp);
  c.typed = scratch;
  c.typed[0].out = 42;  // what dispatch stored is what the plan reads
  std::vector<TypedOp> unused;
  const std::vector<TypedOp>& stored = typed_ops(c, unused);
  EXPECT_EQ(&stored, &c.typed);
  EXPECT_EQ(stored[0].out, 42u);
  EXPECT_TRUE(unused.empty());
}

// --- through check_command, against a descriptor table

struct Tensors {
  TensorTable table{1 << 20};
  Handle a = table.declare("a", MemSpace::kTcm, 16, 32, Dtype::kBf16);
  Handle b = table.declare("b", MemSpace::kTcm, 32, 8, Dtype::kBf16);
  Handle c = table.declare("c", MemSpace::kTcm, 16, 8, Dtype::kBf16);
  Handle col = table.declare("col", MemSpace::kTcm, 16, 1, Dtype::kBf16);
};

std::string check_error(Command cmd, const TensorTable& t) {
  try {
    check_command(cmd, t);
  } catch (const KernelError& e) {
    EXPECT_TRUE(std::get<CompositeCmd>(cmd).typed.empty()) << "a refused composite keeps no decode";
    return e.what();
  }
  ADD_FAILURE() << "accepted";
  return "";
}

TEST(TypedOpCheck, DispatchCheckStoresTheDecodedOps) {
  Tensors t;
  CompositeCmd c;
  c.name = "fused";
  c.ops = {spec("rowmax", OpScope::kPrologue, {{"src_a", t.c}}, t.col),
           spec("gemm", OpScope::kTile, {{"a", t.a}, {"b", t.b}}, t.c, mnk(16, 8, 32)),
           spec("sub_bcast", OpScope::kTile, {{"src_a", t.c}, {"src_b", t.col}}, t.c),
           spec("scale", OpScope::kEpilogue, {{"src_a", t.c}}, t.c, {{"factor", 0.5}})};
  c.rw_handles = {t.c};
  Command cmd(c);
  check_command(cmd, t.table);
  const CompositeCmd& checked = std::get<CompositeCmd>(cmd);
  ASSERT_EQ(checked.typed.size(), 4u);
  EXPECT_EQ(checked.typed[0].math, MathOp::kRowMax);
  EXPECT_EQ(checked.typed[0].out, t.col);
  EXPECT_TRUE(checked.typed[1].is_gemm());
  EXPECT_EQ(checked.typed[1].a(), t.a);
  EXPECT_EQ(checked.typed[1].gemm.k, 32);
  EXPECT_EQ(checked.typed[2].math, MathOp::kSubBcast);
  EXPECT_EQ(checked.typed[2].in[1], t.col);
  EXPECT_EQ(checked.typed[3].attrs.factor, 0.5);
  // The text form and its D2 size are untouched.
  EXPECT_EQ(logical_bytes(cmd), c.logical_bytes());
}

TEST(TypedOpCheck, RefusalsNameTheCompositeAndOp) {
  Tensors t;
  CompositeCmd c;
  c.name = "bad";
  c.ops = {spec("exp", OpScope::kPrologue, {{"src_a", t.c}}, t.c),
           spec("gemm", OpScope::kTile, {{"a", t.a}}, t.c, mnk(16, 8, 32))};
  EXPECT_EQ(check_error(c, t.table), "CompositeCmd 'bad' op 1 (gemm, tile): missing operand 'b'");
  c.ops[1] = spec("gemm", OpScope::kTile, {{"a", t.a}, {"b", t.b}}, t.c, {{"m", int64_t(16)}, {"n", int64_t(8)}});
  EXPECT_EQ(check_error(c, t.table), "CompositeCmd 'bad' op 1 (gemm, tile): needs int extra 'k'");
  c.ops[1] = spec("softmax", OpScope::kEpilogue, {{"src_a", t.c}}, t.c);
  EXPECT_EQ(check_error(c, t.table), "CompositeCmd 'bad' op 1 (softmax, epilogue): unknown op kind 'softmax'");
  c.ops[1] = spec("exp", OpScope::kEpilogue, {}, t.c);
  EXPECT_EQ(check_error(c, t.table), "CompositeCmd 'bad' op 1 (exp, epilogue): exp takes 1 operand(s), got 0");
  // Table checks still follow the decode, with the decoded m/n/k.
  c.ops[1] = spec("gemm", OpScope::kTile, {{"a", t.a}, {"b", t.b}}, t.c, mnk(16, 8, 31));
  EXPECT_EQ(check_error(c, t.table),
            "CompositeCmd 'bad' op 1 (gemm, tile): m/n/k = 16/8/31 do not match the operands (16/8/32)");
  // ... and an op before a malformed one is checked first, as before.
  c.ops[0] = spec("exp", OpScope::kPrologue, {{"src_a", t.a}}, t.c);
  c.ops[1] = spec("gemm", OpScope::kTile, {{"a", t.a}}, t.c, mnk(16, 8, 32));
  EXPECT_THAT(check_error(c, t.table), HasSubstr("CompositeCmd 'bad' op 0 (exp, prologue): shape mismatch"));
}

}  // namespace
}  // namespace kb
