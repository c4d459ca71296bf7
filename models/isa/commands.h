// PE commands: what PE_CPU writes into PE_SCHEDULER's queue.
//
// Every command exposes logical_bytes() exactly per docs/cost-model.md D2: the
// HW-logical size of its descriptor (framing 4, opcode 1, enum 1, handle 8,
// scalar 4, tuple length marker 1), counted per field with no
// de-duplication. Single-op commands count their fixed fields; a CompositeCmd
// recursively sums its OpSpecs and rw_handles.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "models/isa/command_fields.h"
#include "models/isa/command_table.h"
#include "models/isa/math_ops.h"

namespace kb {

// docs/cost-model.md D2 field sizes.
namespace lb {
constexpr uint32_t kFraming = 4;  // cmd-type discriminator + completion id ref
constexpr uint32_t kOpcode = 1;
constexpr uint32_t kEnum = 1;
constexpr uint32_t kHandle = 8;
constexpr uint32_t kScalar = 4;
constexpr uint32_t kTupleLength = 1;
}  // namespace lb

// Typed OpSpec extras (docs/cost-model.md D2 _extra_bytes): bool 1,
// int/float 4, tuple/list 1 + 4n, string 1.
using ExtraValue =
    std::variant<bool, int64_t, double, std::vector<int64_t>, std::string>;
uint32_t extra_bytes(const ExtraValue& v);

// a == b for short names (extras, op kinds): the length, then the letters
// inline, no memcmp call; looked up per op per command.
inline bool same_name(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return false;
  return true;
}

struct Extra {
  std::string name;
  ExtraValue value;
};
using Extras = std::vector<Extra>;
uint32_t extras_bytes(const Extras& extras);  // 1 (length) + sum

// --- Single-op commands (docs/cost-model.md D8: FIXED = fixed_per_single_op_cmd_cycles)
// A command's traits are its own static members (docs/extending.md, "A new
// command"): kKeyword (its replay text and descriptor messages), kFixed
// (which FIXED it pays), and for a command of fixed fields, fields() (in
// descriptor order; command_fields.h) and kCheck. Generic code loops over
// them. logical_bytes() is inline: PE_CPU (cost) and PE_SCHEDULER (the
// descriptor's length) ask for every command.

// tl.load: HBM -> TCM on PE_DMA.
struct DmaReadCmd {
  Handle dst = 0;  // TCM
  Handle src = 0;  // HBM
  static constexpr const char* kKeyword = "dma_read";
  static constexpr FixedClass kFixed = FixedClass::kSingleOp;
  static constexpr CheckRule kCheck = CheckRule::kTransfer;
  static constexpr auto fields() {
    return std::tuple{tensor_field(&DmaReadCmd::dst, "dst", Access::kWrite, SpaceRule::kTcm),
                      tensor_field(&DmaReadCmd::src, "src", Access::kRead, SpaceRule::kHbm)};
  }
  uint32_t logical_bytes() const { return lb::kFraming + fields_bytes<DmaReadCmd>(); }  // 20
};

// tl.store: TCM -> HBM on PE_DMA.
struct DmaWriteCmd {
  Handle dst = 0;  // HBM
  Handle src = 0;  // TCM
  static constexpr const char* kKeyword = "dma_write";
  static constexpr FixedClass kFixed = FixedClass::kSingleOp;
  static constexpr CheckRule kCheck = CheckRule::kTransfer;
  static constexpr auto fields() {
    return std::tuple{tensor_field(&DmaWriteCmd::dst, "dst", Access::kWrite, SpaceRule::kHbm),
                      tensor_field(&DmaWriteCmd::src, "src", Access::kRead, SpaceRule::kTcm)};
  }
  uint32_t logical_bytes() const { return lb::kFraming + fields_bytes<DmaWriteCmd>(); }  // 20
};

// tl.dot: out (+)= a @ b (b transposed when transpose_b) on PE_GEMM. Its
// fields serve the descriptor, the replay parser and handle remapping; its
// check (shapes against m, n, k), its handle access (out is read too when
// accumulating) and its replay line (out first) are its own.
struct GemmCmd {
  Handle a = 0, b = 0, out = 0;
  int64_t m = 0, n = 0, k = 0;
  bool transpose_b = false;
  bool accumulate = false;
  static constexpr const char* kKeyword = "gemm";
  static constexpr FixedClass kFixed = FixedClass::kSingleOp;
  static constexpr auto fields() {
    return std::tuple{tensor_field(&GemmCmd::a, "a", Access::kRead, SpaceRule::kTcm),
                      tensor_field(&GemmCmd::b, "b", Access::kRead, SpaceRule::kTcm),
                      tensor_field(&GemmCmd::out, "out", Access::kWrite, SpaceRule::kTcm),
                      scalar_field(&GemmCmd::m, "m"),
                      scalar_field(&GemmCmd::n, "n"),
                      scalar_field(&GemmCmd::k, "k"),
                      flag_field(&GemmCmd::transpose_b, "transpose_b"),
                      flag_field(&GemmCmd::accumulate, "accumulate")};
  }
  // framing 4 + 3 handles 24 + m/n/k 12 + 2 flags 2 = 42
  uint32_t logical_bytes() const { return lb::kFraming + fields_bytes<GemmCmd>(); }
};

// A MathCmd's operand handles. Every math op reads at most two, kept
// inline: a MathCmd then costs no heap allocation (most commands of a
// kernel are math ops). More, as a malformed command from a
// replay file or a VP may carry (check_command refuses it, naming the
// count), spill to the heap. Assignable from a std::vector<Handle> and a
// braced list, as the field was a vector before.
class HandleList {
 public:
  static constexpr size_t kInline = 2;
  HandleList() = default;
  HandleList(std::initializer_list<Handle> hs) { append(hs.begin(), hs.end()); }
  HandleList(const std::vector<Handle>& hs) { append(hs.begin(), hs.end()); }
  HandleList(const HandleList& o) { append(o.begin(), o.end()); }
  // The moved-from list is left empty (its spill went with the move).
  HandleList(HandleList&& o) noexcept : n_(o.n_), spill_(std::move(o.spill_)) {
    std::copy(o.inline_, o.inline_ + kInline, inline_);
    o.n_ = 0;
  }
  HandleList& operator=(const HandleList& o) {
    if (this != &o) {
      clear();
      append(o.begin(), o.end());
    }
    return *this;
  }
  HandleList& operator=(HandleList&& o) noexcept {
    if (this != &o) {
      n_ = o.n_;
      spill_ = std::move(o.spill_);
      std::copy(o.inline_, o.inline_ + kInline, inline_);
      o.n_ = 0;
    }
    return *this;
  }

  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  const Handle* data() const { return n_ <= kInline ? inline_ : spill_.data(); }
  Handle* data() { return n_ <= kInline ? inline_ : spill_.data(); }
  const Handle* begin() const { return data(); }
  const Handle* end() const { return data() + n_; }
  Handle* begin() { return data(); }
  Handle* end() { return data() + n_; }
  const Handle& operator[](size_t i) const { return data()[i]; }
  Handle& operator[](size_t i) { return data()[i]; }
  void push_back(Handle h) {
    if (n_ < kInline) {
      inline_[n_++] = h;
      return;
    }
    if (n_ == kInline) spill_.assign(inline_, inline_ + kInline);  // spill: all on the heap
    spill_.push_back(h);
    ++n_;
  }
  void clear() {
    n_ = 0;
    spill_.clear();
  }
  friend bool operator==(const HandleList& a, const HandleList& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator!=(const HandleList& a, const HandleList& b) { return !(a == b); }

 private:
  template <class It>
  void append(It first, It last) {
    for (; first != last; ++first) push_back(*first);
  }
  // Invariant: n_ <= kInline: the handles are inline_[0, n_) and spill_ is
  // empty; else all n_ of them are in spill_.
  Handle inline_[kInline] = {0, 0};
  size_t n_ = 0;
  std::vector<Handle> spill_;
};

// tl.<math op>: one elementwise or reduction op on PE_MATH.
struct MathCmd {
  MathOp op = MathOp::kAdd;
  HandleList operands;
  Handle out = 0;
  Extras extra;
  static constexpr const char* kKeyword = "math";
  static constexpr FixedClass kFixed = FixedClass::kSingleOp;
  // framing 4 + opcode 1 + (1 + 8 per operand) + out 8 + (1 + extras)
  uint32_t logical_bytes() const {
    return lb::kFraming + lb::kOpcode + lb::kTupleLength + lb::kHandle * uint32_t(operands.size()) +
           lb::kHandle /* out */ + (extra.empty() ? lb::kTupleLength : extras_bytes(extra));
  }
};

// tl.copy: TCM -> TCM (or any space) on PE_DMA.
struct CopyCmd {
  Handle dst = 0;
  Handle src = 0;
  static constexpr const char* kKeyword = "copy";
  static constexpr FixedClass kFixed = FixedClass::kSingleOp;
  static constexpr CheckRule kCheck = CheckRule::kTransfer;
  static constexpr auto fields() {
    return std::tuple{tensor_field(&CopyCmd::dst, "dst", Access::kWrite),
                      tensor_field(&CopyCmd::src, "src", Access::kRead)};
  }
  uint32_t logical_bytes() const { return lb::kFraming + fields_bytes<CopyCmd>(); }  // 20
};

// --- Composite (docs/cost-model.md D1/D7; FIXED = fixed_per_cmd_cycles)

// Where an OpSpec runs in the scheduler's tile plan.
enum class OpScope : uint8_t { kPrologue, kTile, kEpilogue };
const char* to_string(OpScope s);
bool op_scope_from_string(const std::string& name, OpScope* s);

struct NamedOperand {
  std::string name;  // e.g. "src_a"; names are not counted (slot position)
  Handle handle = 0;
};

// A composite op as text: what tl's builders and the replay parser make and
// the recorder writes. PE_CPU decodes it at dispatch into a TypedOp (below);
// nothing past dispatch looks at its strings.
struct OpSpec {
  std::string kind;  // "gemm" or a MathOp name ("mul_bcast", "exp", ...)
  OpScope scope = OpScope::kTile;
  std::vector<NamedOperand> operands;
  bool has_out = false;
  Handle out = 0;
  Extras extra;
  // opcode 1 + scope 1 + (1 + 8 per operand) + (out ? 8 : 0) + (1 + extras)
  uint32_t logical_bytes() const;
};

// --- Typed composite ops: an OpSpec decoded once, at
// dispatch, into an enum, operands by role and typed attributes, which the
// tile plan and data execution use without looking up a string.

// A composite op is the GEMM or a math op (TypedOp::math): MathOp stays the
// one list of math ops.
enum class OpKind : uint8_t { kGemm, kMath };

// The GEMM's extras: m, n, k (int, required); transpose_b and accumulate
// (true when the first extra of that name is bool true).
struct GemmAttrs {
  int64_t m = 0, n = 0, k = 0;
  bool transpose_b = false;
  bool accumulate = false;
};

// A math op's extras: scale's factor and fill's value, the first extra of
// that name that is a number (int or float), 0 when there is none.
struct MathAttrs {
  double factor = 0.0;
  double value = 0.0;
};
MathAttrs math_attrs(const Extras& extras);

struct TypedOp {
  OpKind kind = OpKind::kGemm;
  MathOp math = MathOp::kAdd;  // kind == kMath
  OpScope scope = OpScope::kTile;
  // Operands by role: GEMM a, b; math src_a, src_b (the first `inputs`,
  // the op's arity).
  Handle in[2] = {0, 0};
  int inputs = 0;
  Handle out = 0;
  GemmAttrs gemm;   // kind == kGemm
  MathAttrs attrs;  // kind == kMath
  bool is_gemm() const { return kind == OpKind::kGemm; }
  Handle a() const { return in[0]; }
  Handle b() const { return in[1]; }
  const char* input_role(int i) const;  // "a", "b", "src_a", "src_b"
};

// A composite comes as text (`ops`: the replay parser, the descriptor
// decoder, OpSpec builders) or typed (tl's typed builders,
// docs/conventions.md 13: `ops` empty, `typed` the ops; text only when a
// recorder or a message asks, to_spec). A typed op stands for the OpSpec
// to_spec makes of it, which is what its logical bytes and descriptor count
// (docs/cost-model.md D2).
struct CompositeCmd {
  std::string name;  // for messages (D7) and the op log; not counted
  std::vector<OpSpec> ops;
  std::vector<Handle> rw_handles;
  // Text: ops decoded, one per op, filled by check_command at dispatch.
  // Built typed: the ops themselves.
  std::vector<TypedOp> typed = {};
  static constexpr const char* kKeyword = "composite";
  static constexpr FixedClass kFixed = FixedClass::kComposite;
  bool built_typed() const { return ops.empty() && !typed.empty(); }
  size_t op_count() const { return built_typed() ? typed.size() : ops.size(); }
  // framing 4 + (1 + sum ops) + (1 + 8 per rw handle)
  uint32_t logical_bytes() const;
};

// The OpSpec a typed op stands for: what gemm_op / math_op make (gemm:
// operands a, b, extras m, k, n and transpose_b / accumulate when set;
// math: operands src_a, src_b, extras scale's factor or fill's value, none
// for other ops).
OpSpec to_spec(const TypedOp& op);
// to_spec(op).logical_bytes(), without making the text.
uint32_t typed_logical_bytes(const TypedOp& op);
// The op's kind as text: "gemm" or the MathOp's name.
const char* kind_name(const TypedOp& op);

// Decodes a composite's ops in program order (the at-most-one tile-scope
// GEMM rule spans ops). decode() checks what needs no descriptor table: an
// out handle, a known kind, a GEMM's operands a and b (no other, none
// twice) and int extras m, n, k, a math op's operand count. On a malformed
// op it returns false and sets *error to what is wrong, as check_command
// reports it after "CompositeCmd 'NAME' op I (KIND, SCOPE): ".
class OpDecoder {
 public:
  bool decode(const OpSpec& spec, TypedOp* op, std::string* error);

