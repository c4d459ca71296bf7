#include "models/pe/engines/pe_math.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/pe/engines/engine_timing.h"

namespace kb {

MathTiming::MathTiming(const PeConfig& cfg)
    : latency_(cfg.math.pipeline_latency_cycles), lanes_(cfg.math.lanes) {
  for (int i = 0; i < kNumMathOps; ++i) {
    const MathOp op = MathOp(i);
    ops_[size_t(i)] = {math_op_is_transcendental(op) ? cfg.math.transcendental_cycles
                                                     : cfg.math.elementwise_cycles,
                       math_op_is_reduction(op)};
  }
}

uint64_t math_cycles(const PeConfig& cfg, MathOp op, uint64_t elements, int64_t row_len) {
  return MathTiming(cfg).cycles(op, elements, row_len);
}

namespace {

// The op's extra as its row names it (math_ops.h): scale's factor, fill's value.
float attr_of(const MathOpInfo& info, const MathAttrs& attrs) {
  switch (info.attr) {
    case MathAttr::kFactor: return float(attrs.factor);
    case MathAttr::kValue: return float(attrs.value);
    case MathAttr::kNone: break;
  }
  return 0.0f;
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
  const MathOpInfo& info = math_op_info(op);
  if (info.shape == MathShape::kRowReduction) {  // out [rows, 1] from src [rows, cols]
    const TensorDesc& a = *src[0];
    const std::vector<float> x = ctx.port.read_block(a, r0, nr, 0, a.cols);
    for (int64_t r = 0; r < nr; ++r) {
      float acc = info.reduce_init;
      for (int64_t c = 0; c < a.cols; ++c) acc = info.apply(acc, x[size_t(r * a.cols + c)], 0.0f);
      result.push_back(acc);
    }
    ctx.port.write_block(out, r0, nr, 0, 1, result);
    return;
  }
  const bool bcast = info.shape == MathShape::kBroadcastColumn;
  const float attr = attr_of(info, attrs);
  const std::vector<float> a = src.size() > 0 ? ctx.port.read_block(*src[0], r0, nr, c0, nc) : std::vector<float>();
  const std::vector<float> b = src.size() > 1 ? ctx.port.read_block(*src[1], r0, nr, bcast ? 0 : c0, bcast ? 1 : nc)
                                              : std::vector<float>();
  result.reserve(size_t(nr * nc));
  for (int64_t r = 0; r < nr; ++r) {
    for (int64_t c = 0; c < nc; ++c) {
      const float av = a.empty() ? 0.0f : a[size_t(r * nc + c)];
      const float bv = b.empty() ? 0.0f : b[size_t(bcast ? r : r * nc + c)];
      result.push_back(info.apply(av, bv, attr));
    }
  }
  ctx.port.write_block(out, r0, nr, c0, nc, result);
}

void math_full(DataContext& ctx, MathOp op, const Handle* in, size_t inputs, Handle out,
               const MathAttrs& attrs) {
  const TensorDesc& o = ctx.table.at(out);
  math_region(ctx, op, in, inputs, out, attrs, 0, o.rows, 0, math_op_is_reduction(op) ? 1 : o.cols);
}

}  // namespace

void PeMath::compute(const Stage& s, CommandData& d, DataContext& ctx) {
  const TypedOp* op = d.op(s.op_index);
  if (!op) return;
  // A single-op MathCmd, or a composite's whole-tensor op (prologue,
  // epilogue), covers its out; a tile op its block.
  if (s.op_index < 0 || s.tile < 0) math_full(ctx, op->math, op->in, size_t(op->inputs), op->out, op->attrs);
  else math_region(ctx, op->math, op->in, size_t(op->inputs), op->out, op->attrs, s.m0, s.m, s.n0, s.n);
}

}  // namespace kb
