#include "kernels/gemm/gemm_composite.h"

namespace kb {

void gemm_composite(Tl& tl, const GemmShape&, const GemmTensors& t) {
  tl.composite("gemm", {typed_gemm_op(OpScope::kTile, t.c, t.a, t.b)}, {t.c});
}

void gemm_composite(Tl& tl, const GemmShape& s) { gemm_composite(tl, s, gemm_inputs(tl, s)); }

}  // namespace kb
