// User-orchestrated GEMM variants written with single-op commands, to set
// against the composite (kernels/gemm/gemm_composite.h):
//
// async_full:  load all of A and B, one dot, one store (4 commands).
// async_tiled: chunked prefetch. Load A once; per K chunk of tile_k: a
//              DmaReadCmd for the B chunk, a GemmCmd for the chunk's partial
//              product and a MathCmd that accumulates it (the first chunk
//              writes the accumulator directly). B chunks and partials are
//              double-buffered, so chunk i+1's DMA overlaps chunk i's dot.
#pragma once

#include "kernels/gemm/gemm_tiled_single_op.h"

namespace kb {

void gemm_async_full(Tl& tl, const GemmShape& s, const GemmTensors& t);
void gemm_async_tiled(Tl& tl, const GemmShape& s, const GemmTensors& t);
// On fresh gemm_inputs().
void gemm_async_full(Tl& tl, const GemmShape& s);
void gemm_async_tiled(Tl& tl, const GemmShape& s);

}  // namespace kb
