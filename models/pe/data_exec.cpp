#include "models/pe/data_exec.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kb {

namespace {

double extra_number(const Extras& extras, const char* name) {
  for (const Extra& e : extras) {
    if (e.name != name) continue;
    if (const auto* d = std::get_if<double>(&e.value)) return *d;
    if (const auto* i = std::get_if<int64_t>(&e.value)) return double(*i);
  }
  return 0.0;
}

bool extra_flag(const Extras& extras, const char* name) {
  for (const Extra& e : extras)
    if (e.name == name && std::holds_alternative<bool>(e.value)) return std::get<bool>(e.value);
  return false;
}

Handle operand(const OpSpec& op, const char* name) {
  for (const NamedOperand& o : op.operands)
    if (o.name == name) return o.handle;
  return 0;
}

float apply(MathOp op, float a, float b, const Extras& extra) {
  switch (op) {
    case MathOp::kAdd:
    case MathOp::kAddBcast: return a + b;
    case MathOp::kSub:
    case MathOp::kSubBcast: return a - b;
    case MathOp::kMul:
    case MathOp::kMulBcast: return a * b;
    case MathOp::kDiv:
    case MathOp::kDivBcast: return a / b;
    case MathOp::kMax: return std::max(a, b);
    case MathOp::kExp: return std::exp(a);
    case MathOp::kScale: return a * float(extra_number(extra, "factor"));
    case MathOp::kFill: return float(extra_number(extra, "value"));
    default: return 0.0f;
  }
}

bool is_bcast(MathOp op) {
  return op == MathOp::kAddBcast || op == MathOp::kSubBcast || op == MathOp::kMulBcast ||
         op == MathOp::kDivBcast;
}

// out[r, c] = op(operands) over rows [r0, r0+nr) x cols [c0, c0+nc) of out.
// Every input element is read before the region is written, so in-place
// ops (out aliasing an operand) see the old values.
void math_region(DataContext& ctx, MathOp op, const std::vector<Handle>& in, Handle out_h,
                 const Extras& extra, int64_t r0, int64_t nr, int64_t c0, int64_t nc) {
  const TensorDesc& out = ctx.table.at(out_h);
  std::vector<const TensorDesc*> src;
  for (Handle h : in) src.push_back(&ctx.table.at(h));
  std::vector<float> result;
  if (math_op_is_reduction(op)) {  // out [rows, 1] from src [rows, cols]
    const TensorDesc& a = *src[0];
    for (int64_t r = r0; r < r0 + nr; ++r) {
      float acc = op == MathOp::kRowMax ? -std::numeric_limits<float>::infinity() : 0.0f;
      for (int64_t c = 0; c < a.cols; ++c) {
        const float x = ctx.mem.get(a, r, c);
        acc = op == MathOp::kRowMax ? std::max(acc, x) : acc + x;
      }
      result.push_back(acc);
    }
    for (int64_t r = r0; r < r0 + nr; ++r) ctx.mem.set(out, r, 0, result[size_t(r - r0)]);
    return;
  }
  result.reserve(size_t(nr * nc));
  for (int64_t r = r0; r < r0 + nr; ++r) {
    for (int64_t c = c0; c < c0 + nc; ++c) {
      const float a = src.size() > 0 ? ctx.mem.get(*src[0], r, c) : 0.0f;
      const float b = src.size() > 1 ? ctx.mem.get(*src[1], r, is_bcast(op) ? 0 : c) : 0.0f;
      result.push_back(apply(op, a, b, extra));
    }
  }
  size_t i = 0;
  for (int64_t r = r0; r < r0 + nr; ++r)
    for (int64_t c = c0; c < c0 + nc; ++c) ctx.mem.set(out, r, c, result[i++]);
}

void math_full(DataContext& ctx, MathOp op, const std::vector<Handle>& in, Handle out,
               const Extras& extra) {
  const TensorDesc& o = ctx.table.at(out);
  math_region(ctx, op, in, out, extra, 0, o.rows, 0, math_op_is_reduction(op) ? 1 : o.cols);
}

// acc[i, j] += sum over k in [k0, k0+kk) of a[m0+i, k] * b[k, n0+j] (b^T when
// transposed), in fp32, k ascending.
void gemm_accumulate(DataContext& ctx, const TensorDesc& a, const TensorDesc& b, bool transpose_b,
                     int64_t m0, int64_t rows, int64_t n0, int64_t cols, int64_t k0, int64_t kk,
                     std::vector<float>& acc) {
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      float sum = acc[size_t(i * cols + j)];
      for (int64_t k = k0; k < k0 + kk; ++k) {
        const float bv = transpose_b ? ctx.mem.get(b, n0 + j, k) : ctx.mem.get(b, k, n0 + j);
        sum += ctx.mem.get(a, m0 + i, k) * bv;
      }
      acc[size_t(i * cols + j)] = sum;
    }
  }
}

std::vector<float> read_block(const DataContext& ctx, const TensorDesc& t, int64_t r0, int64_t nr,
                              int64_t c0, int64_t nc) {
  std::vector<float> v;
  v.reserve(size_t(nr * nc));
  for (int64_t r = r0; r < r0 + nr; ++r)
    for (int64_t c = c0; c < c0 + nc; ++c) v.push_back(ctx.mem.get(t, r, c));
  return v;
}

void write_block(DataContext& ctx, const TensorDesc& t, int64_t r0, int64_t nr, int64_t c0,
                 int64_t nc, const std::vector<float>& v) {
  size_t i = 0;
  for (int64_t r = r0; r < r0 + nr; ++r)
    for (int64_t c = c0; c < c0 + nc; ++c) ctx.mem.set(t, r, c, v[i++]);
}

