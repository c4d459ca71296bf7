// The softmax-merge bench: the softmax_merge recipe composite over a
// stream of KV tiles, scores already in TCM.
#include <limits>

#include "kernels/recipes/softmax_merge.h"
#include "tb/benches/builtin_benches.h"
#include "tb/benches/pe_bench_util.h"

namespace kb {

namespace {

using namespace pe_bench;  // tb/benches/pe_bench_util.h

void softmax_merge_stream(Tl& tl, int64_t g, int64_t d, int64_t kv_tile, int64_t tiles) {
  const Tensor v = tl.hbm("V", kv_tile * tiles, d, Dtype::kBf16);
  const Tensor s = tl.tcm("S", g, kv_tile, Dtype::kFp32);
  const Tensor m[2] = {tl.tcm("m0", g, 1, Dtype::kFp32), tl.tcm("m1", g, 1, Dtype::kFp32)};
  SoftmaxMergeState st{m[0], m[1], tl.tcm("l", g, 1, Dtype::kFp32), tl.tcm("O", g, d, Dtype::kFp32)};
  const SoftmaxMergeScratch scratch{tl.tcm("m_tile", g, 1, Dtype::kFp32),
                                    tl.tcm("corr", g, 1, Dtype::kFp32),
                                    tl.tcm("P", g, kv_tile, Dtype::kFp32),
                                    tl.tcm("row_sum", g, 1, Dtype::kFp32)};
  tl.host_random(v, 3);
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

}  // namespace

Bench softmax_merge_bench() {
  return Bench{
    "softmax-merge",
    "the softmax_merge recipe composite over a stream of KV tiles (V streamed from HBM)",
    {{"heads", "8", "query heads per KV group (rows of S, m, l, O)"},
     {"head_dim", "128", "head dimension d"},
     {"kv_tile", "128", "KV tile length T"},
     {"tiles", "8", "number of KV tiles"}},
    [](const BenchParams& p, const PeConfig&) {
      const int64_t g = p.integer("heads"), d = p.integer("head_dim");
      const int64_t t = p.integer("kv_tile"), n = p.integer("tiles");
      check_elements(p, "V", {{"kv_tile", t}, {"tiles", n}, {"head_dim", d}});
      check_elements(p, "S", {{"heads", g}, {"kv_tile", t}});
      check_elements(p, "O", {{"heads", g}, {"head_dim", d}});
      return Launches{{"softmax_merge_stream", [=](Tl& tl) { softmax_merge_stream(tl, g, d, t, n); }}};
    }};
}

}  // namespace kb
