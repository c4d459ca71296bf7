// A composite's OpSpecs are decoded once, at dispatch
// (check_command), into TypedOps: the op kind as an enum, operands by role,
// typed attributes. Decoding each kind gives the typed fields; a malformed
// op is refused with the message check_command has always given.
#include <gtest/gtest.h>

#include <gmock/gmock.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "models/isa/command_check.h"
#include "models/isa/commands.h"
#include "models/isa/descriptor.h"
#include "models/isa/tensor_table.h"
#include "models/tl/tl.h"

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

// --- built typed (tl's typed builders, docs/conventions.md 13): a typed op
// stands for the OpSpec to_spec makes of it, which is what gemm_op / math_op
// make

Tensor tensor(Handle h, int64_t rows, int64_t cols) { return {h, rows, cols, Dtype::kBf16, MemSpace::kTcm}; }

std::vector<std::pair<TypedOp, OpSpec>> typed_and_text() {
  const Tensor a = tensor(1, 16, 32), b = tensor(2, 32, 8), bt = tensor(3, 8, 32), c = tensor(4, 16, 8),
               col = tensor(5, 16, 1);
  std::vector<std::pair<TypedOp, OpSpec>> v = {
      {typed_gemm_op(OpScope::kTile, c, a, b), gemm_op(OpScope::kTile, c, a, b)},
      {typed_gemm_op(OpScope::kPrologue, c, a, bt, {true, false}), gemm_op(OpScope::kPrologue, c, a, bt, {true, false})},
      {typed_gemm_op(OpScope::kEpilogue, c, a, b, {false, true}), gemm_op(OpScope::kEpilogue, c, a, b, {false, true})},
      {typed_gemm_op(OpScope::kTile, c, a, bt, {true, true}), gemm_op(OpScope::kTile, c, a, bt, {true, true})},
      {typed_math_op(MathOp::kScale, OpScope::kTile, c, {c}, 0.125),
       math_op(MathOp::kScale, OpScope::kTile, c, {c}, {{"factor", 0.125}})},
      {typed_math_op(MathOp::kFill, OpScope::kPrologue, c, {}, -3.5),
       math_op(MathOp::kFill, OpScope::kPrologue, c, {}, {{"value", -3.5}})},
      {typed_math_op(MathOp::kExp, OpScope::kEpilogue, c, {c}), math_op(MathOp::kExp, OpScope::kEpilogue, c, {c})},
      {typed_math_op(MathOp::kRowMax, OpScope::kPrologue, col, {c}),
       math_op(MathOp::kRowMax, OpScope::kPrologue, col, {c})},
      {typed_math_op(MathOp::kSubBcast, OpScope::kTile, c, {c, col}),
       math_op(MathOp::kSubBcast, OpScope::kTile, c, {c, col})},
  };
  return v;
}

TEST(TypedBuild, ATypedOpIsTheOpSpecItStandsFor) {
  for (const auto& [typed, text] : typed_and_text()) {
    SCOPED_TRACE(text.kind);
    const OpSpec made = to_spec(typed);
    EXPECT_EQ(made.kind, text.kind);
    EXPECT_EQ(made.scope, text.scope);
    EXPECT_EQ(made.has_out, text.has_out);
    EXPECT_EQ(made.out, text.out);
    ASSERT_EQ(made.operands.size(), text.operands.size());
    for (size_t i = 0; i < made.operands.size(); ++i) {
      EXPECT_EQ(made.operands[i].name, text.operands[i].name);
      EXPECT_EQ(made.operands[i].handle, text.operands[i].handle);
    }
    ASSERT_EQ(made.extra.size(), text.extra.size());
    for (size_t i = 0; i < made.extra.size(); ++i) {
      EXPECT_EQ(made.extra[i].name, text.extra[i].name);
      EXPECT_TRUE(made.extra[i].value == text.extra[i].value);
    }
    // docs/cost-model.md D2 without the text; decoding the text gives the typed op.
    EXPECT_EQ(typed_logical_bytes(typed), text.logical_bytes());
    const TypedOp decoded = decode_one(text);
    EXPECT_EQ(decoded.kind, typed.kind);
    EXPECT_EQ(decoded.math, typed.math);
    EXPECT_EQ(decoded.scope, typed.scope);
    EXPECT_EQ(decoded.inputs, typed.inputs);
    for (int i = 0; i < typed.inputs; ++i) EXPECT_EQ(decoded.in[i], typed.in[i]);
    EXPECT_EQ(decoded.out, typed.out);
    EXPECT_EQ(decoded.gemm.m, typed.gemm.m);
    EXPECT_EQ(decoded.gemm.n, typed.gemm.n);
    EXPECT_EQ(decoded.gemm.k, typed.gemm.k);
    EXPECT_EQ(decoded.gemm.transpose_b, typed.gemm.transpose_b);
    EXPECT_EQ(decoded.gemm.accumulate, typed.gemm.accumulate);
    EXPECT_EQ(decoded.attrs.factor, typed.attrs.factor);
    EXPECT_EQ(decoded.attrs.value, typed.attrs.value);
  }
}

