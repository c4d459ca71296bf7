// The built-in benches.
#include <limits>

#include "kernels/gemm/gemm_composite.h"
#include "kernels/gemm/gemm_tiled_single_op.h"
#include "kernels/recipes/softmax_merge.h"
#include "tb/bench_registry.h"

namespace kb {

void register_builtin_benches() {}

namespace {

GemmShape gemm_shape(const BenchParams& p) {
  GemmShape s;
  s.m = p.integer("m");
  s.n = p.integer("n");
  s.k = p.integer("k");
  s.dtype = p.dtype("dtype");
  s.tile_m = p.integer("tile_m");
  s.tile_n = p.integer("tile_n");
  s.tile_k = p.integer("tile_k");
  return s;
}

const std::vector<BenchParam> kGemmParams = {
    {"m", "256", "rows of A and C"},
    {"n", "256", "columns of B and C"},
    {"k", "256", "columns of A, rows of B"},
    {"dtype", "bf16", "element type: fp32, bf16, fp16, int8"},
    {"tile_m", "64", "kernel tile rows"},
    {"tile_n", "64", "kernel tile columns"},
    {"tile_k", "64", "kernel tile depth"},
};

KB_REGISTER_BENCH(Bench{
    "gemm-tiled-single-op",
    "tiled GEMM C = A @ B from HBM, single-op loads/dots/stores, double-buffered",
    kGemmParams,
    [](const BenchParams& p, const PeConfig&) {
      const GemmShape s = gemm_shape(p);
      return std::vector<std::pair<std::string, Kernel>>{
          {"gemm_tiled_single_op", [s](Tl& tl) { gemm_tiled_single_op(tl, s); }}};
    }});

KB_REGISTER_BENCH(Bench{
    "gemm-composite",
    "GEMM C = A @ B from HBM as one CompositeCmd: the scheduler tiles and double-buffers",
    kGemmParams,
    [](const BenchParams& p, const PeConfig&) {
      const GemmShape s = gemm_shape(p);
      return std::vector<std::pair<std::string, Kernel>>{
          {"gemm_composite", [s](Tl& tl) { gemm_composite(tl, s); }}};
    }});

// The softmax_merge recipe over a stream of KV tiles, scores already in TCM.
void softmax_merge_stream(Tl& tl, int64_t g, int64_t d, int64_t kv_tile, int64_t tiles) {
  const Tensor v = tl.hbm("V", kv_tile * tiles, d, Dtype::kBf16);
  const Tensor s = tl.tcm("S", g, kv_tile, Dtype::kFp32);
  const Tensor m[2] = {tl.tcm("m0", g, 1, Dtype::kFp32), tl.tcm("m1", g, 1, Dtype::kFp32)};
  SoftmaxMergeState st{m[0], m[1], tl.tcm("l", g, 1, Dtype::kFp32), tl.tcm("O", g, d, Dtype::kFp32)};
  const SoftmaxMergeScratch scratch{tl.tcm("m_tile", g, 1, Dtype::kFp32),
                                    tl.tcm("corr", g, 1, Dtype::kFp32),
                                    tl.tcm("P", g, kv_tile, Dtype::kFp32),
                                    tl.tcm("row_sum", g, 1, Dtype::kFp32)};
  tl.fill(s, 0.0);
  tl.fill(m[0], -std::numeric_limits<double>::infinity());
  tl.fill(st.l, 0.0);
  tl.fill(st.o, 0.0);
  for (int64_t t = 0; t < tiles; ++t) {
    st.m_in = m[t % 2];
    st.m_out = m[(t + 1) % 2];
    softmax_merge(tl, s, tl.rows(v, t * kv_tile, kv_tile), st, scratch);
  }
}

KB_REGISTER_BENCH(Bench{
    "softmax-merge",
    "the softmax_merge recipe composite over a stream of KV tiles (V streamed from HBM)",
    {{"heads", "8", "query heads per KV group (rows of S, m, l, O)"},
     {"head_dim", "128", "head dimension d"},
     {"kv_tile", "128", "KV tile length T"},
     {"tiles", "8", "number of KV tiles"}},
    [](const BenchParams& p, const PeConfig&) {
      const int64_t g = p.integer("heads"), d = p.integer("head_dim");
      const int64_t t = p.integer("kv_tile"), n = p.integer("tiles");
      return std::vector<std::pair<std::string, Kernel>>{
          {"softmax_merge_stream", [=](Tl& tl) { softmax_merge_stream(tl, g, d, t, n); }}};
    }});

}  // namespace
}  // namespace kb
