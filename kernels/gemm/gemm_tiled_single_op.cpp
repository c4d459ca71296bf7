#include "kernels/gemm/gemm_tiled_single_op.h"

#include <algorithm>

namespace kb {

GemmTensors gemm_inputs(Tl& tl, const GemmShape& s, uint64_t seed) {
  GemmTensors t{tl.hbm("A", s.m, s.k, s.dtype), tl.hbm("B", s.k, s.n, s.dtype),
                tl.hbm("C", s.m, s.n, Dtype::kFp32)};
  tl.host_random(t.a, seed);
  tl.host_random(t.b, seed + 1);
  return t;
}

void gemm_tiled_single_op(Tl& tl, const GemmShape& s) {
  gemm_tiled_single_op(tl, s, gemm_inputs(tl, s));
}

void gemm_tiled_single_op(Tl& tl, const GemmShape& s, const GemmTensors& t) {
  const Tensor &a = t.a, &b = t.b, &c = t.c;
  Tensor a_buf[2], b_buf[2], c_buf[2];
  for (int i = 0; i < 2; ++i) {
    a_buf[i] = tl.tcm("a_buf" + std::to_string(i), s.tile_m, s.tile_k, s.dtype);
    b_buf[i] = tl.tcm("b_buf" + std::to_string(i), s.tile_k, s.tile_n, s.dtype);
    c_buf[i] = tl.tcm("c_buf" + std::to_string(i), s.tile_m, s.tile_n, Dtype::kFp32);
  }
  int step = 0, block = 0;
  for (int64_t mi = 0; mi < s.m; mi += s.tile_m) {
    const int64_t rows = std::min(s.tile_m, s.m - mi);
    for (int64_t ni = 0; ni < s.n; ni += s.tile_n, ++block) {
      const int64_t cols = std::min(s.tile_n, s.n - ni);
      const Tensor acc = tl.view(c_buf[block % 2], 0, rows, 0, cols);
      for (int64_t ki = 0; ki < s.k; ki += s.tile_k, ++step) {
        const int64_t depth = std::min(s.tile_k, s.k - ki);
        const Tensor at = tl.view(a_buf[step % 2], 0, rows, 0, depth);
        const Tensor bt = tl.view(b_buf[step % 2], 0, depth, 0, cols);
        tl.load(at, tl.view(a, mi, rows, ki, depth));
        tl.load(bt, tl.view(b, ki, depth, ni, cols));
        tl.dot(acc, at, bt, {/*transpose_b=*/false, /*accumulate=*/ki > 0});
      }
      tl.store(tl.view(c, mi, rows, ni, cols), acc);
    }
  }
}

}  // namespace kb
