// The benches kernbench ships: one function per bench, each in its bench's
// file, and one table of them (builtin_benches.cpp) that
// register_builtin_benches() (tb/benches/bench_registry.h) adds to the
// registry. A new bench is a function here and a row of the table.
#pragma once

#include "tb/benches/bench_registry.h"

namespace kb {

Bench gemm_tiled_single_op_bench();     // tb/benches/gemm_benches.cpp
Bench gemm_composite_bench();           // tb/benches/gemm_benches.cpp
Bench gemm_async_vs_composite_bench();  // tb/benches/gemm_benches.cpp
Bench softmax_merge_bench();            // tb/benches/softmax_merge_bench.cpp
Bench gqa_decode_bench();               // tb/benches/gqa_decode_bench.cpp
Bench allreduce_bench();                // tb/benches/allreduce_bench.cpp
Bench long_ctx_bench();                 // tb/benches/long_ctx_bench.cpp

}  // namespace kb
