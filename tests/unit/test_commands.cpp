// docs/cost-model.md D2: logical_bytes of every command type, including the
// document's own examples (54-byte single-OpSpec GEMM composite; mul_bcast
// counting O three times with no de-duplication).
#include <gtest/gtest.h>

#include <gmock/gmock.h>

#include <limits>

#include "models/isa/commands.h"
#include "models/pe/engines/engine_timing.h"
#include "models/pe/engines/pe_dma.h"
#include "models/pe/engines/pe_gemm.h"
#include "models/pe/engines/pe_math.h"
#include "models/pe/engines/pe_tcm.h"
#include "models/isa/tensor_table.h"

namespace kb {
namespace {

OpSpec gemm_op(Handle a, Handle b, Handle out) {
  OpSpec op;
  op.kind = "gemm";
  op.scope = OpScope::kTile;
  op.operands = {{"a", a}, {"b", b}};
  op.has_out = true;
  op.out = out;
  op.extra = {{"m", int64_t(64)}, {"k", int64_t(64)}, {"n", int64_t(64)}};
  return op;
}

TEST(LogicalBytes, AdrAnchorSingleOpSpecGemmCompositeIs54) {
  const OpSpec op = gemm_op(1, 2, 3);
  // opcode 1 + scope 1 + 1 + 2 handles 16 + out 8 + 1 + m/k/n 12 (D3 table)
  EXPECT_EQ(op.logical_bytes(), 40u);
  CompositeCmd c;
  c.ops = {op};
  c.rw_handles = {3};
  // framing 4 + 1 + 40 + 1 + 8
  EXPECT_EQ(c.logical_bytes(), 54u);
  EXPECT_EQ(logical_bytes(Command{c}), 54u);
}

TEST(LogicalBytes, MulBcastCountsEveryReferenceWithoutDedup) {
  const Handle O = 7, corr = 8;
  OpSpec op;
  op.kind = "mul_bcast";
  op.operands = {{"src_a", O}, {"src_b", corr}};
  op.has_out = true;
  op.out = O;
  // O as src_a and as out: both counted.
  EXPECT_EQ(op.logical_bytes(), 1u + 1 + 1 + 2 * 8 + 8 + 1);
  OpSpec distinct = op;
  distinct.out = 9;  // a different handle costs the same: no de-duplication
  EXPECT_EQ(distinct.logical_bytes(), op.logical_bytes());

  CompositeCmd without_rw;
  without_rw.ops = {op};
  CompositeCmd with_rw = without_rw;
  with_rw.rw_handles = {O};  // the third reference to O
  EXPECT_EQ(with_rw.logical_bytes(), without_rw.logical_bytes() + 8);
  EXPECT_EQ(with_rw.logical_bytes(), 4u + 1 + op.logical_bytes() + 1 + 8);
}

TEST(LogicalBytes, ExtrasAreTypeAware) {
  EXPECT_EQ(extra_bytes(ExtraValue{true}), 1u);
  EXPECT_EQ(extra_bytes(ExtraValue{int64_t(3)}), 4u);
  EXPECT_EQ(extra_bytes(ExtraValue{1.0}), 4u);
  EXPECT_EQ(extra_bytes(ExtraValue{std::vector<int64_t>{64, 64}}), 1u + 8);  // shape=(64, 64)
  EXPECT_EQ(extra_bytes(ExtraValue{std::vector<int64_t>{}}), 1u);
  EXPECT_EQ(extra_bytes(ExtraValue{std::string("rows")}), 1u);
  EXPECT_EQ(extras_bytes({}), 1u);  // the tuple length marker alone
  EXPECT_EQ(extras_bytes({{"reduce_axis", int64_t(1)}, {"factor", 1.0}, {"flag", false}}),
            1u + 4 + 4 + 1);
}

TEST(LogicalBytes, OpSpecWithoutOutOmitsTheOutHandle) {
  OpSpec op = gemm_op(1, 2, 3);
  op.has_out = false;
  EXPECT_EQ(op.logical_bytes(), 32u);
}

TEST(LogicalBytes, CompositeSumsOpsAndRwHandles) {
  CompositeCmd c;
  EXPECT_EQ(c.logical_bytes(), 4u + 1 + 1);  // empty: framing + two length markers
  c.ops = {gemm_op(1, 2, 3), gemm_op(4, 5, 6)};
  c.rw_handles = {3, 6, 1};
  EXPECT_EQ(c.logical_bytes(), 4u + 1 + 2 * 40 + 1 + 3 * 8);
  c.name = "a much longer name that is not part of the descriptor";
  EXPECT_EQ(c.logical_bytes(), 4u + 1 + 2 * 40 + 1 + 3 * 8);
}

TEST(LogicalBytes, SingleOpCommands) {
  EXPECT_EQ(DmaReadCmd{}.logical_bytes(), 4u + 8 + 8);
  EXPECT_EQ(DmaWriteCmd{}.logical_bytes(), 4u + 8 + 8);
  EXPECT_EQ(CopyCmd{}.logical_bytes(), 4u + 8 + 8);
  EXPECT_EQ(GemmCmd{}.logical_bytes(), 4u + 3 * 8 + 3 * 4 + 2);
  MathCmd unary;
  unary.op = MathOp::kExp;
  unary.operands = {1};
  EXPECT_EQ(unary.logical_bytes(), 4u + 1 + 1 + 8 + 8 + 1);
  MathCmd binary = unary;
  binary.op = MathOp::kAdd;
  binary.operands = {1, 2};
  EXPECT_EQ(binary.logical_bytes(), unary.logical_bytes() + 8);
  MathCmd scaled = unary;
  scaled.extra = {{"factor", 0.5}};
  EXPECT_EQ(scaled.logical_bytes(), unary.logical_bytes() + 4);
  EXPECT_EQ(CpuOverheadCmd{100}.logical_bytes(), 0u);
  EXPECT_EQ(SendCmd{}.logical_bytes(), 4u + 8 + 4);  // framing, handle, peer
  EXPECT_EQ(RecvCmd{}.logical_bytes(), 4u + 8 + 4);
}

TEST(Commands, HandleAccessOfACompositeIncludesRwHandlesBothWays) {
  CompositeCmd c;
  c.ops = {gemm_op(1, 2, 3)};
  c.rw_handles = {4};
  const HandleAccess a = handle_access(Command{c});
  EXPECT_EQ(a.reads, (std::vector<Handle>{1, 2, 4}));
  EXPECT_EQ(a.writes, (std::vector<Handle>{3, 4}));
}

// Ops of a composite share tensors; each is listed once
// (its first place), so the scheduler makes one byte range per tensor.
TEST(Commands, HandleAccessOfACompositeNamesEachTensorOnceInFirstUseOrder) {
  CompositeCmd c;
  c.ops = {gemm_op(1, 2, 3), gemm_op(3, 1, 5), gemm_op(2, 2, 3)};
  c.rw_handles = {5, 6};
  const HandleAccess a = handle_access(Command{c});
  EXPECT_EQ(a.reads, (std::vector<Handle>{1, 2, 3, 5, 6}));
  EXPECT_EQ(a.writes, (std::vector<Handle>{3, 5, 6}));
}

TEST(Commands, AccumulatingDotReadsItsOutput) {
  GemmCmd g;
  g.a = 1;
  g.b = 2;
  g.out = 3;
  g.accumulate = true;
  EXPECT_EQ(handle_access(Command{g}).reads, (std::vector<Handle>{1, 2, 3}));
  g.accumulate = false;
  EXPECT_EQ(handle_access(Command{g}).reads, (std::vector<Handle>{1, 2}));
}

// The wire format's opcodes (docs/descriptors.md), written out here, not
// taken from the table: a row inserted or reordered in math_ops.h must not
// renumber a descriptor. A new op adds its line.
TEST(Commands, MathOpcodesArePinned) {
  const std::pair<const char*, int> pinned[] = {
      {"add", 0},       {"sub", 1},        {"mul", 2},  {"max", 3},    {"div", 4},
      {"add_bcast", 5}, {"sub_bcast", 6},  {"mul_bcast", 7}, {"div_bcast", 8}, {"exp", 9},
      {"scale", 10},    {"fill", 11},      {"rowmax", 12}, {"rowsum", 13},
  };
  ASSERT_EQ(std::size(pinned), size_t(kNumMathOps)) << "a math op without a pinned opcode";
  for (const auto& [name, code] : pinned) {
    MathOp op{};
    ASSERT_TRUE(math_op_from_string(name, &op)) << name;
    EXPECT_EQ(math_opcode(op), code) << name;
    MathOp back{};
    ASSERT_TRUE(math_op_from_opcode(uint8_t(code), &back)) << name;
    EXPECT_EQ(back, op) << name;
  }
  MathOp unused{};
  EXPECT_FALSE(math_op_from_opcode(uint8_t(kNumMathOps), &unused));
  EXPECT_FALSE(math_op_from_opcode(255, &unused));
}

// What the rows say of each op, held against what the ops are.
TEST(Commands, MathOpRowsDescribeTheOps) {
  for (const MathOpInfo& r : kMathOps) {
    const std::string name(r.name);
    const bool bcast = name.size() > 6 && name.compare(name.size() - 6, 6, "_bcast") == 0;
    EXPECT_EQ(r.shape == MathShape::kBroadcastColumn, bcast) << name;
    EXPECT_EQ(r.shape == MathShape::kRowReduction, name == "rowmax" || name == "rowsum") << name;
    EXPECT_EQ(r.cost == MathCost::kTranscendental, name == "exp" || name == "div" || name == "div_bcast") << name;
    EXPECT_EQ(r.attr != MathAttr::kNone, name == "scale" || name == "fill") << name;
  }
  // The arithmetic data mode computes with.
  const auto& info = [](MathOp op) -> const MathOpInfo& { return math_op_info(op); };
  EXPECT_EQ(info(MathOp::kSub).apply(5, 3, 0), 2.0f);
  EXPECT_EQ(info(MathOp::kDivBcast).apply(6, 3, 0), 2.0f);
  EXPECT_EQ(info(MathOp::kMax).apply(-1, 2, 0), 2.0f);
  EXPECT_EQ(info(MathOp::kScale).apply(3, 0, 0.5f), 1.5f);
  EXPECT_EQ(info(MathOp::kFill).apply(3, 4, 7), 7.0f);
  EXPECT_EQ(info(MathOp::kRowMax).reduce_init, -std::numeric_limits<float>::infinity());
  EXPECT_EQ(info(MathOp::kRowSum).reduce_init, 0.0f);
}

TEST(Commands, MathOpNamesRoundTrip) {
  for (int i = 0; i < kNumMathOps; ++i) {
    MathOp back{};
    ASSERT_TRUE(math_op_from_string(to_string(MathOp(i)), &back)) << i;
    EXPECT_EQ(int(back), i);
  }
  MathOp unused{};
  EXPECT_FALSE(math_op_from_string("softmax", &unused));
  // Names that share a first letter, a prefix, the length and first letter
  // of a name (differing later), or are empty.
  for (const char* name : {"", "a", "ad", "add_", "addbcast", "row", "rowmaxx", "s", "sub_bcas", "exq", "mux",
                           "rowmay", "div_bcasT", "addX"}) {
    EXPECT_FALSE(math_op_from_string(name, &unused)) << name;
  }
}

// same_name is string equality: over names of equal and differing lengths,
// shared prefixes and a difference in the last letter.
TEST(Commands, SameNameIsStringEquality) {
  const char* names[] = {"", "m", "n", "factor", "factoR", "facto", "value", "transpose_b", "transpose_a",
                         "accumulate", "src_a"};
  for (const char* a : names) {
    for (const char* b : names) {
      EXPECT_EQ(same_name(a, b), std::string_view(a) == std::string_view(b)) << a << " / " << b;
    }
  }
}

// MathCmd::operands: inline up to two, every element kept
// in order past that, copies and moves that keep or hand over the handles.
TEST(HandleList, BehavesAsAVectorOfHandles) {
  for (size_t n = 0; n <= 5; ++n) {
    std::vector<Handle> want;
    HandleList l;
    for (size_t i = 0; i < n; ++i) {
      want.push_back(100 + i);
      l.push_back(100 + i);
    }
    ASSERT_EQ(l.size(), n);
    EXPECT_EQ(l.empty(), n == 0);
    EXPECT_EQ(std::vector<Handle>(l.begin(), l.end()), want);
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(l[i], want[i]);
    EXPECT_EQ(HandleList(want), l);  // from a vector
    const HandleList copy = l;
    EXPECT_EQ(copy, l);
    HandleList assigned{7};
    assigned = l;
    EXPECT_EQ(assigned, l);
    HandleList moved = std::move(assigned);
    EXPECT_EQ(moved, l);
    EXPECT_TRUE(assigned.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
    HandleList move_assigned{1, 2, 3};
    move_assigned = std::move(moved);
    EXPECT_EQ(move_assigned, l);
    EXPECT_TRUE(moved.empty());  // NOLINT(bugprone-use-after-move)
    for (Handle& h : move_assigned) h += 1;  // writable in place (replay rebinds handles)
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(move_assigned[i], want[i] + 1);
    move_assigned.clear();
    EXPECT_TRUE(move_assigned.empty());
    move_assigned.push_back(9);
    EXPECT_EQ(move_assigned, HandleList{9});
  }
  EXPECT_NE((HandleList{1, 2}), (HandleList{1, 2, 3}));
  EXPECT_NE((HandleList{1, 2}), (HandleList{2, 1}));
  // D2 counts every operand, however many a malformed command carries.
  MathCmd m;
  m.operands = {1, 2, 3};
  EXPECT_EQ(m.logical_bytes(), 4u + 1u + (1u + 3u * 8u) + 8u + 1u);
}

// Views are written into their ring slot field by field:
// a view of the oldest live view, whose slot it takes, still derives from
// that view's fields; a reused slot keeps nothing of what it held.
TEST(TensorTableView, ReusedSlotHoldsOnlyTheNewView) {
  TensorTable t(1 << 24);
  const Handle base = t.declare("base", MemSpace::kTcm, 64, 96, Dtype::kBf16);
  const Handle named = t.view(base, 2, 4, 8, 16, "named");  // slot 0
  EXPECT_EQ(t.name_of(t.at(named)), "named");
  for (uint64_t i = 1; i < kViewCapacity; ++i) t.view(base, 0, 1, 0, 96);
  const TensorDesc oldest = t.at(named);
  // The next view takes slot 0: a view of the view there.
  const Handle v = t.view(named, 1, 2, 3, 4);
  EXPECT_FALSE(t.contains(named));
  const TensorDesc& d = t.at(v);
  EXPECT_EQ(d.handle, v);
  EXPECT_TRUE(d.name.empty());
  EXPECT_EQ(d.space, MemSpace::kTcm);
  EXPECT_EQ(d.dtype, Dtype::kBf16);
  EXPECT_EQ(d.rows, 2);
  EXPECT_EQ(d.cols, 4);
  EXPECT_EQ(d.row_stride, 96);
  EXPECT_EQ(d.address, oldest.address + (1u * 96u + 3u) * 2u);
  EXPECT_EQ(d.base, named);
  EXPECT_EQ(d.row0, 1);
  EXPECT_EQ(d.col0, 3);
  EXPECT_EQ(t.name_of(d), "view");  // its base went stale
  // An out-of-bounds view changes no slot.
  EXPECT_THROW(t.view(v, 0, 3, 0, 4), KernelError);
  EXPECT_EQ(t.at(v).rows, 2);
}

// The ring is made once, and only when asked (reserve_views, at PE_CPU's
// launch) or at the first view: a table that does neither holds none, and
// reserving again keeps the views made.
TEST(TensorTableView, RingMadeWhenReservedOrAtTheFirstView) {
  TensorTable lazy(1 << 24);
  const Handle base = lazy.declare("base", MemSpace::kTcm, 64, 96, Dtype::kBf16);
  EXPECT_FALSE(lazy.has_view_ring());
  EXPECT_FALSE(lazy.contains(kViewHandleBit | 0));  // no view yet, no ring read
  const Handle v = lazy.view(base, 0, 8, 0, 16);
  EXPECT_TRUE(lazy.has_view_ring());
  EXPECT_EQ(lazy.at(v).rows, 8);

  TensorTable reserved(1 << 24);
  reserved.reserve_views();
  EXPECT_TRUE(reserved.has_view_ring());
  const Handle b2 = reserved.declare("base", MemSpace::kTcm, 64, 96, Dtype::kBf16);
  const Handle w = reserved.view(b2, 1, 2, 3, 4, "w");
  reserved.reserve_views();
  EXPECT_EQ(reserved.name_of(reserved.at(w)), "w");
  EXPECT_EQ(reserved.at(w).col0, 3);
}

// --- engine timing with checked arithmetic. Values by hand from
// the formulas of docs/architecture.md ("Engine formulas") with the parameters set here.

PeConfig small_config() {
  PeConfig cfg;
  cfg.gemm.array_rows = 4;
  cfg.gemm.array_cols = 8;
  cfg.math.lanes = 16;
  cfg.math.pipeline_latency_cycles = 3;
  cfg.math.elementwise_cycles = 2;
  cfg.tcm.bytes_per_cycle = 64.0;
  cfg.tcm.latency_cycles = 5;
  return cfg;
}

TEST(EngineTiming, GemmByHand) {
  const PeConfig cfg = small_config();
  // ceil(10/4) x ceil(17/8) x 7 + 4 + 8 = 3 x 3 x 7 + 12
  EXPECT_EQ(gemm_cycles(cfg, 10, 17, 7), 75u);
  EXPECT_EQ(gemm_cycles(cfg, 4, 8, 1), 13u);  // 1 x 1 x 1 + 12
}

TEST(EngineTiming, ReductionDepthIsCeilLog2InIntegers) {
  const PeConfig cfg = small_config();
  // 3 + ceil(elements / 16) x 2 + ceil(log2(row_len))
  EXPECT_EQ(math_cycles(cfg, MathOp::kRowSum, 32, 32), 3u + 4u + 5u);
  EXPECT_EQ(math_cycles(cfg, MathOp::kRowSum, 33, 33), 3u + 6u + 6u);
  EXPECT_EQ(math_cycles(cfg, MathOp::kRowMax, 1, 1), 3u + 2u);
  // 2^53 + 1 is not a double: log2 in floating point rounds it to 53.
  const int64_t n = (int64_t(1) << 53) + 1;
  EXPECT_EQ(math_cycles(cfg, MathOp::kRowMax, 16, n), 3u + 2u + 54u);
}

TEST(EngineTiming, TcmByHand) {
  const PeConfig cfg = small_config();
  EXPECT_EQ(tcm_cycles(cfg, 128), 5u + 2u);
  EXPECT_EQ(tcm_cycles(cfg, 129), 5u + 3u);
  EXPECT_EQ(tcm_cycles(cfg, 0), 5u);
}

// A GEMM whose cycles exceed 64 bits was reported as 2^63 ps; now an error.
TEST(EngineTiming, HugeGemmIsAnError) {
  const PeConfig cfg = small_config();
  const int64_t big = int64_t(1) << 40;
  try {
    gemm_cycles(cfg, big, big, big);
    FAIL();
  } catch (const KernelError& e) {
    EXPECT_STREQ(e.what(), "GEMM: the cycle count does not fit in 64 bits");
  }
  EXPECT_THROW(gemm_cycles(cfg, -1, 8, 8), KernelError);
  // The largest that fits is still exact: 1 x 1 x (2^64 - 1 - 12) + 12.
  const uint64_t k = std::numeric_limits<uint64_t>::max() - 12;
  EXPECT_EQ(gemm_cycles(cfg, 4, 8, int64_t(std::min<uint64_t>(k, uint64_t(INT64_MAX)))),
            uint64_t(INT64_MAX) + 12u);
}

// bytes / a vanishing bandwidth was a float-to-int overflow (undefined; seen
// as a latency lower than the default's); now an error naming the transfer.
TEST(EngineTiming, TransferAtAVanishingRateIsAnError) {
  PeConfig cfg = small_config();
  cfg.tcm.bytes_per_cycle = 1e-300;
  try {
    tcm_cycles(cfg, 8192);
    FAIL();
  } catch (const KernelError& e) {
    EXPECT_STREQ(e.what(), "8192 bytes at 1e-300 bytes per cycle: the cycle count does not fit in 64 bits");
  }
  EXPECT_THROW(ceil_div_real(1, 0.0), KernelError);  // infinity
  EXPECT_THROW(ceil_div_real(1, std::numeric_limits<double>::quiet_NaN()), KernelError);
  EXPECT_EQ(ceil_div_real(1000, 204.8), 5u);
}

TEST(EngineTiming, CeilDivDoesNotWrap) {
  EXPECT_EQ(ceil_div(std::numeric_limits<uint64_t>::max(), 2), uint64_t(1) << 63);
  EXPECT_EQ(ceil_div(10, 5), 2u);
  EXPECT_EQ(ceil_div(11, 5), 3u);
}

// A record's type name is command_type_name()'s own string (found by its
// address) or any other text (found by comparing); both give the index.
TEST(CommandTypeIndex, ByAddressAndByText) {
  for (int t = 0; t < kNumCommandTypes; ++t) {
    const char* own = command_type_name(t);
    const std::string copy = own;
    EXPECT_EQ(command_type_index(own), t);
    EXPECT_EQ(command_type_index(copy.c_str()), t) << copy;
    EXPECT_EQ(command_type_index(std::string_view(copy)), t) << copy;
  }
  EXPECT_EQ(command_type_index(""), -1);
  EXPECT_EQ(command_type_index("GemmCm"), -1);
  EXPECT_EQ(command_type_index(std::string("GemmCmdX").c_str()), -1);
}

}  // namespace
}  // namespace kb
