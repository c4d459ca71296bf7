#include "models/pe/command_check.h"

#include <string>

#include "models/pe/init_tracker.h"

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
      const OpSpec& op = comp->ops[op_index];
      return s + " op " + std::to_string(op_index) + " (" + op.kind +
             (scope ? std::string(", ") + to_string(op.scope) : std::string()) + ")";
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

const TensorDesc& tensor(const TensorTable& t, Handle h, const Where& what,
                         const char* slot) {
  const TensorDesc* d = t.find(h);
  if (!d) fail(what, std::string(slot) + ": " + t.why_unknown(h));
  return *d;
}

void expect_space(const TensorTable& t, const TensorDesc& d, MemSpace s, const Where& what, const char* slot) {
  if (d.space != s) fail(what, std::string(slot) + " " + describe(t, d) + " must be in " + to_string(s));
}

void expect_same_shape(const TensorTable& t, const TensorDesc& a, const TensorDesc& b, const Where& what,
                       const char* sa, const char* sb) {
  if (a.rows != b.rows || a.cols != b.cols) {
    fail(what, std::string("shape mismatch: ") + sa + " " + describe(t, a) + " vs " + sb + " " + describe(t, b));
  }
}

void check_transfer(const TensorTable& t, Handle dst, Handle src, const Where& what,
                    const MemSpace* dst_space, const MemSpace* src_space) {
  const TensorDesc& d = tensor(t, dst, what, "dst");
  const TensorDesc& s = tensor(t, src, what, "src");
  if (dst_space) expect_space(t, d, *dst_space, what, "dst");
  if (src_space) expect_space(t, s, *src_space, what, "src");
  expect_same_shape(t, d, s, what, "dst", "src");
  if (d.dtype != s.dtype) fail(what, "dtype mismatch: dst " + describe(t, d) + " vs src " + describe(t, s));
}

// tile_scope: operands may live in HBM (the scheduler streams them).
void check_gemm(const TensorTable& t, Handle a, Handle b, Handle out, int64_t m, int64_t n,
                int64_t k, bool transpose_b, bool tile_scope, const Where& what) {
  const TensorDesc& da = tensor(t, a, what, "a");
  const TensorDesc& db = tensor(t, b, what, "b");
  const TensorDesc& dout = tensor(t, out, what, "out");
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

void check_math(const TensorTable& t, MathOp op, const Handle* operands, size_t count, Handle out,
                const Where& what) {
  if (int(count) != math_op_arity(op)) {
    fail(what, std::string(to_string(op)) + " takes " + std::to_string(math_op_arity(op)) +
                   " operand(s), got " + std::to_string(count));
  }
  const TensorDesc& dout = tensor(t, out, what, "out");
  expect_space(t, dout, MemSpace::kTcm, what, "out");
  const TensorDesc* in[2] = {nullptr, nullptr};  // arity <= 2, checked above
  for (size_t i = 0; i < count; ++i) {
    const char* slot = i == 0 ? "src_a" : "src_b";
    in[i] = &tensor(t, operands[i], what, slot);
    expect_space(t, *in[i], MemSpace::kTcm, what, slot);
  }
  switch (op) {
    case MathOp::kFill: return;
    case MathOp::kRowMax:
    case MathOp::kRowSum:
      if (dout.rows != in[0]->rows || dout.cols != 1) {
        fail(what, "shape mismatch: " + std::string(to_string(op)) + " of src_a " + describe(t, *in[0]) +
                       " needs out [" + std::to_string(in[0]->rows) + ", 1], got " + describe(t, dout));
      }
      return;
    case MathOp::kAddBcast:
    case MathOp::kSubBcast:
    case MathOp::kMulBcast:
    case MathOp::kDivBcast:
      expect_same_shape(t, *in[0], dout, what, "src_a", "out");
      if (in[1]->rows != dout.rows || in[1]->cols != 1) {
        fail(what, "shape mismatch: broadcast src_b " + describe(t, *in[1]) + " must be [" +
                       std::to_string(dout.rows) + ", 1] for out " + describe(t, dout));
      }
      return;
    default:
      for (size_t i = 0; i < count; ++i) {
        expect_same_shape(t, *in[i], dout, what, i == 0 ? "src_a" : "src_b", "out");
      }
  }
}

const ExtraValue* find_extra(const Extras& extras, const char* name) {
  for (const Extra& e : extras)
    if (e.name == name) return &e.value;
  return nullptr;
}

int64_t extra_int(const Extras& extras, const char* name, const Where& what) {
  const ExtraValue* v = find_extra(extras, name);
  if (!v || !std::holds_alternative<int64_t>(*v)) fail(what, std::string("needs int extra '") + name + "'");
  return std::get<int64_t>(*v);
}

bool extra_bool(const Extras& extras, const char* name) {
  const ExtraValue* v = find_extra(extras, name);
  return v && std::holds_alternative<bool>(*v) && std::get<bool>(*v);
}

Handle operand(const OpSpec& op, const char* name, const Where& what) {
  for (const NamedOperand& o : op.operands)
    if (o.name == name) return o.handle;
  fail(what, std::string("missing operand '") + name + "'");
}

}  // namespace

