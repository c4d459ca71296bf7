#include "tb/benches/builtin_benches.h"

namespace kb {

void register_builtin_benches() {
  // Once per process, however often it is called.
  static const bool registered = [] {
    for (Bench (*bench)() : {gemm_tiled_single_op_bench, gemm_composite_bench, gemm_async_vs_composite_bench,
                             softmax_merge_bench, gqa_decode_bench, allreduce_bench, long_ctx_bench}) {
      BenchRegistry::instance().add(bench());
    }
    return true;
  }();
  (void)registered;
}

}  // namespace kb
