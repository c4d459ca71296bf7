#include "models/pe/data_exec.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/pe/dtype_codec.h"
#include "models/util/overloaded.h"

namespace kb {

namespace {

float apply(MathOp op, float a, float b, const MathAttrs& attrs) {
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
    case MathOp::kScale: return a * float(attrs.factor);
    case MathOp::kFill: return float(attrs.value);
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
void math_region(DataContext& ctx, MathOp op, const Handle* in, size_t inputs, Handle out_h,
                 const MathAttrs& attrs, int64_t r0, int64_t nr, int64_t c0, int64_t nc) {
  const TensorDesc& out = ctx.table.at(out_h);
  std::vector<const TensorDesc*> src;
  for (size_t i = 0; i < inputs; ++i) src.push_back(&ctx.table.at(in[i]));
  std::vector<float> result;
  if (math_op_is_reduction(op)) {  // out [rows, 1] from src [rows, cols]
    const TensorDesc& a = *src[0];
    const std::vector<float> x = ctx.port.read_block(a, r0, nr, 0, a.cols);
    for (int64_t r = 0; r < nr; ++r) {
      float acc = op == MathOp::kRowMax ? -std::numeric_limits<float>::infinity() : 0.0f;
      for (int64_t c = 0; c < a.cols; ++c) {
        const float v = x[size_t(r * a.cols + c)];
        acc = op == MathOp::kRowMax ? std::max(acc, v) : acc + v;
      }
      result.push_back(acc);
    }
    ctx.port.write_block(out, r0, nr, 0, 1, result);
    return;
  }
  const bool bcast = is_bcast(op);
  const std::vector<float> a = src.size() > 0 ? ctx.port.read_block(*src[0], r0, nr, c0, nc) : std::vector<float>();
  const std::vector<float> b = src.size() > 1 ? ctx.port.read_block(*src[1], r0, nr, bcast ? 0 : c0, bcast ? 1 : nc)
                                              : std::vector<float>();
  result.reserve(size_t(nr * nc));
  for (int64_t r = 0; r < nr; ++r) {
    for (int64_t c = 0; c < nc; ++c) {
      const float av = a.empty() ? 0.0f : a[size_t(r * nc + c)];
      const float bv = b.empty() ? 0.0f : b[size_t(bcast ? r : r * nc + c)];
      result.push_back(apply(op, av, bv, attrs));
    }
  }
  ctx.port.write_block(out, r0, nr, c0, nc, result);
}

void math_full(DataContext& ctx, MathOp op, const Handle* in, size_t inputs, Handle out,
               const MathAttrs& attrs) {
  const TensorDesc& o = ctx.table.at(out);
  math_region(ctx, op, in, inputs, out, attrs, 0, o.rows, 0, math_op_is_reduction(op) ? 1 : o.cols);
}

// A block's values: its staged bytes when a DMA_READ brought it in (taken
// out of the staging buffer), else read from TCM.
std::vector<float> operand_block(DataContext& ctx, CommandData& d, char role, int64_t tile,
                                 const TensorDesc& t, int64_t r0, int64_t nr, int64_t c0, int64_t nc) {
  auto it = d.staging.find({role, tile});
  if (it == d.staging.end()) return ctx.port.read_block(t, r0, nr, c0, nc);
  const uint64_t el = dtype_bytes(t.dtype);
  std::vector<float> v(size_t(nr * nc));
  for (size_t i = 0; i < v.size(); ++i) v[i] = decode_element(&it->second[i * el], t.dtype);
  d.staging.erase(it);
  return v;
}

// acc[i, j] += sum over k in [0, kk) of a[i, k] * b[k, j] over blocks a
// [rows x kk] and b [kk x cols] (b^T [cols x kk] when transposed), in
// fp32, k ascending.
void gemm_accumulate(const std::vector<float>& a, const std::vector<float>& b, bool transpose_b,
                     int64_t rows, int64_t cols, int64_t kk, std::vector<float>& acc) {
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      float sum = acc[size_t(i * cols + j)];
      for (int64_t k = 0; k < kk; ++k) {
        const float bv = transpose_b ? b[size_t(j * kk + k)] : b[size_t(k * cols + j)];
        sum += a[size_t(i * kk + k)] * bv;
      }
      acc[size_t(i * cols + j)] = sum;
    }
  }
}

// The whole GEMM out (+)= a @ b over TCM tensors.
void gemm_full(DataContext& ctx, const TensorDesc& a, const TensorDesc& b, const TensorDesc& out,
               bool transpose_b, bool accumulate, int64_t m, int64_t n, int64_t k) {
  std::vector<float> acc = accumulate ? ctx.port.read_block(out, 0, m, 0, n)
                                      : std::vector<float>(size_t(m * n), 0.0f);
  const std::vector<float> av = ctx.port.read_block(a, 0, m, 0, k);
  const std::vector<float> bv = transpose_b ? ctx.port.read_block(b, 0, n, 0, k) : ctx.port.read_block(b, 0, k, 0, n);
  gemm_accumulate(av, bv, transpose_b, m, n, k, acc);
  ctx.port.write_block(out, 0, m, 0, n, acc);
}

void composite_stage(DataContext& ctx, const Stage& s, const CompositeCmd& comp, CommandData& d) {
  if (s.op_index < 0) return;
  // Decoded at dispatch (check_command); the plan made this stage from it.
  const TypedOp& op = comp.typed.at(size_t(s.op_index));
  if (s.tile < 0) {  // prologue / epilogue: the whole op, on TCM tensors
    switch (op.kind) {
      case OpKind::kGemm: {
        const TensorDesc& out = ctx.table.at(op.out);
        const TensorDesc& a = ctx.table.at(op.a());
        gemm_full(ctx, a, ctx.table.at(op.b()), out, op.gemm.transpose_b, op.gemm.accumulate,
                  out.rows, out.cols, a.cols);
        return;
      }
      case OpKind::kMath:
        math_full(ctx, op.math, op.in, size_t(op.inputs), op.out, op.attrs);
        return;
    }
    return;
  }
  const auto key = std::make_pair(s.m0, s.n0);
  switch (s.kind) {
    case RecordKind::kGemm: {
      const TensorDesc& out = ctx.table.at(op.out);
      const bool transpose_b = op.gemm.transpose_b;
      auto it = d.accumulators.find(key);
      if (s.k0 == 0) {
        std::vector<float> init = op.gemm.accumulate
                                      ? operand_block(ctx, d, 'o', s.tile, out, s.m0, s.m, s.n0, s.n)
                                      : std::vector<float>(size_t(s.m * s.n), 0.0f);
        it = d.accumulators.insert_or_assign(key, std::move(init)).first;
      }
      const TensorDesc& a = ctx.table.at(op.a());
      const TensorDesc& b = ctx.table.at(op.b());
      const std::vector<float> av = operand_block(ctx, d, 'a', s.tile, a, s.m0, s.m, s.k0, s.k);
      const std::vector<float> bv = transpose_b ? operand_block(ctx, d, 'b', s.tile, b, s.n0, s.n, s.k0, s.k)
                                                : operand_block(ctx, d, 'b', s.tile, b, s.k0, s.k, s.n0, s.n);
      gemm_accumulate(av, bv, transpose_b, s.m, s.n, s.k, it->second);
      return;
    }
    case RecordKind::kStore: {
      auto it = d.accumulators.find(key);
      const TensorDesc& out = ctx.table.at(op.out);
      if (s.role == 'w') {  // the output lives in HBM: staged for the DMA_WRITE
        const uint64_t el = dtype_bytes(out.dtype);
        std::vector<uint8_t>& bytes = d.staging[{'w', s.tile}];
        bytes.resize(it->second.size() * el);
        for (size_t i = 0; i < it->second.size(); ++i) encode_element(it->second[i], out.dtype, &bytes[i * el]);
      } else {
        ctx.port.write_block(out, s.m0, s.m, s.n0, s.n, it->second);
      }
      d.accumulators.erase(it);
      return;
    }
    case RecordKind::kMath: {
      math_region(ctx, op.math, op.in, size_t(op.inputs), op.out, op.attrs, s.m0, s.m, s.n0, s.n);
      return;
    }
    default: return;  // FETCH moves no values; DMA stages are PE_DMA's
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
  std::visit(
      overloaded{
          [&](const MathCmd& c) {
            math_full(ctx, c.op, c.operands.data(), c.operands.size(), c.out, math_attrs(c.extra));
          },
          [&](const GemmCmd& c) {
            gemm_full(ctx, ctx.table.at(c.a), ctx.table.at(c.b), ctx.table.at(c.out), c.transpose_b,
                      c.accumulate, c.m, c.n, c.k);
          },
          [&](const CompositeCmd& c) { composite_stage(ctx, s, c, d); },
          // PE_DMA moves the bytes of transfers (pe_dma.h); tl.cycles is never queued.
          [](const DmaReadCmd&) {}, [](const DmaWriteCmd&) {}, [](const CopyCmd&) {},
          [](const CpuOverheadCmd&) {}},
      d.cmd);
}

void host_fill_random(DataPort& port, const TensorDesc& t, uint64_t seed, double lo, double hi) {
  uint64_t state = seed;
  std::vector<float> row(size_t(t.cols));
  for (int64_t r = 0; r < t.rows; ++r) {  // a row at a time: bounded memory
    for (int64_t c = 0; c < t.cols; ++c) {
      const double u = double(next(state) >> 11) * (1.0 / 9007199254740992.0);  // [0, 1)
      row[size_t(c)] = float(lo + (hi - lo) * u);
    }
    port.write_block(t, r, 1, 0, t.cols, row);
  }
}

void host_write(DataPort& port, const TensorDesc& t, const std::vector<float>& values) {
  if (values.size() != size_t(t.elements())) {
    throw KernelError("host write of " + std::to_string(values.size()) + " values to '" + t.name +
                      "' " + t.shape_string() + " (" + std::to_string(t.elements()) + " elements)");
  }
  port.write_block(t, 0, t.rows, 0, t.cols, values);
}

std::vector<float> host_read(DataPort& port, const TensorDesc& t) {
  return port.read_block(t, 0, t.rows, 0, t.cols);
}

}  // namespace kb
