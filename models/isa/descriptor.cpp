#include "models/isa/descriptor.h"

#include <cstring>
#include <iterator>
#include <type_traits>
#include <variant>
#include <string>
#include <string_view>

#include "models/util/hex.h"
#include "models/util/overloaded.h"

namespace kb::desc {

namespace {

constexpr uint8_t kHasOut = 0x80;
constexpr uint8_t kScopeMask = 0x03;
constexpr std::string_view kGemmSlots[] = {"a", "b"};
constexpr std::string_view kMathSlots[] = {"src_a", "src_b"};
constexpr std::string_view kGemmFlags[] = {"transpose_b", "accumulate"};

// Writes into a buffer sized once to the command's logical bytes, through
// a raw pointer: no capacity check per byte (the encoder runs for every
// command). Past the end it only counts, so a layout that
// disagrees with logical_bytes() is still reported after the last field.
// The messages out of line, so the writes they guard stay small enough to
// inline.
[[noreturn, gnu::noinline, gnu::cold]] void too_wide(int64_t v, const char* what) {
  throw EncodeError(std::string(what) + " = " + std::to_string(v) + " does not fit a 4-byte scalar");
}
[[noreturn, gnu::noinline, gnu::cold]] void too_many(size_t n, const char* what) {
  throw EncodeError(std::string(what) + ": " + std::to_string(n) + " do not fit a 1-byte count");
}

class Writer {
 public:
  Writer(std::vector<uint8_t>& out, size_t bytes) : n_(bytes) {
    out.resize(bytes);
    d_ = out.data();
  }
  void u8(uint8_t v) { le<1>(v); }
  void u64(uint64_t v) { le<8>(v); }
  void i32(int64_t v, const char* what) {
    if (v < INT32_MIN || v > INT32_MAX) too_wide(v, what);
    le<4>(uint32_t(int32_t(v)));
  }
  void f32(double v) {
    const float f = float(v);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    le<4>(u);
  }
  void u32(uint32_t u) { le<4>(u); }
  void count(size_t n, const char* what) {
    if (n > 255) too_many(n, what);
    u8(uint8_t(n));
  }
  size_t written() const { return at_; }  // bytes the fields take, even past the buffer

