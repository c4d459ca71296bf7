// Binary descriptors (models/isa/descriptor.h): every command's encoding is
// exactly its docs/cost-model.md D2 logical_bytes(), decoding gives the
// command back, and bytes that are not a descriptor are refused with a
// message that says where and what was expected.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <systemc>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <type_traits>
#include <variant>
#include <string>
#include <vector>

#include "models/isa/descriptor.h"
#include "models/tl/tl.h"
#include "models/top/pe_top.h"
#include "tb/benches/bench_registry.h"
#include "tb/run/runner.h"

namespace kb {
namespace {

std::vector<uint8_t> bytes_of(const Command& c, uint32_t id = 7) { return desc::encode(c, id); }

// decode(encode(c)) re-encodes to the same bytes: the layout holds every field.
void expect_round_trip(const Command& c) {
  const std::vector<uint8_t> b = bytes_of(c, 0x123456);
  EXPECT_EQ(b.size(), logical_bytes(c)) << command_type_name(c);
  const desc::Decoded d = desc::decode(b.data(), b.size());
  EXPECT_EQ(d.completion_id, 0x123456u);
  EXPECT_EQ(d.cmd.index(), c.index());
  EXPECT_EQ(bytes_of(d.cmd, 0x123456), b);
}

TEST(Descriptor, SingleOpCommandsAreTheirLogicalBytes) {
  expect_round_trip(DmaReadCmd{1, uint64_t(1) << 40});
  expect_round_trip(DmaWriteCmd{uint64_t(1) << 40, 2});
  expect_round_trip(CopyCmd{3, 4});
  GemmCmd g;
  g.a = 1, g.b = 2, g.out = 3, g.m = 128, g.n = 64, g.k = 96, g.transpose_b = true;
  expect_round_trip(g);
  EXPECT_EQ(bytes_of(g).size(), 42u);  // D2: framing 4 + 3 handles + 3 scalars + 2 flags
  MathCmd m;
  m.op = MathOp::kScale, m.operands = {5}, m.out = 6, m.extra = {{"factor", 0.125}};
  expect_round_trip(m);
  MathCmd fill;
  fill.op = MathOp::kFill, fill.out = 6, fill.extra = {{"value", int64_t(3)}};
  expect_round_trip(fill);
  MathCmd add;
  add.op = MathOp::kAddBcast, add.operands = {5, 7}, add.out = 6;
  expect_round_trip(add);
  // SEND and RECV: handle + peer PE, 16 bytes.
  expect_round_trip(SendCmd{7, 0xfffffffe});
  expect_round_trip(RecvCmd{uint64_t(1) << 40, 3});
  EXPECT_EQ(bytes_of(SendCmd{7, 1}).size(), 16u);
  const std::vector<uint8_t> want = {9, 0xef, 0xcd, 0xab, 8, 7, 6, 5, 4, 3, 2, 1, 0x44, 0x33, 0x22, 0x11};
  EXPECT_EQ(bytes_of(RecvCmd{0x0102030405060708, 0x11223344}, 0xabcdef), want);
}

TEST(Descriptor, TypeBytesArePinned) {
  // The wire format: a type's byte never moves (a new command goes last).
  EXPECT_EQ(desc::type_byte<DmaReadCmd>(), 1);
  EXPECT_EQ(desc::type_byte<DmaWriteCmd>(), 2);
  EXPECT_EQ(desc::type_byte<GemmCmd>(), 3);
  EXPECT_EQ(desc::type_byte<MathCmd>(), 4);
  EXPECT_EQ(desc::type_byte<CopyCmd>(), 5);
  EXPECT_EQ(desc::type_byte<CompositeCmd>(), 6);
  EXPECT_FALSE(desc::has_descriptor<CpuOverheadCmd>());  // 7: never written (docs/cost-model.md D5)
  EXPECT_EQ(desc::type_byte<SendCmd>(), 8);
  EXPECT_EQ(desc::type_byte<RecvCmd>(), 9);
}

// Each field of a command of fixed fields set to its own value (flags
// alternate), so a field the layout drops or swaps shows.
template <class T>
T filled(int seed) {
  T c;
  int n = seed;
  for_each_field<T>([&](const auto& f) {
    using M = field_member_t<decltype(f)>;
    if constexpr (std::is_same_v<M, Handle>) c.*(f.member) = Handle(0x1000) * Handle(n) + Handle(n);
    else if constexpr (std::is_same_v<M, bool>) c.*(f.member) = n % 2 == 1;
    else c.*(f.member) = M(n * 3 + 1);
    ++n;
  });
  return c;
}

template <class T>
void expect_fields_round_trip() {
  for (int seed : {1, 2}) {
    const T c = filled<T>(seed);
    SCOPED_TRACE(command_name<T>());
    const std::vector<uint8_t> b = bytes_of(c, 5);
    EXPECT_EQ(b.size(), c.logical_bytes());
    EXPECT_EQ(b[0], desc::type_byte<T>());
    const desc::Decoded d = desc::decode(b.data(), b.size());
    ASSERT_TRUE(std::holds_alternative<T>(d.cmd));
    const T& back = std::get<T>(d.cmd);
    for_each_field<T>([&](const auto& f) { EXPECT_EQ(back.*(f.member), c.*(f.member)) << f.key; });
    // Handle access follows the fields' access (GemmCmd adds out when accumulating).
    const HandleAccess a = handle_access(Command(c));
    for_each_field<T>([&](const auto& f) {
      if constexpr (std::is_same_v<field_member_t<decltype(f)>, Handle>) {
        const std::vector<Handle>& list = f.access == Access::kRead ? a.reads : a.writes;
        EXPECT_NE(std::find(list.begin(), list.end(), c.*(f.member)), list.end()) << f.key;
      }
    });
  }
}

template <class... Ts>
void every_command_of_fields(std::variant<Ts...>*) {
  int tested = 0;
  const auto one = [&](auto* type) {
    using T = std::remove_pointer_t<decltype(type)>;
    if constexpr (has_fields_v<T>) {
      expect_fields_round_trip<T>();
      ++tested;
    }
  };
  (one(static_cast<Ts*>(nullptr)), ...);
  EXPECT_GE(tested, 6);  // at least dma_read, dma_write, gemm, copy, send, recv
}

TEST(Descriptor, EveryCommandOfFixedFieldsRoundTripsFieldForField) {
  every_command_of_fields(static_cast<Command*>(nullptr));
}

TEST(Descriptor, CommandKeywordsAreDistinctAndNamedInTheTable) {
  std::set<std::string> seen;
  for (int t = 0; t < kNumCommandTypes; ++t) {
    EXPECT_TRUE(seen.insert(kCommandKeywords[t]).second) << kCommandKeywords[t];
    EXPECT_EQ(command_type_index(kCommandTypes[t].name), t);
  }
  EXPECT_EQ(seen.size(), std::size(kCommandKeywords));
}

TEST(Descriptor, FieldsLandWhereTheLayoutSays) {
  const std::vector<uint8_t> b = bytes_of(DmaReadCmd{0x0102030405060708, 0x1122334455667788}, 0xabcdef);
  const std::vector<uint8_t> want = {1, 0xef, 0xcd, 0xab, 8, 7, 6, 5, 4, 3, 2, 1,
                                     0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11};
  EXPECT_EQ(b, want);
}

TEST(Descriptor, CompositeOpsByRoleAndSlot) {
  Tensor a{1, 64, 32, Dtype::kBf16, MemSpace::kHbm}, b{2, 32, 48, Dtype::kBf16, MemSpace::kHbm};
  Tensor o{3, 64, 48, Dtype::kFp32, MemSpace::kTcm};
  CompositeCmd c;
  c.name = "recipe";
  c.ops.push_back(gemm_op(OpScope::kTile, o, a, b, DotOptions{false, true}));
  c.ops.push_back(math_op(MathOp::kScale, OpScope::kTile, o, {o}, {{"factor", 0.5}}));
  c.ops.push_back(math_op(MathOp::kRowMax, OpScope::kEpilogue, o, {o}));
  c.rw_handles = {3};
  expect_round_trip(c);
  // Operands listed b first encode by role: the same bytes.
  CompositeCmd swapped = c;
  std::swap(swapped.ops[0].operands[0], swapped.ops[0].operands[1]);
  EXPECT_EQ(bytes_of(swapped), bytes_of(c));
  const desc::Decoded d = desc::decode(bytes_of(c).data(), bytes_of(c).size());
  const auto& back = std::get<CompositeCmd>(d.cmd);
  ASSERT_EQ(back.ops.size(), 3u);
  EXPECT_EQ(back.ops[0].kind, "gemm");
  EXPECT_EQ(back.ops[0].operands[0].name, "a");
  EXPECT_EQ(back.ops[0].operands[1].handle, 2u);
  EXPECT_EQ(back.ops[1].kind, "scale");
  EXPECT_EQ(std::get<double>(back.ops[1].extra[0].value), 0.5);
  EXPECT_EQ(back.ops[2].scope, OpScope::kEpilogue);
  EXPECT_TRUE(back.ops[2].has_out);
}

// Dispatch encodes a composite from its decoded ops (c.typed): the bytes are
// those of the text form, op for op.
TEST(Descriptor, DecodedCompositeEncodesAsItsText) {
  Tensor a{1, 64, 32, Dtype::kBf16, MemSpace::kHbm}, b{2, 48, 32, Dtype::kBf16, MemSpace::kHbm};
  Tensor o{3, 64, 48, Dtype::kFp32, MemSpace::kTcm}, col{4, 64, 1, Dtype::kFp32, MemSpace::kTcm};
  CompositeCmd c;
  c.name = "recipe";
  c.ops.push_back(math_op(MathOp::kFill, OpScope::kPrologue, col, {}, {{"value", 2.0}}));
  c.ops.push_back(gemm_op(OpScope::kTile, o, a, b, DotOptions{true, true}));
  std::swap(c.ops.back().operands[0], c.ops.back().operands[1]);  // b listed first
  c.ops.push_back(math_op(MathOp::kDivBcast, OpScope::kTile, o, {o, col}));
  c.ops.push_back(math_op(MathOp::kScale, OpScope::kEpilogue, o, {o}, {{"factor", 0.25}}));
  c.ops.push_back(math_op(MathOp::kRowSum, OpScope::kEpilogue, col, {o}));
  c.rw_handles = {3, 4};
  const std::vector<uint8_t> text = bytes_of(c);
  size_t bad = 0;
  std::string why;
  ASSERT_TRUE(decode_ops(c, &c.typed, &bad, &why)) << why;
  const auto dispatched = [](const CompositeCmd& cc) {
    std::vector<uint8_t> out;
    desc::encode_dispatched(cc, 7, logical_bytes(cc), out);
    return out;
  };
  EXPECT_EQ(dispatched(c), text);
  // The public encoder reads the text, not decoded ops gone stale.
  CompositeCmd edited = c;
  edited.ops[2].kind = "mul_bcast";
  EXPECT_NE(dispatched(edited), bytes_of(edited));  // the stale kind (div_bcast) is what dispatch would trust
  CompositeCmd fresh = edited;
  fresh.typed.clear();
  EXPECT_EQ(bytes_of(edited), bytes_of(fresh));
  // The extras still come from the text, and are still checked there.
  c.ops[1].extra.push_back({"bias", true});
  EXPECT_THROW(dispatched(c), desc::EncodeError);
}

// PE_CPU hands the encoder the logical bytes it costed; a wrong count is
// refused, never a short or padded descriptor.
TEST(Descriptor, AGivenByteCountMustBeTheLogicalBytes) {
  const Command m = MathCmd{MathOp::kExp, {1}, 2, {}};
  std::vector<uint8_t> out;
  desc::encode_dispatched(m, 5, logical_bytes(m), out);
  EXPECT_EQ(out, bytes_of(m, 5));
  EXPECT_THROW(desc::encode_dispatched(m, 5, logical_bytes(m) - 1, out), desc::EncodeError);
  EXPECT_THROW(desc::encode_dispatched(m, 5, logical_bytes(m) + 1, out), desc::EncodeError);
}

TEST(Descriptor, FieldsThatDoNotFitAreRefusedAtEncode) {
  GemmCmd g;
  g.m = int64_t(1) << 31;
  EXPECT_THROW(bytes_of(g), desc::EncodeError);
  MathCmd m;
  m.op = MathOp::kAdd, m.operands = {1, 2}, m.out = 3, m.extra = {{"factor", 1.0}};
  try {
    bytes_of(m);
    FAIL() << "an extra with no field was encoded";
  } catch (const desc::EncodeError& e) {
    EXPECT_STREQ(e.what(), "add: extra 'factor' has no field in the descriptor");
  }
  EXPECT_THROW(bytes_of(CpuOverheadCmd{5}), desc::EncodeError);
}

struct Malformed {
  std::vector<uint8_t> bytes;
  std::string message;
};

TEST(Descriptor, MalformedBytesAreRefusedSayingWhereAndWhat) {
  std::vector<uint8_t> read = bytes_of(DmaReadCmd{1, 2}, 0);
  std::vector<uint8_t> longer = read;
  longer.push_back(0);
  std::vector<uint8_t> bad_type = read;
  bad_type[0] = 0xEE;  // 7 (tl.cycles) and past the last command are no type
  GemmCmd g;
  g.m = g.n = g.k = 1;
  std::vector<uint8_t> flag = bytes_of(g, 0);
  flag[40] = 2;
  MathCmd m;
  m.op = MathOp::kExp, m.operands = {1}, m.out = 2;
  std::vector<uint8_t> opcode = bytes_of(m, 0);
  opcode[4] = 200;
  std::vector<uint8_t> arity = bytes_of(m, 0);
  arity[5] = 2;
  MathCmd scale;
  scale.op = MathOp::kScale, scale.operands = {1}, scale.out = 2, scale.extra = {{"factor", 0.5}};
  std::vector<uint8_t> snan = bytes_of(scale, 0);
  ASSERT_EQ(snan.size(), 27u);  // the factor's float32 is the last 4 bytes
  snan[23] = 0x01, snan[24] = 0x00, snan[25] = 0x80, snan[26] = 0x7F;  // 0x7F800001
  const Malformed cases[] = {
      {{}, "descriptor of 0 bytes ends inside the framing (byte 0, 1 bytes needed)"},
      {std::vector<uint8_t>(read.begin(), read.end() - 1), "descriptor of 19 bytes ends inside src (byte 12, 8 bytes needed)"},
      {longer, "descriptor of 21 bytes: its fields end at byte 20 (a descriptor is exactly its logical bytes)"},
      {flag, "descriptor byte 40: transpose_b is a flag, 0 or 1, not 2"},
      {opcode, "descriptor byte 5: math opcode 200 is no MathOp (0-" + std::to_string(kNumMathOps - 1) + ")"},
      {arity, "descriptor byte 6: exp takes 1 operands, not 2"},
      {snan, "descriptor byte 23: a math extra is a signaling NaN (0x7f800001); a NaN here must be quiet (bit 22 set)"},
  };
  for (const Malformed& c : cases) {
    try {
      desc::decode(c.bytes.data(), c.bytes.size());
      ADD_FAILURE() << "decoded: " << c.message;
    } catch (const desc::DecodeError& e) {
      EXPECT_EQ(std::string(e.what()), c.message);
    }
  }
  // An unknown type lists the known ones (a new command adds its own after these).
  for (uint8_t type : {uint8_t(0), uint8_t(7), uint8_t(0xEE)}) {
    bad_type[0] = type;
    try {
      desc::decode(bad_type.data(), bad_type.size());
      ADD_FAILURE() << "decoded type " << int(type);
    } catch (const desc::DecodeError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind("descriptor type " + std::to_string(type) +
                               " is unknown (1 dma_read, 2 dma_write, 3 gemm, 4 math, 5 copy, 6 composite, 8 send, 9 recv",
                           0),
                0u)
          << what;
      EXPECT_EQ(what.back(), ')') << what;
      EXPECT_EQ(e.code, regs::ErrorCode::kUnknownType);
    }
  }
}

// A float32 extra's bits survive decode and encode, NaN payloads and signs
// included, but for a signaling NaN (refused above: it would turn quiet in
// the double an extra holds). Found by the descriptor fuzzer.
TEST(Descriptor, FloatExtrasKeepTheirBits) {
  MathCmd fill;
  fill.op = MathOp::kFill, fill.out = 2, fill.extra = {{"value", 1.0}};
  std::vector<uint8_t> b = bytes_of(fill, 0);
  ASSERT_EQ(b.size(), 19u);
  for (uint32_t bits : {0x7FC00000u, 0xFFC00001u, 0x7FFFFFFFu, 0x80000000u, 0x00000001u, 0xFF800000u}) {
    for (int i = 0; i < 4; ++i) b[15 + size_t(i)] = uint8_t(bits >> (8 * i));
    const desc::Decoded d = desc::decode(b.data(), b.size());
    EXPECT_EQ(desc::encode(d.cmd, d.completion_id), b) << std::hex << bits;
  }
  for (uint32_t bits : {0x7F800001u, 0xFF9C0000u, 0x7FBFFFFFu}) {
    for (int i = 0; i < 4; ++i) b[15 + size_t(i)] = uint8_t(bits >> (8 * i));
    EXPECT_THROW(desc::decode(b.data(), b.size()), desc::DecodeError) << std::hex << bits;
  }
}

// encode_into sizes a reused buffer to each command: a
// longer or shorter descriptor left in it changes none of the bytes, and a
// refused command leaves a buffer the next command still fills right.
TEST(Descriptor, ReusedBufferGivesTheSameBytesAsAFreshOne) {
  GemmCmd g;
  g.a = 1, g.b = 2, g.out = 3, g.m = 128, g.n = 64, g.k = 96, g.accumulate = true;
  MathCmd m;
  m.op = MathOp::kScale, m.operands = {5}, m.out = 6, m.extra = {{"factor", 0.5}};
  CompositeCmd comp;
  comp.ops.push_back({"exp", OpScope::kEpilogue, {{"src_a", 9}}, true, 10, {}});
  comp.rw_handles = {11, 12};
  MathCmd bad = m;
  bad.extra.push_back({"factor", 2.0});  // given twice: refused mid-encode
  const std::vector<Command> cmds = {g, DmaReadCmd{1, 2}, m, comp, SendCmd{4, 1}, g, RecvCmd{5, 2}, m};
  std::vector<uint8_t> buf(64, 0xAB);
  uint32_t id = 1;
  for (const Command& c : cmds) {
    desc::encode_into(c, id, buf);
    EXPECT_EQ(buf, desc::encode(c, id)) << command_type_name(c);
    EXPECT_EQ(buf.size(), logical_bytes(c));
    EXPECT_THROW(desc::encode_into(bad, id, buf), desc::EncodeError);
    ++id;
  }
}

// The fuzz harness's seeds (tests/fuzz/corpus/descriptor) are descriptors
// of the layout, but for the one cut short.
TEST(Descriptor, SeedCorpusFollowsTheLayout) {
  const std::string dir = "tests/fuzz/corpus/descriptor/";
  for (const char* name : {"dma_read", "dma_write", "copy", "gemm", "math_scale", "math_add_bcast", "composite", "send", "recv",
                           "truncated"}) {
    std::ifstream in(dir + name, std::ios::binary);
    ASSERT_TRUE(in) << name;
    const std::vector<uint8_t> b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (std::string(name) == "truncated") {
      EXPECT_THROW(desc::decode(b.data(), b.size()), desc::DecodeError);
      continue;
    }
    const desc::Decoded d = desc::decode(b.data(), b.size());
    EXPECT_EQ(desc::encode(d.cmd, d.completion_id), b) << name;
    EXPECT_EQ(b.size(), logical_bytes(d.cmd)) << name;
  }
}

// Every command the project's benches write (opt2, opt3, the GEMM
// variants, softmax_merge): its descriptor is exactly its logical bytes and
// decodes back to the same bytes.
struct Capture : CpuObserver {
  std::map<std::string, uint64_t> commands;
  uint64_t failures = 0;
  std::string first_failure;
  void on_launch(const std::string&) override {}
  void on_tensor(const TensorDesc&, const std::string&) override {}
  void on_command(const Command& c) override {
    if (std::holds_alternative<CpuOverheadCmd>(c)) return;
    ++commands[command_type_name(c)];
    try {
      const std::vector<uint8_t> b = desc::encode(c, 1);
      const desc::Decoded d = desc::decode(b.data(), b.size());
      if (b.size() != logical_bytes(c) || desc::encode(d.cmd, 1) != b) throw std::runtime_error("mismatch");
    } catch (const std::exception& e) {
      if (!failures++) first_failure = std::string(command_type_name(c)) + ": " + e.what();
    }
  }
};

TEST(Descriptor, EveryCommandOfTheProjectsBenchesIsItsLogicalBytes) {
  const nlohmann::json j = run_function_isolated([] {
    register_builtin_benches();
    const PeConfig cfg;
    PeTop top(cfg);
    Capture cap;
    top.pe().pe_cpu.set_observer(&cap);
    const std::vector<std::pair<std::string, std::vector<std::string>>> benches = {
        {"gqa-decode", {"context=300", "q_heads=8", "kv_heads=2"}},
        {"gemm-composite", {"m=256", "n=128", "k=192"}},
        {"gemm-tiled-single-op", {"m=256", "n=128", "k=192"}},
        {"gemm-async-vs-composite", {}},
        {"softmax-merge", {}}};
    for (const auto& [name, params] : benches) {
      const Bench& b = BenchRegistry::instance().get(name);
      for (auto& [launch, k] : b.launches(BenchRegistry::instance().params(b, params), cfg)) {
        top.pe().pe_cpu.launch(name + "/" + launch, k);
      }
    }
    sc_core::sc_start();
    nlohmann::json r{{"failures", cap.failures}, {"first", cap.first_failure}, {"commands", cap.commands}};
    for (const LaunchResult& l : top.pe().pe_cpu.results()) r["errors"].push_back(l.error);
    return r;
  });
  ASSERT_FALSE(j.contains("error")) << j.dump();
  for (const auto& e : j["errors"]) EXPECT_EQ(e.get<std::string>(), "");
  EXPECT_EQ(j["failures"].get<uint64_t>(), 0u) << j["first"].get<std::string>();
  for (const char* type : {"DmaReadCmd", "DmaWriteCmd", "GemmCmd", "MathCmd", "CompositeCmd"}) {
    EXPECT_GT(j["commands"].value(type, uint64_t(0)), 0u) << type << " not exercised: " << j["commands"].dump();
  }
}

}  // namespace
}  // namespace kb