void copy_tensor(DataContext& ctx, Handle dst, Handle src) {
  const TensorDesc& d = ctx.table.at(dst);
  const TensorDesc& s = ctx.table.at(src);
  write_block(ctx, d, 0, d.rows, 0, d.cols, read_block(ctx, s, 0, s.rows, 0, s.cols));
}

void single_op(DataContext& ctx, const Command& cmd) {
  if (const auto* c = std::get_if<DmaReadCmd>(&cmd)) return copy_tensor(ctx, c->dst, c->src);
  if (const auto* c = std::get_if<DmaWriteCmd>(&cmd)) return copy_tensor(ctx, c->dst, c->src);
  if (const auto* c = std::get_if<CopyCmd>(&cmd)) return copy_tensor(ctx, c->dst, c->src);
  if (const auto* c = std::get_if<MathCmd>(&cmd)) return math_full(ctx, c->op, c->operands, c->out, c->extra);
  if (const auto* c = std::get_if<GemmCmd>(&cmd)) {
    const TensorDesc& out = ctx.table.at(c->out);
    std::vector<float> acc = c->accumulate ? read_block(ctx, out, 0, c->m, 0, c->n)
                                           : std::vector<float>(size_t(c->m * c->n), 0.0f);
    gemm_accumulate(ctx, ctx.table.at(c->a), ctx.table.at(c->b), c->transpose_b, 0, c->m, 0, c->n,
                    0, c->k, acc);
    write_block(ctx, out, 0, c->m, 0, c->n, acc);
  }
}

std::vector<Handle> operand_handles(const OpSpec& op) {
  std::vector<Handle> h;
  for (const NamedOperand& o : op.operands) h.push_back(o.handle);
  return h;
}

void composite_stage(DataContext& ctx, const Stage& s, CommandData& d) {
  const auto& comp = std::get<CompositeCmd>(d.cmd);
  if (s.op_index < 0) return;
  const OpSpec& op = comp.ops[size_t(s.op_index)];
  if (s.tile < 0) {  // prologue / epilogue: the whole op
    if (op.is_gemm()) {
      const TensorDesc& out = ctx.table.at(op.out);
      const TensorDesc& a = ctx.table.at(operand(op, "a"));
      std::vector<float> acc = extra_flag(op.extra, "accumulate")
                                   ? read_block(ctx, out, 0, out.rows, 0, out.cols)
                                   : std::vector<float>(size_t(out.rows * out.cols), 0.0f);
      gemm_accumulate(ctx, a, ctx.table.at(operand(op, "b")), extra_flag(op.extra, "transpose_b"),
                      0, out.rows, 0, out.cols, 0, a.cols, acc);
      write_block(ctx, out, 0, out.rows, 0, out.cols, acc);
      return;
    }
    MathOp m{};
    math_op_from_string(op.kind, &m);
    math_full(ctx, m, operand_handles(op), op.out, op.extra);
    return;
  }
  const auto key = std::make_pair(s.m0, s.n0);
  switch (s.kind) {
    case RecordKind::kGemm: {
      const TensorDesc& out = ctx.table.at(op.out);
      auto it = d.accumulators.find(key);
      if (s.k0 == 0) {
        std::vector<float> init = extra_flag(op.extra, "accumulate")
                                      ? read_block(ctx, out, s.m0, s.m, s.n0, s.n)
                                      : std::vector<float>(size_t(s.m * s.n), 0.0f);
        it = d.accumulators.insert_or_assign(key, std::move(init)).first;
      }
      gemm_accumulate(ctx, ctx.table.at(operand(op, "a")), ctx.table.at(operand(op, "b")),
                      extra_flag(op.extra, "transpose_b"), s.m0, s.m, s.n0, s.n, s.k0, s.k,
                      it->second);
      return;
    }
    case RecordKind::kStore: {
      auto it = d.accumulators.find(key);
      write_block(ctx, ctx.table.at(op.out), s.m0, s.m, s.n0, s.n, it->second);
      d.accumulators.erase(it);
      return;
    }
    case RecordKind::kMath: {
      MathOp m{};
      math_op_from_string(op.kind, &m);
      math_region(ctx, m, operand_handles(op), op.out, op.extra, s.m0, s.m, s.n0, s.n);
      return;
    }
    default: return;  // DMA_READ, FETCH, DMA_WRITE: see the header
  }
}

// splitmix64: a small, portable, well-mixed generator.
uint64_t next(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

void execute_stage_data(const Stage& s, CommandData& d, DataContext& ctx) {
  if (std::holds_alternative<CompositeCmd>(d.cmd)) composite_stage(ctx, s, d);
  else single_op(ctx, d.cmd);
}

void host_fill_random(DataContext& ctx, const TensorDesc& t, uint64_t seed, double lo, double hi) {
  uint64_t state = seed;
  for (int64_t r = 0; r < t.rows; ++r) {
    for (int64_t c = 0; c < t.cols; ++c) {
      const double u = double(next(state) >> 11) * (1.0 / 9007199254740992.0);  // [0, 1)
      ctx.mem.set(t, r, c, float(lo + (hi - lo) * u));
    }
  }
}

void host_write(DataContext& ctx, const TensorDesc& t, const std::vector<float>& values) {
  if (values.size() != size_t(t.elements())) {
    throw KernelError("host write of " + std::to_string(values.size()) + " values to '" + t.name +
                      "' " + t.shape_string() + " (" + std::to_string(t.elements()) + " elements)");
  }
  write_block(ctx, t, 0, t.rows, 0, t.cols, values);
}

std::vector<float> host_read(const DataContext& ctx, const TensorDesc& t) {
  return read_block(ctx, t, 0, t.rows, 0, t.cols);
}

}  // namespace kb
