#include "models/pe/engines/pe_gemm.h"

#include <string>

#include "models/pe/engines/dtype_codec.h"
#include "models/pe/engines/engine_timing.h"
#include "models/pe/engines/pe_tcm.h"

namespace kb {

uint64_t gemm_cycles(const PeConfig& cfg, int64_t m, int64_t n, int64_t k) {
  const char* what = "GEMM";
  if (m < 0 || n < 0 || k < 0) {
    throw KernelError("GEMM m/n/k = " + std::to_string(m) + "/" + std::to_string(n) + "/" +
                      std::to_string(k) + ": expected non-negative sizes");
  }
  const uint64_t passes = cycles_mul(ceil_div(uint64_t(m), cfg.gemm.array_rows),
                                     ceil_div(uint64_t(n), cfg.gemm.array_cols), what);
  return cycles_add(cycles_add(cycles_mul(passes, uint64_t(k), what), cfg.gemm.array_rows, what),
                    cfg.gemm.array_cols, what);
}

uint64_t gemm_stage_cycles(const PeConfig& cfg, const Stage& s) {
  uint64_t c = gemm_cycles(cfg, s.m, s.n, s.k);
  if (s.fetch_bytes) c = cycles_add(c, tcm_cycles(cfg, s.fetch_bytes), "GEMM stage");
  if (s.store_bytes) c = cycles_add(c, tcm_cycles(cfg, s.store_bytes), "GEMM stage");
  return c;
}

namespace {

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

// A composite's GEMM op: whole (prologue / epilogue, on TCM tensors) or
// one tile's K slice.
void composite_gemm(DataContext& ctx, const Stage& s, const TypedOp& op, CommandData& d) {
  const TensorDesc& out = ctx.table.at(op.out);
  const TensorDesc& a = ctx.table.at(op.a());
  const TensorDesc& b = ctx.table.at(op.b());
  const bool transpose_b = op.gemm.transpose_b;
  if (s.tile < 0) {
    gemm_full(ctx, a, b, out, transpose_b, op.gemm.accumulate, out.rows, out.cols, a.cols);
    return;
  }
  const auto key = std::make_pair(s.m0, s.n0);
  auto it = d.accumulators.find(key);
  if (s.k0 == 0) {
    std::vector<float> init = op.gemm.accumulate ? operand_block(ctx, d, 'o', s.tile, out, s.m0, s.m, s.n0, s.n)
                                                 : std::vector<float>(size_t(s.m * s.n), 0.0f);
    it = d.accumulators.insert_or_assign(key, std::move(init)).first;
  }
  const std::vector<float> av = operand_block(ctx, d, 'a', s.tile, a, s.m0, s.m, s.k0, s.k);
  const std::vector<float> bv = transpose_b ? operand_block(ctx, d, 'b', s.tile, b, s.n0, s.n, s.k0, s.k)
                                            : operand_block(ctx, d, 'b', s.tile, b, s.k0, s.k, s.n0, s.n);
  gemm_accumulate(av, bv, transpose_b, s.m, s.n, s.k, it->second);
}

}  // namespace

void PeGemm::compute(const Stage& s, CommandData& d, DataContext& ctx) {
  const TypedOp* op = d.op(s.op_index);
  if (!op) return;
  if (s.op_index < 0) {  // a single-op GemmCmd: its own m, n, k
    gemm_full(ctx, ctx.table.at(op->a()), ctx.table.at(op->b()), ctx.table.at(op->out), op->gemm.transpose_b,
              op->gemm.accumulate, op->gemm.m, op->gemm.n, op->gemm.k);
    return;
  }
  composite_gemm(ctx, s, *op, d);  // the plan made this stage from the op decoded at dispatch
}

}  // namespace kb
