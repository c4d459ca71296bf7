#include "models/isa/commands.h"

#include <stdexcept>
#include <type_traits>

#include "models/util/overloaded.h"

namespace kb {

// docs/cost-model.md D2 _extra_bytes.
uint32_t extra_bytes(const ExtraValue& v) {
  return std::visit(
      [](const auto& x) -> uint32_t {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>) return 1;
        else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, double>)
          return lb::kScalar;
        else if constexpr (std::is_same_v<T, std::vector<int64_t>>)
          return lb::kTupleLength + lb::kScalar * uint32_t(x.size());
        else return 1;  // string: an opcode-like tag
      },
      v);
}

uint32_t extras_bytes(const Extras& extras) {
  uint32_t n = lb::kTupleLength;
  for (const Extra& e : extras) n += extra_bytes(e.value);
  return n;
}

const char* to_string(OpScope s) {
  switch (s) {
    case OpScope::kPrologue: return "prologue";
    case OpScope::kTile: return "tile";
    case OpScope::kEpilogue: return "epilogue";
  }
  return "?";
}

bool op_scope_from_string(const std::string& name, OpScope* s) {
  for (OpScope c : {OpScope::kPrologue, OpScope::kTile, OpScope::kEpilogue}) {
    if (name == to_string(c)) {
      *s = c;
      return true;
    }
  }
  return false;
}

// --- typed composite ops

std::string math_arity_error(MathOp op, size_t operands) {
  return std::string(to_string(op)) + " takes " + std::to_string(math_op_arity(op)) +
         " operand(s), got " + std::to_string(operands);
}

const char* TypedOp::input_role(int i) const {
  if (is_gemm()) return i == 0 ? "a" : "b";
  return i == 0 ? "src_a" : "src_b";
}

namespace {

const ExtraValue* first_extra(const Extras& extras, std::string_view name) {
  for (const Extra& e : extras)
    if (same_name(e.name, name)) return &e.value;
  return nullptr;
}

// Shown in a message: a name from a replay file may be of any length.
std::string cut(std::string_view s) {
  constexpr size_t kMax = 200;
  if (s.size() <= kMax) return std::string(s);
  return std::string(s.substr(0, kMax)) + "... (" + std::to_string(s.size()) + " bytes)";
}

double extra_number(const Extras& extras, std::string_view name) {
  for (const Extra& e : extras) {
    if (!same_name(e.name, name)) continue;
    if (const auto* d = std::get_if<double>(&e.value)) return *d;
    if (const auto* i = std::get_if<int64_t>(&e.value)) return double(*i);
  }
  return 0.0;
}

}  // namespace

MathAttrs math_attrs(const Extras& extras) {
  return {extra_number(extras, "factor"), extra_number(extras, "value")};
}

bool OpDecoder::decode(const OpSpec& spec, TypedOp* op, std::string* error) {
  auto bad = [error](std::string msg) {
    *error = std::move(msg);
    return false;
  };
  if (!spec.has_out) return bad("needs an out handle");
  TypedOp t;
  t.scope = spec.scope;
  t.out = spec.out;
  if (std::string_view(spec.kind) == "gemm") {
    t.kind = OpKind::kGemm;
    const bool tile = spec.scope == OpScope::kTile;
    if (tile && tile_gemm_) return bad("a composite has at most one tile-scope gemm");
    static const char* const kRoles[] = {"a", "b"};
    for (int i = 0; i < 2; ++i) {
      const NamedOperand* o = nullptr;
      for (const NamedOperand& n : spec.operands) {
        if (std::string_view(n.name) == kRoles[i]) {
          o = &n;
          break;
        }
      }
      if (!o) return bad(std::string("missing operand '") + kRoles[i] + "'");
      t.in[i] = o->handle;
    }
    t.inputs = 2;
    int64_t* dims[] = {&t.gemm.m, &t.gemm.n, &t.gemm.k};
    static const char* const kDims[] = {"m", "n", "k"};
    for (int i = 0; i < 3; ++i) {
      const ExtraValue* v = first_extra(spec.extra, kDims[i]);
      const int64_t* n = v ? std::get_if<int64_t>(v) : nullptr;
      if (!n) return bad(std::string("needs int extra '") + kDims[i] + "'");
      *dims[i] = *n;
    }
    for (auto [flag, name] : {std::pair{&t.gemm.transpose_b, "transpose_b"},
                              std::pair{&t.gemm.accumulate, "accumulate"}}) {
      const ExtraValue* v = first_extra(spec.extra, name);
      const bool* b = v ? std::get_if<bool>(v) : nullptr;
      *flag = b && *b;
    }
    // Any other operand would be read (hazards, uninitialised reads) but
    // never computed with or checked: refused, as is a role given twice.
    bool seen[2] = {false, false};
    for (const NamedOperand& n : spec.operands) {
      const std::string_view role = n.name;
      const int i = role == "a" ? 0 : role == "b" ? 1 : -1;
      if (i < 0) return bad("unexpected operand '" + cut(n.name) + "' (a gemm op takes a and b)");
      if (seen[i]) return bad("duplicate operand '" + n.name + "'");
      seen[i] = true;
    }
    if (tile) tile_gemm_ = true;
    *op = t;
    return true;
  }
  t.kind = OpKind::kMath;
  if (!math_op_from_string(spec.kind, &t.math)) return bad("unknown op kind '" + spec.kind + "'");
  // Math operands are positional (src_a, src_b), whatever their names.
  const size_t n = spec.operands.size();
  if (n > 2) return bad("takes at most two operands");
  if (int(n) != math_op_arity(t.math)) return bad(math_arity_error(t.math, n));
  for (size_t i = 0; i < n; ++i) t.in[i] = spec.operands[i].handle;
  t.inputs = int(n);
  t.attrs = math_attrs(spec.extra);
  *op = t;
  return true;
}

