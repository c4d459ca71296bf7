// The built-in benches.
#include "kernels/gemm/gemm_tiled_single_op.h"
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

}  // namespace
}  // namespace kb