 private:
  template <int N>
  void le(uint64_t v) {
    if (at_ <= n_ && n_ - at_ >= size_t(N)) {
      uint8_t* p = d_ + at_;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
      std::memcpy(p, &v, N);  // one store: v's low N bytes come first
#else
      for (int i = 0; i < N; ++i) p[i] = uint8_t(v >> (8 * i));
#endif
    }
    at_ += N;
  }
  uint8_t* d_ = nullptr;
  size_t n_;
  size_t at_ = 0;
};

// The type byte is the command's position in Command + 1 (descriptor.h).
template <class T>
void framing(Writer& w, uint32_t id) {
  w.u32(uint32_t(type_byte<T>()) | (id & kCompletionIdMask) << 8);  // type byte, then the id's low 3 bytes
}

// A command of fixed fields, field by field (command_fields.h).
template <class T>
void encode_fields(Writer& w, const T& c) {
  for_each_field<T>([&](const auto& f) {
    using M = field_member_t<decltype(f)>;
    const M& v = c.*(f.member);
    if constexpr (std::is_same_v<M, Handle>) w.u64(v);
    else if constexpr (std::is_same_v<M, uint32_t>) w.u32(v);
    else if constexpr (std::is_same_v<M, int64_t>) w.i32(v, f.key);
    else w.u8(v ? 1 : 0);
  });
}

// Names compare as string_views: the length first, no strlen per compare.
const Extra* find_extra(const Extras& extras, std::string_view name) {
  for (const Extra& e : extras)
    if (same_name(e.name, name)) return &e;
  return nullptr;
}

double number(const Extra& e, const char* op) {
  if (const auto* d = std::get_if<double>(&e.value)) return *d;
  if (const auto* i = std::get_if<int64_t>(&e.value)) return double(*i);
  throw EncodeError(std::string(op) + ": extra '" + e.name + "' must be a number");
}

// The math extras: scale's factor or fill's value, nothing else.
void some_math_extras(Writer& w, MathOp op, const Extras& extras) {
  const char* field = math_attr_name(math_op_attr(op));
  for (const Extra& e : extras) {
    if (!field || std::string_view(e.name) != field) {
      throw EncodeError(std::string(to_string(op)) + ": extra '" + e.name + "' has no field in the descriptor");
    }
  }
  if (extras.size() > 1) throw EncodeError(std::string(to_string(op)) + ": extra '" + field + "' given twice");
  w.u8(uint8_t(extras.size()));
  if (!extras.empty()) w.f32(number(extras[0], to_string(op)));
}

void math_extras(Writer& w, MathOp op, const Extras& extras) {
  if (extras.empty()) w.u8(0);  // most math ops: just the count, inline
  else some_math_extras(w, op, extras);
}

void gemm_extras(Writer& w, const Extras& extras) {
  constexpr std::string_view ints[] = {"m", "k", "n"};
  size_t known = 0;
  for (const Extra& e : extras) {
    bool ok = false;
    const std::string_view name = e.name;
    for (std::string_view n : ints) ok |= name == n && std::holds_alternative<int64_t>(e.value);
    for (std::string_view n : kGemmFlags) ok |= name == n && std::holds_alternative<bool>(e.value);
    if (!ok) throw EncodeError("gemm: extra '" + e.name + "' has no field in the descriptor");
    ++known;
  }
  for (std::string_view n : ints) {
    if (!find_extra(extras, n)) throw EncodeError("gemm: extra '" + std::string(n) + "' is missing");
  }
  uint8_t flags[2] = {0, 0};  // each flag at most once (checked below)
  size_t nflags = 0;
  for (uint8_t id = 0; id < 2; ++id) {
    size_t seen = 0;
    for (const Extra& e : extras) {
      if (!same_name(e.name, kGemmFlags[id])) continue;
      if (++seen > 1) throw EncodeError("gemm: extra '" + std::string(kGemmFlags[id]) + "' given twice");
      flags[nflags++] = uint8_t(id << 1 | (std::get<bool>(e.value) ? 1 : 0));
    }
  }
  if (known != 3 + nflags) throw EncodeError("gemm: an extra among m, k, n given twice");
  w.u8(uint8_t(known));
  for (std::string_view n : ints) w.i32(std::get<int64_t>(find_extra(extras, n)->value), n.data());
  for (size_t i = 0; i < nflags; ++i) w.u8(flags[i]);
}

// `typed`: `op` decoded (check_command), whose kind and GEMM operands by
// role are used instead of comparing strings; null: from
// the strings.
void op_spec(Writer& w, const OpSpec& op, const TypedOp* typed) {
  MathOp m{};
  bool gemm;
  if (typed) {
    gemm = typed->is_gemm();
    m = typed->math;
  } else {
    gemm = std::string_view(op.kind) == "gemm";
    if (!gemm && !math_op_from_string(op.kind, &m)) throw EncodeError("unknown op kind '" + op.kind + "'");
  }
  w.u8(gemm ? 0 : uint8_t(1 + math_opcode(m)));
  w.u8(uint8_t(uint8_t(op.scope) | (op.has_out ? kHasOut : 0)));
  w.count(op.operands.size(), "operands");
  if (gemm && typed) {  // the decoder found exactly a and b
    w.u64(typed->a()), w.u64(typed->b());
  } else if (gemm) {  // by role, a then b, whatever order the spec lists them in
    if (op.operands.size() != 2) throw EncodeError("gemm: takes operands a and b");
    for (std::string_view role : kGemmSlots) {
      const NamedOperand* o = nullptr;
      for (const NamedOperand& x : op.operands)
        if (std::string_view(x.name) == role) o = &x;
      if (!o) throw EncodeError("gemm: operand '" + std::string(role) + "' is missing");
      w.u64(o->handle);
    }
  } else {
    for (const NamedOperand& o : op.operands) w.u64(o.handle);  // by position
  }
  if (op.has_out) w.u64(op.out);
  if (gemm) gemm_extras(w, op.extra);
  else math_extras(w, m, op.extra);
}

// A composite's op built typed (CompositeCmd::built_typed): the bytes of
// the OpSpec it stands for (to_spec), written from its fields.
void typed_op(Writer& w, const TypedOp& op) {
  w.u8(op.is_gemm() ? 0 : uint8_t(1 + math_opcode(op.math)));
  w.u8(uint8_t(uint8_t(op.scope) | kHasOut));
  if (op.inputs < 0 || op.inputs > 2) throw EncodeError(std::string(kind_name(op)) + ": " + std::to_string(op.inputs) + " operands");
  w.count(size_t(op.inputs), "operands");
  for (int i = 0; i < op.inputs; ++i) w.u64(op.in[i]);
  w.u64(op.out);
  if (op.is_gemm()) {
    const int flags = (op.gemm.transpose_b ? 1 : 0) + (op.gemm.accumulate ? 1 : 0);
    w.u8(uint8_t(3 + flags));
    w.i32(op.gemm.m, "m"), w.i32(op.gemm.k, "k"), w.i32(op.gemm.n, "n");
    if (op.gemm.transpose_b) w.u8(uint8_t(0 << 1 | 1));
    if (op.gemm.accumulate) w.u8(uint8_t(1 << 1 | 1));
  } else if (const MathAttr attr = math_op_attr(op.math); attr != MathAttr::kNone) {
    w.u8(1);
    w.f32(attr == MathAttr::kFactor ? op.attrs.factor : op.attrs.value);
  } else {
    w.u8(0);
  }
}

class Reader {
 public:
  Reader(const uint8_t* d, size_t n) : d_(d), n_(n) {}
  uint8_t u8(const char* what) {
    need(1, what);
    return d_[at_++];
  }
  uint64_t u64(const char* what) {
    need(8, what);
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t(d_[at_ + size_t(i)]) << (8 * i);
    at_ += 8;
    return v;
  }
  int64_t i32(const char* what) { return int64_t(int32_t(u32(what))); }
  uint32_t peer(const char* what) { return u32(what); }
  double f32(const char* what) {
    const uint32_t u = u32(what);
    // A signaling NaN turns quiet on its way to the double an extra holds,
    // so it would re-encode as other bits: refused, not silently changed.
    if ((u & 0x7F800000u) == 0x7F800000u && (u & 0x003FFFFFu) && !(u & 0x00400000u)) {
      at_ -= 4;
      fail(std::string(what) + " is a signaling NaN (" + hex(u) + "); a NaN here must be quiet (bit 22 set)");
    }
    float f;
    std::memcpy(&f, &u, 4);
    return double(f);
  }
  [[noreturn]] void fail(const std::string& what) const { fail_at(at_, what); }
  [[noreturn]] void fail_at(size_t at, const std::string& what) const {
    throw DecodeError("descriptor byte " + std::to_string(at) + ": " + what);
  }
  void end() const {
    if (at_ != n_) {
      throw DecodeError("descriptor of " + std::to_string(n_) + " bytes: its fields end at byte " +
                            std::to_string(at_) + " (a descriptor is exactly its logical bytes)",
                        regs::ErrorCode::kBadLength);
    }
  }
  size_t at() const { return at_; }