 private:
  bool tile_gemm_ = false;
};

// Every op of `c`; false with the index of the op that failed and why.
bool decode_ops(const CompositeCmd& c, std::vector<TypedOp>* ops, size_t* bad_op,
                std::string* error);

// c.typed when dispatch decoded `c`, else `c`'s ops decoded into `scratch`
// (a composite built in code and planned without PE_CPU, as tests do);
// std::invalid_argument when `c` does not decode.
const std::vector<TypedOp>& typed_ops(const CompositeCmd& c, std::vector<TypedOp>& scratch);

// "<op> takes N operand(s), got M": a MathCmd's or a math op's arity error.
std::string math_arity_error(MathOp op, size_t operands);

// tl.cycles(n): PE_CPU busy for exactly n cycles; bypasses the dispatch
// formula and is never written to the queue (docs/cost-model.md D5).
struct CpuOverheadCmd {
  uint64_t cycles = 0;
  static constexpr const char* kKeyword = "cycles";
  static constexpr FixedClass kFixed = FixedClass::kNone;
  uint32_t logical_bytes() const { return 0; }
};

// --- IPC (docs/cost-model.md D8: single-op FIXED), on PE_IPC
// (models/pe/ipc/pe_ipc.h). Peers are global PE numbers (PePlace::global).

// tl.send: src's bytes into global PE dst's IPC receive queue.
struct SendCmd {
  Handle src = 0;
  uint32_t dst = 0;
  static constexpr const char* kKeyword = "send";
  static constexpr FixedClass kFixed = FixedClass::kSingleOp;
  static constexpr CheckRule kCheck = CheckRule::kLookUp;  // any space, any shape: the receiver checks the bytes
  static constexpr auto fields() {
    return std::tuple{tensor_field(&SendCmd::src, "src", Access::kRead),
                      peer_field(&SendCmd::dst, "dst_pe", "the destination PE")};
  }
  uint32_t logical_bytes() const { return lb::kFraming + fields_bytes<SendCmd>(); }  // 16
};

// tl.recv: the oldest message from global PE src, into dst.
struct RecvCmd {
  Handle dst = 0;
  uint32_t src = 0;
  static constexpr const char* kKeyword = "recv";
  static constexpr FixedClass kFixed = FixedClass::kSingleOp;
  static constexpr CheckRule kCheck = CheckRule::kLookUp;
  static constexpr auto fields() {
    return std::tuple{tensor_field(&RecvCmd::dst, "dst", Access::kWrite),
                      peer_field(&RecvCmd::src, "src_pe", "the source PE")};
  }
  uint32_t logical_bytes() const { return lb::kFraming + fields_bytes<RecvCmd>(); }  // 16
};

// New alternatives go last: a type's index is its descriptor framing byte
// minus 1 (descriptor.h), and records name types by this order.
using Command = std::variant<DmaReadCmd, DmaWriteCmd, GemmCmd, MathCmd,
                             CopyCmd, CompositeCmd, CpuOverheadCmd, SendCmd, RecvCmd>;

// The command table (command_table.h) names the alternatives, in order.
static_assert(kNumCommandTypes == int(std::variant_size_v<Command>),
              "command_table.h: one row per alternative of Command, in its order");
inline const char* command_type_name(const Command& cmd) { return kCommandTypes[cmd.index()].name; }

// T's position in Command: its descriptor type byte is this + 1 (descriptor.h).
template <class T, class V>
struct variant_index;
template <class T, class... Ts>
struct variant_index<T, std::variant<Ts...>> {
  static constexpr size_t value = [] {
    constexpr bool same[] = {std::is_same_v<T, Ts>...};
    for (size_t i = 0; i < sizeof...(Ts); ++i)
      if (same[i]) return i;
    return sizeof...(Ts);
  }();
};
template <class T>
inline constexpr size_t command_index_v = variant_index<T, Command>::value;
template <class T>
constexpr const char* command_name() {
  return kCommandTypes[command_index_v<T>].name;
}

// Every alternative's keyword, in Command's order: replay text keywords and
// the descriptor's "unknown type" message.
template <class V>
struct keywords_of;
template <class... Ts>
struct keywords_of<std::variant<Ts...>> {
  static constexpr const char* value[] = {Ts::kKeyword...};
};
inline constexpr const auto& kCommandKeywords = keywords_of<Command>::value;
// A single-op GEMM or MATH command as the typed op it computes (GEMM:
// a, b, out and its m, n, k and flags; MATH: its op, first two operands,
// out and extras' attributes); false for every other command.
bool single_op(const Command& cmd, TypedOp* op);

// Out of line: inlined into callers, g++ 12's sanitizer builds warn that a
// variant's inactive alternative "may be used uninitialized" (-Werror).
uint32_t logical_bytes(const Command& cmd);

// Handles a command reads and writes, for the hazard scoreboard.
// Single-op: operands read, out/dst written. Composite: every op's operands
// read, every op's out written, rw_handles both, each handle once per list
// (in the order of its first use).
struct HandleAccess {
  std::vector<Handle> reads;
  std::vector<Handle> writes;
};
HandleAccess handle_access(const Command& cmd);
void handle_access(const Command& cmd, HandleAccess& out);  // reuses out's capacity

}  // namespace kb
