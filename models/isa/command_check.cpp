#include "models/isa/command_check.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <type_traits>

#include "models/isa/init_tracker.h"
#include "models/util/overloaded.h"

namespace kb {

namespace {

// Which command a message is about, formatted only when one is thrown:
// checks run for every command, so the happy path builds no strings.
struct Where {
  Where(const char* p, const char* s = nullptr) : prefix(p), suffix(s) {}
  // Op `index` of composite `c`, with its scope when `with_scope`.
  Where(const CompositeCmd& c, size_t index, bool with_scope)
      : comp(&c), op_index(index), scope(with_scope) {}
  std::string str() const {
    if (comp) {
      std::string s = "CompositeCmd '" + comp->name + "'";
      if (op_index == size_t(-1)) return s;
      const bool text = !comp->built_typed();
      const std::string kind = text ? comp->ops[op_index].kind : kind_name(comp->typed[op_index]);
      const OpScope op_scope = text ? comp->ops[op_index].scope : comp->typed[op_index].scope;
      return s + " op " + std::to_string(op_index) + " (" + kind +
             (scope ? std::string(", ") + to_string(op_scope) : std::string()) + ")";
    }
    return suffix ? std::string(prefix) + " " + suffix : std::string(prefix);
  }
  const char* prefix = "";
  const char* suffix = nullptr;
  const CompositeCmd* comp = nullptr;
  size_t op_index = size_t(-1);
  bool scope = false;
};

[[noreturn]] void fail(const Where& what, const std::string& msg) {
  throw KernelError(what.str() + ": " + msg);
}

std::string describe(const TensorTable& t, const TensorDesc& d) {
  return "'" + t.name_of(d) + "' " + d.shape_string();
}

// The messages are built out of line, so the checks below stay small
// enough to inline: they run for every operand of every command.
[[noreturn, gnu::noinline, gnu::cold]] void fail_unknown(const TensorTable& t, Handle h, const Where& what,
                                                          const char* slot) {
  fail(what, std::string(slot) + ": " + t.why_unknown(h));
}

[[noreturn, gnu::noinline, gnu::cold]] void fail_space(const TensorTable& t, const TensorDesc& d, MemSpace s,
                                                        const Where& what, const char* slot) {
  fail(what, std::string(slot) + " " + describe(t, d) + " must be in " + to_string(s));
}

[[noreturn, gnu::noinline, gnu::cold]] void fail_shape(const TensorTable& t, const TensorDesc& a,
                                                        const TensorDesc& b, const Where& what, const char* sa,
                                                        const char* sb) {
  fail(what, std::string("shape mismatch: ") + sa + " " + describe(t, a) + " vs " + sb + " " + describe(t, b));
}

// Always inline: GCC keeps it out of line otherwise, a call per operand.
[[gnu::always_inline]] inline const TensorDesc& tensor(const TensorTable& t, Handle h, const Where& what,
                                                       const char* slot) {
  const TensorDesc* d = t.find(h);
  if (!d) fail_unknown(t, h, what, slot);
  return *d;
}

void expect_space(const TensorTable& t, const TensorDesc& d, MemSpace s, const Where& what, const char* slot) {
  if (d.space != s) fail_space(t, d, s, what, slot);
}

void expect_same_shape(const TensorTable& t, const TensorDesc& a, const TensorDesc& b, const Where& what,
                       const char* sa, const char* sb) {
  if (a.rows != b.rows || a.cols != b.cols) fail_shape(t, a, b, what, sa, sb);
}

MemSpace space_of(SpaceRule r) { return r == SpaceRule::kTcm ? MemSpace::kTcm : MemSpace::kHbm; }

// A command of fixed fields (command_fields.h): every handle names a tensor
// (in field order), then each in its space, then T::kCheck. `found` (if not
// null) receives the tensors read, in field order, and the one written.
template <class T>
void check_fields(const T& c, const TensorTable& t, CommandTensors* found) {
  const Where what(command_name<T>());
  constexpr size_t kFields = std::tuple_size_v<decltype(T::fields())>;
  const TensorDesc* d[kFields] = {};
  const char* write_key = nullptr;
  const TensorDesc* written = nullptr;
  const TensorDesc* read = nullptr;
  const char* read_key = nullptr;
  size_t i = 0;
  for_each_field<T>([&](const auto& f) {
    if constexpr (std::is_same_v<field_member_t<decltype(f)>, Handle>) d[i] = &tensor(t, c.*(f.member), what, f.key);
    ++i;
  });
  i = 0;
  for_each_field<T>([&](const auto& f) {
    if constexpr (std::is_same_v<field_member_t<decltype(f)>, Handle>) {
      if (f.space != SpaceRule::kAny) expect_space(t, *d[i], space_of(f.space), what, f.key);
      if (f.access == Access::kWrite) written = d[i], write_key = f.key;
      else if (!read) read = d[i], read_key = f.key;
    }
    ++i;
  });
  if constexpr (T::kCheck == CheckRule::kTransfer) {
    static_assert(kFields >= 2, "a transfer writes one tensor and reads another");
    expect_same_shape(t, *written, *read, what, write_key, read_key);
    if (written->dtype != read->dtype) {
      fail(what, std::string("dtype mismatch: ") + write_key + " " + describe(t, *written) + " vs " + read_key + " " +
                     describe(t, *read));
    }
  }
  if (found) {
    i = 0;
    for_each_field<T>([&](const auto& f) {
      if constexpr (std::is_same_v<field_member_t<decltype(f)>, Handle>)
        if (f.access == Access::kRead) found->read(f.key, d[i]);
      ++i;
    });
    if (written) found->set_write(written);
    found->resolved = true;
  }
}

// tile_scope: operands may live in HBM (the scheduler streams them).
// `found` (if not null) receives a, b and out.
void check_gemm(const TensorTable& t, Handle a, Handle b, Handle out, int64_t m, int64_t n,
                int64_t k, bool transpose_b, bool tile_scope, const Where& what,
                const TensorDesc** found = nullptr) {
  const TensorDesc& da = tensor(t, a, what, "a");
  const TensorDesc& db = tensor(t, b, what, "b");
  const TensorDesc& dout = tensor(t, out, what, "out");
  if (found) found[0] = &da, found[1] = &db, found[2] = &dout;
  if (!tile_scope) {
    expect_space(t, da, MemSpace::kTcm, what, "a");
    expect_space(t, db, MemSpace::kTcm, what, "b");
    expect_space(t, dout, MemSpace::kTcm, what, "out");
  }
  const int64_t bk = transpose_b ? db.cols : db.rows;
  const int64_t bn = transpose_b ? db.rows : db.cols;
  if (da.cols != bk || dout.rows != da.rows || dout.cols != bn) {
    fail(what, "shape mismatch: a " + describe(t, da) + (transpose_b ? " @ b^T " : " @ b ") +
                   describe(t, db) + " -> out " + describe(t, dout));
  }
  if (m != da.rows || n != bn || k != da.cols) {
    fail(what, "m/n/k = " + std::to_string(m) + "/" + std::to_string(n) + "/" + std::to_string(k) +
                   " do not match the operands (" + std::to_string(da.rows) + "/" +
                   std::to_string(bn) + "/" + std::to_string(da.cols) + ")");
  }
}

// `found` (if not null) receives the operands read and out.
void check_math(const TensorTable& t, MathOp op, const Handle* operands, size_t count, Handle out,
                const Where& what, CommandTensors* found = nullptr) {
  if (int(count) != math_op_arity(op)) fail(what, math_arity_error(op, count));
  const TensorDesc& dout = tensor(t, out, what, "out");
  expect_space(t, dout, MemSpace::kTcm, what, "out");
  const TensorDesc* in[2] = {nullptr, nullptr};  // arity <= 2, checked above
  for (size_t i = 0; i < count; ++i) {
    const char* slot = i == 0 ? "src_a" : "src_b";
    in[i] = &tensor(t, operands[i], what, slot);
    expect_space(t, *in[i], MemSpace::kTcm, what, slot);
    if (found) found->read(slot, in[i]);
  }
  if (found) {  // the shape checks below return or throw
    found->set_write(&dout);
    found->resolved = true;
  }
  switch (math_op_info(op).shape) {
    case MathShape::kFill: return;
    case MathShape::kRowReduction:
      if (dout.rows != in[0]->rows || dout.cols != 1) {
        fail(what, "shape mismatch: " + std::string(to_string(op)) + " of src_a " + describe(t, *in[0]) +
                       " needs out [" + std::to_string(in[0]->rows) + ", 1], got " + describe(t, dout));
      }
      return;
    case MathShape::kBroadcastColumn:
      expect_same_shape(t, *in[0], dout, what, "src_a", "out");
      if (in[1]->rows != dout.rows || in[1]->cols != 1) {
        fail(what, "shape mismatch: broadcast src_b " + describe(t, *in[1]) + " must be [" +
                       std::to_string(dout.rows) + ", 1] for out " + describe(t, dout));
      }
      return;
    case MathShape::kElementwise:
      for (size_t i = 0; i < count; ++i) {
        expect_same_shape(t, *in[i], dout, what, i == 0 ? "src_a" : "src_b", "out");
      }
  }
}

// What OpDecoder checks of text that a typed op's type does not: known
// enums, a GEMM's operands a and b, one tile-scope GEMM at most, a math
// op's arity.
void check_typed(const TypedOp& op, bool* tile_gemm, const Where& what) {
  if (uint8_t(op.scope) > uint8_t(OpScope::kEpilogue)) fail(what, "unknown scope " + std::to_string(int(op.scope)));
  if (op.is_gemm()) {
    if (op.inputs != 2) fail(what, "a gemm op takes operands a and b, got " + std::to_string(op.inputs) + " operand(s)");
    if (op.scope != OpScope::kTile) return;
    if (*tile_gemm) fail(what, "a composite has at most one tile-scope gemm");
    *tile_gemm = true;
    return;
  }
  if (op.kind != OpKind::kMath) fail(what, "unknown op kind " + std::to_string(int(op.kind)));
  if (int(op.math) >= kNumMathOps) fail(what, "unknown math op " + std::to_string(int(op.math)));
  if (op.inputs < 0 || op.inputs > 2 || op.inputs != math_op_arity(op.math)) {
    fail(what, math_arity_error(op.math, size_t(std::max(op.inputs, 0))));
  }
}

// A composite: each op decoded (OpDecoder, once, into c.typed; built
// typed: its type checked) and then checked against the table, op by op
// in program order.
void decode_and_check(CompositeCmd& c, const TensorTable& t) {
  const Where base(c, size_t(-1), false);
  OpDecoder decoder;
  const bool text = !c.built_typed();
  if (text) c.typed.resize(c.ops.size());
  const TypedOp* tile_gemm = nullptr;
  bool typed_tile_gemm = false;
  for (size_t i = 0; i < c.typed.size(); ++i) {
    const Where what(c, i, true);
    TypedOp& op = c.typed[i];
    std::string why;
    if (text && !decoder.decode(c.ops[i], &op, &why)) fail(what, why);
    if (!text) check_typed(op, &typed_tile_gemm, what);
    switch (op.kind) {
      case OpKind::kGemm: {
        const bool tile = op.scope == OpScope::kTile;
        if (tile) tile_gemm = &op;
        check_gemm(t, op.a(), op.b(), op.out, op.gemm.m, op.gemm.n, op.gemm.k, op.gemm.transpose_b,
                   tile, what);
        break;
      }
      case OpKind::kMath:
        check_math(t, op.math, op.in, size_t(op.inputs), op.out, what);
        if (op.scope == OpScope::kTile) {
          if (!tile_gemm) fail(what, "a tile-scope math op must follow the tile-scope gemm it works on");
          if (math_op_is_reduction(op.math)) fail(what, "reductions cannot run per tile; use prologue or epilogue");
          expect_same_shape(t, t.at(op.out), t.at(tile_gemm->out), what, "out", "gemm out");
        }
        break;
    }
  }
  for (Handle h : c.rw_handles) tensor(t, h, base, "rw_handle");
}

void check_composite(CompositeCmd& c, const TensorTable& t) {
  try {
    decode_and_check(c, t);
  } catch (...) {
    if (!c.built_typed()) c.typed.clear();  // a refused composite carries no decode (built typed: its ops)
    throw;
  }
}

}  // namespace

void check_command(Command& cmd, const TensorTable& t, CommandTensors* found) {
  if (found) found->nreads = 0, found->writes = false, found->resolved = false;
  std::visit(
      overloaded{
          [&](const GemmCmd& g) {
            const TensorDesc* d[3];
            check_gemm(t, g.a, g.b, g.out, g.m, g.n, g.k, g.transpose_b, false, "GemmCmd", d);
            if (found) {  // check_initialised's order: a, b, then an accumulated out
              found->read("a", d[0]);
              found->read("b", d[1]);
              if (g.accumulate) found->read("out", d[2]);
              found->set_write(d[2]);
              found->resolved = true;
            }
          },
          [&](const MathCmd& m) {
            check_math(t, m.op, m.operands.data(), m.operands.size(), m.out,
                       Where("MathCmd", to_string(m.op)), found);
          },
          [&](CompositeCmd& c) { check_composite(c, t); },
          [](const CpuOverheadCmd&) {},  // no operands (and never checked: D5 bypass)
          [&](const auto& c) {
            static_assert(has_fields_v<std::decay_t<decltype(c)>>,
                          "commands.h: a command lists its fields or has its own case here");
            check_fields(c, t, found);
          }},
      cmd);
}

void check_ipc_peer(const Command& cmd, uint32_t pes) {
  const uint32_t* peer = nullptr;
  const char* what = "";
  if (const auto* sd = std::get_if<SendCmd>(&cmd)) peer = &sd->dst, what = "SendCmd: destination";
  if (const auto* rv = std::get_if<RecvCmd>(&cmd)) peer = &rv->src, what = "RecvCmd: source";
  if (peer && *peer >= pes) {
    fail(what, "PE " + std::to_string(*peer) + " does not exist (the top has " + std::to_string(pes) +
                   " PE" + (pes == 1 ? "" : "s") + ", numbered from 0)");
  }
}

void check_data_dtypes(const Command& cmd, const TensorTable& t) {
  const HandleAccess a = handle_access(cmd);
  for (const std::vector<Handle>* hs : {&a.reads, &a.writes}) {
    for (Handle h : *hs) {
      const TensorDesc& d = t.at(h);
      if (d.dtype != Dtype::kFp32 && d.dtype != Dtype::kBf16) {
        fail(command_type_name(cmd), "data mode supports fp32 and bf16, not " +
                                         std::string(to_string(d.dtype)) + ": " + describe(t, d));
      }
    }
  }
}

namespace {

[[noreturn, gnu::noinline, gnu::cold]] void fail_uninitialised(const TensorTable& t, const TensorDesc& d,
                                                                const char* slot, const Where& what) {
  fail(what, std::string("reads uninitialised ") + slot + " " + describe(t, d) +
                 " (nothing has written it: load or compute it first, or initialise it from the host)");
}

const TensorDesc& desc_of(const TensorTable& t, const CommandTensors::Ref& r) {
  return r.desc ? *r.desc : t.at(r.handle);
}

// Every read, in order, holds a value; then the write is marked.
void read_then_write(const CommandTensors& a, const TensorTable& t, InitTracker& init, const Where& what) {
  for (int i = 0; i < a.nreads; ++i) {
    const TensorDesc& d = desc_of(t, a.reads[i]);
    if (!init.initialised(d)) fail_uninitialised(t, d, a.reads[i].slot, what);
  }
  if (a.writes) init.mark(desc_of(t, a.write));
}

void op_access(const TypedOp& op, CommandTensors* a) {
  for (int i = 0; i < op.inputs; ++i) a->read(op.input_role(i), nullptr, op.in[i]);
  if (op.is_gemm() && op.gemm.accumulate) a->read("out", nullptr, op.out);
  a->set_write(nullptr, op.out);
}

// A single-op command's tensors by handle (check_command did not give them).
void by_handle(const Command& cmd, CommandTensors* a) {
  std::visit(overloaded{[&](const GemmCmd& g) {  // out is read too when accumulating
                          a->read("a", nullptr, g.a);
                          a->read("b", nullptr, g.b);
                          if (g.accumulate) a->read("out", nullptr, g.out);
                          a->set_write(nullptr, g.out);
                        },
                        [&](const MathCmd& m) {
                          for (size_t i = 0; i < m.operands.size() && i < 2; ++i)
                            a->read(i == 0 ? "src_a" : "src_b", nullptr, m.operands[i]);
                          a->set_write(nullptr, m.out);
                        },
                        [](const CompositeCmd&) {},  // per op (check_initialised)
                        [](const CpuOverheadCmd&) {},
                        [&](const auto& c) {  // fixed fields: reads in field order, then the write
                          using T = std::decay_t<decltype(c)>;
                          static_assert(has_fields_v<T>, "commands.h: a command lists its fields or has its own case here");
                          for_each_field<T>([&](const auto& f) {
                            if constexpr (std::is_same_v<field_member_t<decltype(f)>, Handle>) {
                              if (f.access == Access::kRead) a->read(f.key, nullptr, c.*(f.member));
                              else a->set_write(nullptr, c.*(f.member));
                            }
                          });
                        }},
             cmd);
}

Where single_op_where(const Command& cmd) {
  const auto* m = std::get_if<MathCmd>(&cmd);
  return Where(command_type_name(cmd), m ? to_string(m->op) : nullptr);
}

}  // namespace

void check_initialised(const Command& cmd, const TensorTable& t, InitTracker& init,
                       const CommandTensors* tensors) {
  if (tensors && tensors->resolved) {  // PE_CPU's path: found by check_command
    read_then_write(*tensors, t, init, single_op_where(cmd));
    return;
  }
  if (const auto* c = std::get_if<CompositeCmd>(&cmd)) {
    std::vector<TypedOp> scratch;
    const std::vector<TypedOp>& ops = typed_ops(*c, scratch);
    // The plan's order: prologue, tile, epilogue; program order within each.
    for (OpScope scope : {OpScope::kPrologue, OpScope::kTile, OpScope::kEpilogue}) {
      for (size_t i = 0; i < ops.size(); ++i) {
        if (ops[i].scope != scope) continue;
        CommandTensors a;
        op_access(ops[i], &a);
        read_then_write(a, t, init, Where(*c, i, false));
      }
    }
    return;
  }
  CommandTensors a;
  by_handle(cmd, &a);
  read_then_write(a, t, init, single_op_where(cmd));
}

}  // namespace kb