 private:
  uint32_t u32(const char* what) {
    need(4, what);
    uint32_t u = 0;
    for (int i = 0; i < 4; ++i) u |= uint32_t(d_[at_ + size_t(i)]) << (8 * i);
    at_ += 4;
    return u;
  }
  void need(size_t k, const char* what) const {
    if (n_ - at_ < k) {
      throw DecodeError("descriptor of " + std::to_string(n_) + " bytes ends inside " + what + " (byte " +
                            std::to_string(at_) + ", " + std::to_string(k) + " bytes needed)",
                        regs::ErrorCode::kBadLength);
    }
  }
  const uint8_t* d_;
  size_t n_;
  size_t at_ = 0;
};

Extras read_math_extras(Reader& r, MathOp op) {
  const uint8_t n = r.u8("the extras count");
  const char* field = math_attr_name(math_op_attr(op));
  const bool has_field = field != nullptr;
  if (n > (has_field ? 1 : 0)) {
    r.fail(std::string(to_string(op)) + " has " + (has_field ? "at most 1 extra" : "no extras") + ", not " +
           std::to_string(n));
  }
  Extras e;
  if (n) e.push_back({field, r.f32("a math extra")});
  return e;
}

Extras read_gemm_extras(Reader& r) {
  const uint8_t n = r.u8("the extras count");
  if (n < 3 || n > 5) r.fail("a gemm op has 3 to 5 extras (m, k, n and its flags), not " + std::to_string(n));
  Extras e;
  for (const char* name : {"m", "k", "n"}) e.push_back({name, r.i32(name)});
  int last = -1;
  for (uint8_t i = 3; i < n; ++i) {
    const uint8_t f = r.u8("a gemm flag");
    const int id = f >> 1;
    if (id > 1 || id <= last) r.fail("gemm flag byte " + std::to_string(f) + ": expected transpose_b (0/1) then accumulate (2/3), each once");
    last = id;
    e.push_back({std::string(kGemmFlags[id]), bool(f & 1)});
  }
  return e;
}

std::vector<NamedOperand> read_operands(Reader& r, bool gemm, MathOp m) {
  const uint8_t n = r.u8("the operand count");
  const size_t most = gemm ? 2 : size_t(math_op_arity(m));
  if (n != most) {
    r.fail(std::string(gemm ? "gemm" : to_string(m)) + " takes " + std::to_string(most) + " operands, not " +
           std::to_string(n));
  }
  std::vector<NamedOperand> ops;
  for (uint8_t i = 0; i < n; ++i) ops.push_back({std::string(gemm ? kGemmSlots[i] : kMathSlots[i]), r.u64("an operand handle")});
  return ops;
}

OpSpec read_op(Reader& r) {
  OpSpec op;
  const uint8_t code = r.u8("an op's opcode");
  const bool gemm = code == 0;
  MathOp m{};
  if (!gemm) {
    if (!math_op_from_opcode(uint8_t(code - 1), &m))
      r.fail("opcode " + std::to_string(code) + " is no op (0: gemm, 1-" + std::to_string(kNumMathOps) + ": math)");
  }
  op.kind = gemm ? "gemm" : to_string(m);
  const uint8_t scope = r.u8("an op's scope");
  if ((scope & ~(kScopeMask | kHasOut)) || (scope & kScopeMask) > uint8_t(OpScope::kEpilogue)) {
    r.fail("scope byte " + std::to_string(scope) + ": expected 0-2, plus 0x80 for an out handle");
  }
  op.scope = OpScope(scope & kScopeMask);
  op.operands = read_operands(r, gemm, m);
  op.has_out = scope & kHasOut;
  if (op.has_out) op.out = r.u64("an op's out handle");
  op.extra = gemm ? read_gemm_extras(r) : read_math_extras(r, m);
  return op;
}

void encode_command(const Command& c, uint32_t completion_id, uint32_t bytes, std::vector<uint8_t>& out,
                    bool decoded);

}  // namespace

std::vector<uint8_t> encode(const Command& c, uint32_t completion_id) {
  std::vector<uint8_t> out;
  encode_into(c, completion_id, out);
  return out;
}

void encode_into(const Command& c, uint32_t completion_id, std::vector<uint8_t>& out) {
  encode_command(c, completion_id, logical_bytes(c), out, false);
}

void encode_dispatched(const Command& c, uint32_t completion_id, uint32_t bytes, std::vector<uint8_t>& out) {
  encode_command(c, completion_id, bytes, out, true);
}

namespace {
// `decoded`: a composite's c.typed is current (encode_dispatched).
void encode_command(const Command& c, uint32_t completion_id, uint32_t bytes, std::vector<uint8_t>& out,
                    bool decoded) {
  Writer w(out, bytes);
  std::visit(overloaded{
                 [&](const MathCmd& m) {
                   framing<MathCmd>(w, completion_id);
                   w.u8(math_opcode(m.op));
                   w.count(m.operands.size(), "operands");
                   for (Handle h : m.operands) w.u64(h);
                   w.u64(m.out);
                   math_extras(w, m.op, m.extra);
                 },
                 [&](const CompositeCmd& c2) {
                   framing<CompositeCmd>(w, completion_id);
                   w.count(c2.op_count(), "ops");
                   if (c2.built_typed()) {
                     for (const TypedOp& op : c2.typed) typed_op(w, op);
                   }
                   // Decoded by check_command just before (encode_dispatched).
                   const bool typed = decoded && c2.typed.size() == c2.ops.size();
                   for (size_t i = 0; i < c2.ops.size(); ++i) op_spec(w, c2.ops[i], typed ? &c2.typed[i] : nullptr);
                   w.count(c2.rw_handles.size(), "rw_handles");
                   for (Handle h : c2.rw_handles) w.u64(h);
                 },
                 [](const CpuOverheadCmd&) { throw EncodeError("tl.cycles(n) has no descriptor: it is never written"); },
                 [&](const auto& x) {
                   using T = std::decay_t<decltype(x)>;
                   static_assert(has_fields_v<T>, "commands.h: a command lists its fields or has its own case here");
                   framing<T>(w, completion_id);
                   encode_fields(w, x);
                 }},
             c);
  if (w.written() != bytes) {  // the layout is D2's count, field for field
    throw EncodeError("descriptor of " + std::to_string(w.written()) + " bytes for a command of " +
                      std::to_string(bytes) + " logical bytes");
  }
}
}  // namespace

namespace {

template <class T>
Command decode_fields(Reader& r) {
  T c;
  for_each_field<T>([&](const auto& f) {
    using M = field_member_t<decltype(f)>;
    M& v = c.*(f.member);
    if constexpr (std::is_same_v<M, Handle>) v = r.u64(f.what);
    else if constexpr (std::is_same_v<M, uint32_t>) v = r.peer(f.what);
    else if constexpr (std::is_same_v<M, int64_t>) v = r.i32(f.what);
    else {
      const size_t at = r.at();
      const uint8_t b = r.u8(f.what);
      if (b > 1) r.fail_at(at, std::string(f.what) + " is a flag, 0 or 1, not " + std::to_string(b));
      v = b == 1;
    }
  });
  return c;
}

Command decode_math(Reader& r) {
  MathCmd m;
  const uint8_t code = r.u8("the opcode");
  if (!math_op_from_opcode(code, &m.op))
    r.fail("math opcode " + std::to_string(code) + " is no MathOp (0-" + std::to_string(kNumMathOps - 1) + ")");
  for (const NamedOperand& o : read_operands(r, false, m.op)) m.operands.push_back(o.handle);
  m.out = r.u64("out");
  m.extra = read_math_extras(r, m.op);
  return m;
}

Command decode_composite(Reader& r) {
  CompositeCmd c;
  const uint8_t ops = r.u8("the op count");
  for (uint8_t i = 0; i < ops; ++i) c.ops.push_back(read_op(r));
  const uint8_t rw = r.u8("the rw-handle count");
  for (uint8_t i = 0; i < rw; ++i) c.rw_handles.push_back(r.u64("an rw handle"));
  return c;
}

using DecodeFn = Command (*)(Reader&);
template <class T>
constexpr DecodeFn decoder_of() {
  if constexpr (std::is_same_v<T, MathCmd>) return &decode_math;
  else if constexpr (std::is_same_v<T, CompositeCmd>) return &decode_composite;
  else if constexpr (!has_descriptor<T>()) return nullptr;
  else {
    static_assert(has_fields_v<T>, "commands.h: a command lists its fields or has its own decoder here");
    return &decode_fields<T>;
  }
}
template <class V>
struct decoders;
template <class... Ts>
struct decoders<std::variant<Ts...>> {
  static constexpr DecodeFn value[] = {decoder_of<Ts>()...};
};
constexpr const auto& kDecoders = decoders<Command>::value;

// "1 dma_read, 2 dma_write, ...": the types that have a descriptor.
std::string known_types() {
  std::string s;
  for (size_t i = 0; i < std::size(kDecoders); ++i) {
    if (!kDecoders[i]) continue;
    s += (s.empty() ? "" : ", ") + std::to_string(i + 1) + " " + kCommandKeywords[i];
  }
  return s;
}

}  // namespace

Decoded decode(const uint8_t* data, size_t size) {
  Reader r(data, size);
  Decoded d;
  const uint8_t type = r.u8("the framing");
  const DecodeFn fn = type >= 1 && type <= std::size(kDecoders) ? kDecoders[type - 1] : nullptr;
  if (!fn) {
    throw DecodeError("descriptor type " + std::to_string(type) + " is unknown (" + known_types() + ")",
                      regs::ErrorCode::kUnknownType);
  }
  uint32_t id = 0;
  for (int i = 0; i < 3; ++i) id |= uint32_t(r.u8("the framing")) << (8 * i);
  d.completion_id = id;
  d.cmd = fn(r);
  r.end();
  return d;
}

namespace {
constexpr size_t kNameOffset = 48;
constexpr size_t kNameBytes = regs::kTensorDescBytes - kNameOffset;

void put(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = uint8_t(v >> (8 * i));
}
uint64_t get(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(p[i]) << (8 * i);
  return v;
}
bool printable(uint8_t c) { return c >= 0x20 && c < 0x7f; }
}  // namespace

std::array<uint8_t, regs::kTensorDescBytes> encode_tensor(const TensorDesc& d, const std::string& name) {
  if (name.size() > kNameBytes) {
    throw EncodeError("tensor name '" + name + "' is longer than the descriptor's " + std::to_string(kNameBytes) +
                      " bytes");
  }
  for (char c : name) {
    if (!printable(uint8_t(c))) throw EncodeError("tensor name '" + name + "' is not printable ASCII");
  }
  std::array<uint8_t, regs::kTensorDescBytes> b{};
  b[0] = uint8_t(d.space);
  b[1] = uint8_t(d.dtype);
  put(&b[8], d.address);
  put(&b[16], uint64_t(d.rows));
  put(&b[24], uint64_t(d.cols));
  put(&b[32], uint64_t(d.row_stride));
  put(&b[40], 1);  // column stride: elements of a row are contiguous
  std::memcpy(&b[kNameOffset], name.data(), name.size());
  return b;
}

TensorDesc decode_tensor(const uint8_t* data, size_t size) {
  const auto fail = [](size_t at, const std::string& what) {
    throw DecodeError("tensor descriptor byte " + std::to_string(at) + ": " + what, regs::ErrorCode::kBadTensor);
  };
  if (size != regs::kTensorDescBytes) {
    throw DecodeError("tensor descriptor of " + std::to_string(size) + " bytes (exactly " +
                          std::to_string(regs::kTensorDescBytes) + ")",
                      regs::ErrorCode::kBadTensor);
  }
  TensorDesc d;
  if (data[0] > uint8_t(MemSpace::kTcm)) fail(0, "memory space " + std::to_string(data[0]) + " (0 hbm, 1 tcm)");
  if (data[1] > uint8_t(Dtype::kInt8)) {
    fail(1, "dtype " + std::to_string(data[1]) + " (0 fp32, 1 bf16, 2 fp16, 3 int8)");
  }
  for (size_t i = 2; i < 8; ++i) {
    if (data[i]) fail(i, "reserved, must be 0, not " + std::to_string(data[i]));
  }
  d.space = MemSpace(data[0]);
  d.dtype = Dtype(data[1]);
  d.address = get(data + 8);
  d.rows = int64_t(get(data + 16));
  d.cols = int64_t(get(data + 24));
  d.row_stride = int64_t(get(data + 32));
  const int64_t col_stride = int64_t(get(data + 40));
  if (col_stride != 1) fail(40, "column stride " + std::to_string(col_stride) + " (must be 1: rows are contiguous)");
  size_t len = 0;
  while (len < kNameBytes && data[kNameOffset + len]) ++len;
  for (size_t i = 0; i < kNameBytes; ++i) {
    const uint8_t c = data[kNameOffset + i];
    if (i < len && !printable(c)) fail(kNameOffset + i, "name byte " + std::to_string(c) + " is not printable ASCII");
    if (i >= len && c) fail(kNameOffset + i, "name padding must be NUL, not " + std::to_string(c));
  }
  d.name.assign(reinterpret_cast<const char*>(data + kNameOffset), len);
  return d;
}

}  // namespace kb::desc