void check_command(const Command& cmd, const TensorTable& t) {
  const MemSpace hbm = MemSpace::kHbm, tcm = MemSpace::kTcm;
  if (const auto* rd = std::get_if<DmaReadCmd>(&cmd)) {
    check_transfer(t, rd->dst, rd->src, "DmaReadCmd", &tcm, &hbm);
  } else if (const auto* wr = std::get_if<DmaWriteCmd>(&cmd)) {
    check_transfer(t, wr->dst, wr->src, "DmaWriteCmd", &hbm, &tcm);
  } else if (const auto* cp = std::get_if<CopyCmd>(&cmd)) {
    check_transfer(t, cp->dst, cp->src, "CopyCmd", nullptr, nullptr);
  } else if (const auto* gemm = std::get_if<GemmCmd>(&cmd)) {
    check_gemm(t, gemm->a, gemm->b, gemm->out, gemm->m, gemm->n, gemm->k, gemm->transpose_b, false, "GemmCmd");
  } else if (const auto* math = std::get_if<MathCmd>(&cmd)) {
    check_math(t, math->op, math->operands.data(), math->operands.size(), math->out, Where("MathCmd", to_string(math->op)));
  } else if (const auto* comp = std::get_if<CompositeCmd>(&cmd)) {
    const Where base(*comp, size_t(-1), false);
    const OpSpec* tile_gemm = nullptr;
    for (size_t i = 0; i < comp->ops.size(); ++i) {
      const OpSpec& op = comp->ops[i];
      const Where what(*comp, i, true);
      if (!op.has_out) fail(what, "needs an out handle");
      if (op.is_gemm()) {
        const bool tile = op.scope == OpScope::kTile;
        if (tile && tile_gemm) fail(what, "a composite has at most one tile-scope gemm");
        if (tile) tile_gemm = &op;
        check_gemm(t, operand(op, "a", what), operand(op, "b", what), op.out,
                   extra_int(op.extra, "m", what), extra_int(op.extra, "n", what),
                   extra_int(op.extra, "k", what), extra_bool(op.extra, "transpose_b"), tile, what);
        continue;
      }
      MathOp m;
      if (!math_op_from_string(op.kind, &m)) fail(what, "unknown op kind '" + op.kind + "'");
      Handle in[2] = {0, 0};
      const size_t n = std::min<size_t>(op.operands.size(), 2);
      for (size_t k = 0; k < n; ++k) in[k] = op.operands[k].handle;
      if (op.operands.size() > 2) fail(what, "takes at most two operands");
      check_math(t, m, in, n, op.out, what);
      if (op.scope == OpScope::kTile) {
        if (!tile_gemm) fail(what, "a tile-scope math op must follow the tile-scope gemm it works on");
        if (math_op_is_reduction(m)) fail(what, "reductions cannot run per tile; use prologue or epilogue");
        expect_same_shape(t, t.at(op.out), t.at(tile_gemm->out), what, "out", "gemm out");
      }
    }
    for (Handle h : comp->rw_handles) tensor(t, h, base, "rw_handle");
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

// At most three reads (a, b and an accumulated out) and one write.
struct Access {
  std::pair<const char*, Handle> reads[3];
  int nreads = 0;
  Handle write = 0;
  void read(const char* slot, Handle h) { reads[nreads++] = {slot, h}; }
};

void read_then_write(const Access& a, const TensorTable& t, InitTracker& init, const Where& what) {
  for (int i = 0; i < a.nreads; ++i) {
    const auto& [slot, h] = a.reads[i];
    const TensorDesc& d = t.at(h);
    if (!init.initialised(d)) {
      fail(what, std::string("reads uninitialised ") + slot + " " + describe(t, d) +
                     " (nothing has written it: load or compute it first, or initialise it from the host)");
    }
  }
  init.mark(t.at(a.write));
}

Access op_access(const OpSpec& op) {
  Access a;
  for (const NamedOperand& o : op.operands) a.read(o.name.c_str(), o.handle);
  if (op.is_gemm() && extra_bool(op.extra, "accumulate")) a.read("out", op.out);
  a.write = op.out;
  return a;
}

}  // namespace

void check_initialised(const Command& cmd, const TensorTable& t, InitTracker& init) {
  Access a;
  if (const auto* rd = std::get_if<DmaReadCmd>(&cmd)) {
    a.read("src", rd->src);
    a.write = rd->dst;
    read_then_write(a, t, init, "DmaReadCmd");
  } else if (const auto* wr = std::get_if<DmaWriteCmd>(&cmd)) {
    a.read("src", wr->src);
    a.write = wr->dst;
    read_then_write(a, t, init, "DmaWriteCmd");
  } else if (const auto* cp = std::get_if<CopyCmd>(&cmd)) {
    a.read("src", cp->src);
    a.write = cp->dst;
    read_then_write(a, t, init, "CopyCmd");
  } else if (const auto* gemm = std::get_if<GemmCmd>(&cmd)) {
    a.read("a", gemm->a);
    a.read("b", gemm->b);
    if (gemm->accumulate) a.read("out", gemm->out);
    a.write = gemm->out;
    read_then_write(a, t, init, "GemmCmd");
  } else if (const auto* math = std::get_if<MathCmd>(&cmd)) {
    for (size_t i = 0; i < math->operands.size() && i < 2; ++i) a.read(i == 0 ? "src_a" : "src_b", math->operands[i]);
    a.write = math->out;
    read_then_write(a, t, init, Where("MathCmd", to_string(math->op)));
  } else if (const auto* comp = std::get_if<CompositeCmd>(&cmd)) {
    // The plan's order: prologue, tile, epilogue; program order within each.
    for (OpScope scope : {OpScope::kPrologue, OpScope::kTile, OpScope::kEpilogue}) {
      for (size_t i = 0; i < comp->ops.size(); ++i) {
        const OpSpec& op = comp->ops[i];
        if (op.scope != scope) continue;
        read_then_write(op_access(op), t, init, Where(*comp, i, false));
      }
    }
  }
}

}  // namespace kb
