// GEMM as one CompositeCmd: C = A @ B with a single tile-scope GEMM OpSpec.
// PE_SCHEDULER cuts it into hardware tiles (pe.attrs.tile), inserts the DMA
// for operands in HBM and double-buffers; PE_CPU pays one dispatch.
#pragma once

#include "kernels/gemm/gemm_tiled_single_op.h"

namespace kb {

void gemm_composite(Tl& tl, const GemmShape& s, const GemmTensors& t);
void gemm_composite(Tl& tl, const GemmShape& s);  // on fresh gemm_inputs()

}  // namespace kb