bool decode_ops(const CompositeCmd& c, std::vector<TypedOp>* ops, size_t* bad_op,
                std::string* error) {
  OpDecoder d;
  ops->resize(c.ops.size());
  for (size_t i = 0; i < c.ops.size(); ++i) {
    if (!d.decode(c.ops[i], &(*ops)[i], error)) {
      ops->clear();
      *bad_op = i;
      return false;
    }
  }
  return true;
}

const std::vector<TypedOp>& typed_ops(const CompositeCmd& c, std::vector<TypedOp>& scratch) {
  if (c.built_typed() || c.typed.size() == c.ops.size()) return c.typed;
  size_t bad = 0;
  std::string why;
  if (!decode_ops(c, &scratch, &bad, &why)) {
    throw std::invalid_argument("CompositeCmd '" + cut(c.name) + "' op " + std::to_string(bad) +
                                ": " + why);
  }
  return scratch;
}

// --- docs/cost-model.md D2, one rule per command type

// (the single-op commands' are inline in commands.h)

uint32_t OpSpec::logical_bytes() const {
  return lb::kOpcode + lb::kEnum /* scope */ +
         lb::kTupleLength + lb::kHandle * uint32_t(operands.size()) +
         (has_out ? lb::kHandle : 0) + extras_bytes(extra);
}

const char* kind_name(const TypedOp& op) {
  if (op.is_gemm()) return "gemm";
  return op.kind == OpKind::kMath && int(op.math) < kNumMathOps ? to_string(op.math) : "?";  // "?": a corrupt op, named in its refusal
}

namespace {
bool has_math_attr(MathOp m) { return math_op_attr(m) != MathAttr::kNone; }
}  // namespace

OpSpec to_spec(const TypedOp& op) {
  OpSpec s{kind_name(op), op.scope};
  s.has_out = true;
  s.out = op.out;
  for (int i = 0; i < op.inputs && i < 2; ++i) s.operands.push_back({op.input_role(i), op.in[i]});
  if (op.is_gemm()) {
    s.extra = {{"m", op.gemm.m}, {"k", op.gemm.k}, {"n", op.gemm.n}};
    if (op.gemm.transpose_b) s.extra.push_back({"transpose_b", true});
    if (op.gemm.accumulate) s.extra.push_back({"accumulate", true});
  } else if (const MathAttr a = math_op_attr(op.math); a != MathAttr::kNone) {  // its row's extra
    s.extra = {{math_attr_name(a), a == MathAttr::kFactor ? op.attrs.factor : op.attrs.value}};
  }
  return s;
}

uint32_t typed_logical_bytes(const TypedOp& op) {
  // OpSpec::logical_bytes of to_spec(op): an int or float extra is 4
  // bytes, a bool 1 (extra_bytes), the list's length 1.
  uint32_t extras = lb::kTupleLength;
  if (op.is_gemm()) extras += 3 * lb::kScalar + (op.gemm.transpose_b ? 1 : 0) + (op.gemm.accumulate ? 1 : 0);
  else if (has_math_attr(op.math)) extras += lb::kScalar;
  return lb::kOpcode + lb::kEnum /* scope */ + lb::kTupleLength + lb::kHandle * uint32_t(op.inputs) +
         lb::kHandle /* out */ + extras;
}

