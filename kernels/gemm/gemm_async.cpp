#include "kernels/gemm/gemm_async.h"

#include <algorithm>

namespace kb {

void gemm_async_full(Tl& tl, const GemmShape& s) { gemm_async_full(tl, s, gemm_inputs(tl, s)); }
void gemm_async_tiled(Tl& tl, const GemmShape& s) { gemm_async_tiled(tl, s, gemm_inputs(tl, s)); }

void gemm_async_full(Tl& tl, const GemmShape& s, const GemmTensors& t) {
  const Tensor &a = t.a, &b = t.b, &c = t.c;
  const Tensor ta = tl.tcm("a", s.m, s.k, s.dtype);
  const Tensor tb = tl.tcm("b", s.k, s.n, s.dtype);
  const Tensor tc = tl.tcm("c", s.m, s.n, Dtype::kFp32);
  tl.load(ta, a);
  tl.load(tb, b);
  tl.dot(tc, ta, tb);
  tl.store(c, tc);
}

void gemm_async_tiled(Tl& tl, const GemmShape& s, const GemmTensors& t) {
  const Tensor &a = t.a, &b = t.b, &c = t.c;
  const Tensor ta = tl.tcm("a", s.m, s.k, s.dtype);
  const Tensor acc = tl.tcm("acc", s.m, s.n, Dtype::kFp32);
  const Tensor b_buf[2] = {tl.tcm("b_chunk0", s.tile_k, s.n, s.dtype),
                           tl.tcm("b_chunk1", s.tile_k, s.n, s.dtype)};
  const Tensor partial[2] = {tl.tcm("partial0", s.m, s.n, Dtype::kFp32),
                             tl.tcm("partial1", s.m, s.n, Dtype::kFp32)};
  tl.load(ta, a);
  int chunk = 0;
  for (int64_t k0 = 0; k0 < s.k; k0 += s.tile_k, ++chunk) {
    const int64_t depth = std::min(s.tile_k, s.k - k0);
    const Tensor bt = tl.rows(b_buf[chunk % 2], 0, depth);
    tl.load(bt, tl.rows(b, k0, depth));
    const Tensor a_chunk = tl.view(ta, 0, s.m, k0, depth);
    if (chunk == 0) {
      tl.dot(acc, a_chunk, bt);
    } else {
      tl.dot(partial[chunk % 2], a_chunk, bt);
      tl.add(acc, acc, partial[chunk % 2]);
    }
  }
  tl.store(c, acc);
}

}  // namespace kb