// A composite built typed and its text twin: the same D2 size, descriptor
// bytes and handle access (what PE_CPU charges and PE_SCHEDULER orders by).
TEST(TypedBuild, ACompositeBuiltTypedHasItsTextTwinsBytesAndAccess) {
  CompositeCmd typed, text;
  typed.name = text.name = "twin";
  for (const auto& [t, s] : typed_and_text()) {
    if (t.is_gemm() && t.scope == OpScope::kTile && !typed.typed.empty()) continue;  // one tile gemm
    typed.typed.push_back(t);
    text.ops.push_back(s);
  }
  typed.rw_handles = text.rw_handles = {4, 5};
  ASSERT_TRUE(typed.built_typed());
  ASSERT_FALSE(text.built_typed());
  EXPECT_EQ(typed.op_count(), text.op_count());
  EXPECT_EQ(typed.logical_bytes(), text.logical_bytes());
  EXPECT_EQ(desc::encode(Command(typed), 77), desc::encode(Command(text), 77));
  const HandleAccess ta = handle_access(Command(typed)), xa = handle_access(Command(text));
  EXPECT_EQ(ta.reads, xa.reads);
  EXPECT_EQ(ta.writes, xa.writes);
  std::vector<TypedOp> scratch;
  EXPECT_EQ(&typed_ops(typed, scratch), &typed.typed);  // no decode: the ops themselves
}

TEST(TypedBuild, CheckCommandChecksWhatTheTypeDoesNotAndKeepsTheOps) {
  Tensors t;
  const Tensor a = tensor(t.a, 16, 32), b = tensor(t.b, 32, 8), c = tensor(t.c, 16, 8), col = tensor(t.col, 16, 1);
  CompositeCmd comp;
  comp.name = "fused";
  comp.typed = {typed_math_op(MathOp::kRowMax, OpScope::kPrologue, col, {c}), typed_gemm_op(OpScope::kTile, c, a, b),
                typed_math_op(MathOp::kScale, OpScope::kEpilogue, c, {c}, 0.5)};
  Command ok(comp);
  check_command(ok, t.table);
  EXPECT_EQ(std::get<CompositeCmd>(ok).typed.size(), 3u);
  EXPECT_TRUE(std::get<CompositeCmd>(ok).ops.empty());
  // Refusals name the op as the text's do.
  comp.typed.push_back(typed_gemm_op(OpScope::kTile, c, a, b));
  Command two_tiles(comp);
  try {
    check_command(two_tiles, t.table);
    ADD_FAILURE() << "accepted";
  } catch (const KernelError& e) {
    EXPECT_STREQ(e.what(), "CompositeCmd 'fused' op 3 (gemm, tile): a composite has at most one tile-scope gemm");
  }
  comp.typed.pop_back();
  comp.typed[1].inputs = 1;  // a gemm without b (not what typed_gemm_op makes): refused, not read as b = 0
  Command no_b(comp);
  try {
    check_command(no_b, t.table);
    ADD_FAILURE() << "accepted";
  } catch (const KernelError& e) {
    EXPECT_STREQ(e.what(), "CompositeCmd 'fused' op 1 (gemm, tile): a gemm op takes operands a and b, got 1 operand(s)");
  }
  comp.typed[1].inputs = 2;
  comp.typed[2].math = MathOp(200);  // no MathOp
  Command unknown(comp);
  try {
    check_command(unknown, t.table);
    ADD_FAILURE() << "accepted";
  } catch (const KernelError& e) {
    EXPECT_STREQ(e.what(), "CompositeCmd 'fused' op 2 (?, epilogue): unknown math op 200");
  }
  comp.typed[2] = typed_math_op(MathOp::kScale, OpScope::kEpilogue, c, {c}, 0.5);
  // The table checks run on typed ops as on decoded ones.
  comp.typed[0] = typed_math_op(MathOp::kRowMax, OpScope::kPrologue, c, {c});
  Command shape(comp);
  try {
    check_command(shape, t.table);
    ADD_FAILURE() << "accepted";
  } catch (const KernelError& e) {
    EXPECT_THAT(e.what(), HasSubstr("CompositeCmd 'fused' op 0 (rowmax, prologue)"));
  }
}

TEST(TypedBuild, AMathOpWithTheWrongOperandCountThrowsAtOnce) {
  const Tensor c = tensor(4, 16, 8);
  EXPECT_THROW(typed_math_op(MathOp::kExp, OpScope::kPrologue, c, {c, c}), KernelError);
  EXPECT_THROW(typed_math_op(MathOp::kAdd, OpScope::kPrologue, c, {c}), KernelError);
  EXPECT_THROW(typed_math_op(MathOp::kAdd, OpScope::kPrologue, c, {c, c, c}), KernelError);
}

}  // namespace
}  // namespace kb