uint32_t CompositeCmd::logical_bytes() const {
  uint32_t n = lb::kFraming + lb::kTupleLength;
  if (built_typed()) {
    for (const TypedOp& op : typed) n += typed_logical_bytes(op);
  }
  for (const OpSpec& op : ops) n += op.logical_bytes();
  // rw_handles are counted again even when they also appear as operands:
  // no de-duplication (docs/cost-model.md D2 counting rule).
  return n + lb::kTupleLength + lb::kHandle * uint32_t(rw_handles.size());
}

// --- variant helpers

bool single_op(const Command& cmd, TypedOp* op) {
  if (const auto* g = std::get_if<GemmCmd>(&cmd)) {
    *op = TypedOp{};
    op->kind = OpKind::kGemm;
    op->in[0] = g->a, op->in[1] = g->b, op->inputs = 2;
    op->out = g->out;
    op->gemm = {g->m, g->n, g->k, g->transpose_b, g->accumulate};
    return true;
  }
  if (const auto* m = std::get_if<MathCmd>(&cmd)) {
    *op = TypedOp{};
    op->kind = OpKind::kMath;
    op->math = m->op;
    for (size_t i = 0; i < m->operands.size() && i < 2; ++i) op->in[op->inputs++] = m->operands[i];
    op->out = m->out;
    op->attrs = math_attrs(m->extra);
    return true;
  }
  return false;
}

uint32_t logical_bytes(const Command& cmd) {
  return std::visit([](const auto& c) { return c.logical_bytes(); }, cmd);
}

HandleAccess handle_access(const Command& cmd) {
  HandleAccess a;
  handle_access(cmd, a);
  return a;
}

namespace {
// Drops repeats, keeping each handle's first place. Lists are short (a
// composite's ops): a scan of the kept ones beats sorting.
void keep_first_of_each(std::vector<Handle>& hs) {
  size_t kept = 0;
  for (size_t i = 0; i < hs.size(); ++i) {
    const Handle h = hs[i];
    size_t j = 0;
    while (j < kept && hs[j] != h) ++j;
    if (j == kept) hs[kept++] = h;
  }
  hs.resize(kept);
}
}  // namespace

void handle_access(const Command& cmd, HandleAccess& a) {
  a.reads.clear();
  a.writes.clear();
  // push_back into the reused capacity: a range insert of one or two
  // handles costs more (this runs for every command).
  auto set = [&a](Handle r, Handle w) {
    a.reads.push_back(r);
    a.writes.push_back(w);
  };
  std::visit(
      overloaded{
          [&](const GemmCmd& c) {  // out is read too when accumulating
            set(c.a, c.out);
            a.reads.push_back(c.b);
            if (c.accumulate) a.reads.push_back(c.out);
          },
          [&](const MathCmd& c) {
            for (Handle h : c.operands) a.reads.push_back(h);
            a.writes.push_back(c.out);
          },
          [&](const CompositeCmd& c) {
            if (c.built_typed()) {
              for (const TypedOp& op : c.typed) {
                for (int i = 0; i < op.inputs && i < 2; ++i) a.reads.push_back(op.in[i]);
                a.writes.push_back(op.out);
              }
            }
            for (const OpSpec& op : c.ops) {
              for (const NamedOperand& o : op.operands) a.reads.push_back(o.handle);
              if (op.has_out) a.writes.push_back(op.out);
            }
            for (Handle h : c.rw_handles) {
              a.reads.push_back(h);
              a.writes.push_back(h);
            }
            // Each handle once: the ops share tensors (softmax_merge's 20
            // reads are 10 tensors), and every handle listed costs the
            // scheduler a byte range and the hazard scan a comparison per
            // command in flight.
            keep_first_of_each(a.reads);
            keep_first_of_each(a.writes);
          },
          [&](const CpuOverheadCmd&) {},
          [&](const auto& c) {  // a command of fixed fields: its handles by access
            using T = std::decay_t<decltype(c)>;
            static_assert(has_fields_v<T>, "commands.h: a command lists its fields or has its own case here");
            for_each_field<T>([&](const auto& f) {
              if constexpr (std::is_same_v<field_member_t<decltype(f)>, Handle>)
                (f.access == Access::kRead ? a.reads : a.writes).push_back(c.*(f.member));
            });
          }},
      cmd);
}

}  // namespace kb
