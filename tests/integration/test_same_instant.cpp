// An instant's work follows a canonical order
// (models/pe/scheduler/pe_scheduler.h): every stage that ends at the instant
// completes before any engine takes its next stage, so an engine takes the
// oldest stage ready at that instant, whatever order SystemC ran the
// processes that ended the stages in.
#include <gtest/gtest.h>

#include "models/tl/tl.h"
#include "tests/sim_util.h"

namespace kb {
namespace {

// #1 loads t (PE_DMA, long); #2 reads t (PE_MATH, waits for #1);
// after `spin` cycles, #3 and #4 are independent PE_MATH fills. With the
// right spin, #3 ends on PE_MATH at the very instant #1 ends on PE_DMA.
Kernel race(uint64_t spin) {
  return [spin](Tl& tl) {
    const Tensor x = tl.hbm("x", 256, 256, Dtype::kBf16);
    const Tensor t = tl.tcm("t", 256, 256, Dtype::kBf16);
    const Tensor u = tl.tcm("u", 256, 256, Dtype::kBf16);
    const Tensor a = tl.tcm("a", 64, 64, Dtype::kFp32);
    const Tensor b = tl.tcm("b", 64, 64, Dtype::kFp32);
    test::init(tl, {x});
    tl.load(t, x);   // #1
    tl.exp(u, t);    // #2: RAW on #1
    if (spin) tl.cycles(spin);
    tl.fill(a, 1.0);  // #3
    tl.fill(b, 2.0);  // #4
  };
}

TEST(SameInstant, AStageReleasedByAnotherEnginesCompletionIsTakenBeforeANewerOne) {
  const PeConfig cfg;
  const uint64_t period = test::period_ps(cfg);
  const RunResult first = test::run_kernel(race(0), cfg);
  const uint64_t load_end = test::stage_of(first, 1).end_ps;
  const uint64_t fill_end = test::stage_of(first, 3).end_ps;
  ASSERT_LT(fill_end, load_end) << "the load must outlast the first fill";
  ASSERT_EQ((load_end - fill_end) % period, 0u);
  const uint64_t spin = (load_end - fill_end) / period;

  const RunResult r = test::run_kernel(race(spin), cfg);
  const OpRecord load = test::stage_of(r, 1), exp = test::stage_of(r, 2);
  const OpRecord fill_a = test::stage_of(r, 3), fill_b = test::stage_of(r, 4);
  ASSERT_EQ(fill_a.end_ps, load.end_ps) << "PE_MATH and PE_DMA end at the same instant";
  // #2 became ready at that instant, as #4 waited on PE_MATH: the older
  // command goes first, at once, and #4 follows it.
  EXPECT_EQ(exp.start_ps, load.end_ps);
  EXPECT_EQ(fill_b.start_ps, exp.end_ps);
}

}  // namespace
}  // namespace kb
