#include "kernels/gemm/gemm_composite.h"

namespace kb {

void gemm_composite(Tl& tl, const GemmShape& s) {
  const Tensor a = tl.hbm("A", s.m, s.k, s.dtype);
  const Tensor b = tl.hbm("B", s.k, s.n, s.dtype);
  const Tensor c = tl.hbm("C", s.m, s.n, Dtype::kFp32);
  tl.composite("gemm", {gemm_op(OpScope::kTile, c, a, b)}, {c});
}

}  // namespace kb
