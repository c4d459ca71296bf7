// The PE's behaviour: back-pressure from a bounded queue, hazard ordering
// (RAW, WAR, WAW) between commands, engine concurrency, engine timing and
// kernel-author errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <gmock/gmock.h>

#include "models/isa/descriptor.h"
#include "models/pe/engines/engine_timing.h"
#include "models/pe/engines/pe_dma.h"
#include "models/pe/engines/pe_gemm.h"
#include "models/pe/engines/pe_math.h"
#include "models/pe/engines/pe_tcm.h"
#include "models/pe/scheduler/hazard_scoreboard.h"
#include "models/pe/pe.h"
#include "models/top/pe_top.h"
#include "models/pe/scheduler/pe_scheduler.h"
#include "tests/sim_util.h"

namespace kb {

void PrintTo(Hazard h, std::ostream* os) { *os << to_string(h); }  // gtest failure messages

namespace {

using test::of_kind;
using test::period_ps;
using test::run_kernel;
using test::stage_of;
using ::testing::HasSubstr;

// Many independent DMA loads: the DMA engine is the bottleneck, so a CPU
// that runs ahead fills the queue.
void many_loads(Tl& tl) {
  const Tensor src = tl.hbm("src", 256, 256, Dtype::kBf16);
  const Tensor dst = tl.tcm("dst", 256, 256, Dtype::kBf16);
  test::init(tl, {src});
  for (int i = 0; i < 32; ++i) tl.load(dst, src);
}

TEST(BackPressure, ShallowQueueStallsCpuAndSlowsKernel) {
  PeConfig shallow, deep;
  shallow.scheduler.queue_depth = 1;
  deep.scheduler.queue_depth = 64;
  // A compute kernel where the CPU must run ahead to overlap engines.
  const Kernel k = [](Tl& tl) {
    const Tensor x = tl.hbm("x", 64, 64, Dtype::kBf16);
    const Tensor a[2] = {tl.tcm("a0", 64, 64, Dtype::kBf16), tl.tcm("a1", 64, 64, Dtype::kBf16)};
    const Tensor c[2] = {tl.tcm("c0", 64, 64, Dtype::kBf16), tl.tcm("c1", 64, 64, Dtype::kBf16)};
    test::init(tl, {x});
    for (int i = 0; i < 16; ++i) {
      tl.load(a[i % 2], x);
      tl.exp(c[i % 2], a[i % 2]);
    }
  };
  const RunResult rs = run_kernel(k, shallow);
  const RunResult rd = run_kernel(k, deep);
  EXPECT_GT(rs.latency_ps(), rd.latency_ps());
  EXPECT_GT(rs.launches.at(0).stall_ps, 0u);
  // The stall appears in the op log as PE_CPU STALL records that add up.
  uint64_t logged = 0;
  for (const OpRecord& s : of_kind(rs, RecordKind::kStall)) {
    EXPECT_EQ(s.component, Component::kPeCpu);
    EXPECT_GT(s.end_ps, s.start_ps);
    logged += s.end_ps - s.start_ps;
  }
  EXPECT_EQ(logged, rs.launches.at(0).stall_ps);
}

TEST(BackPressure, QueueNeverHoldsMoreThanDepth) {
  for (uint64_t depth : {1u, 3u}) {
    PeConfig cfg;
    cfg.scheduler.queue_depth = depth;
    const RunResult r = run_kernel(many_loads, cfg);
    // A command is accepted when its STALL ends (or its DISPATCH ends if it
    // never stalled) and leaves when its last stage ends; count overlaps.
    std::map<uint64_t, std::pair<uint64_t, uint64_t>> life;
    for (const OpRecord& rec : r.records) {
      auto& l = life[rec.cmd_id];
      if (rec.kind == RecordKind::kDispatch) l.first = std::max(l.first, rec.end_ps);
      else if (rec.kind == RecordKind::kStall) l.first = std::max(l.first, rec.end_ps);
      else l.second = std::max(l.second, rec.end_ps);
    }
    for (const auto& [id, l] : life) {
      uint64_t inside = 0;
      for (const auto& [other, m] : life) inside += (m.first <= l.first && l.first < m.second);
      EXPECT_LE(inside, depth) << "command " << id;
    }
    EXPECT_GT(r.launches.at(0).stall_ps, 0u);
  }
}

// Hazards are checked across engines, where nothing else orders stages.
TEST(Scoreboard, ReadAfterWriteWaits) {
  const RunResult r = run_kernel([](Tl& tl) {
    const Tensor x = tl.hbm("x", 128, 128, Dtype::kBf16);
    const Tensor a = tl.tcm("a", 128, 128, Dtype::kBf16);
    const Tensor b = tl.tcm("b", 128, 128, Dtype::kBf16);
    test::init(tl, {x});
    tl.load(a, x);  // 1 writes a (DMA)
    tl.exp(b, a);   // 2 reads a (MATH)
  });
  EXPECT_GE(stage_of(r, 2).start_ps, stage_of(r, 1).end_ps);
}

TEST(Scoreboard, WriteAfterReadWaits) {
  const RunResult r = run_kernel([](Tl& tl) {
    const Tensor x = tl.hbm("x", 128, 128, Dtype::kBf16);
    const Tensor a = tl.tcm("a", 128, 128, Dtype::kBf16);
    const Tensor b = tl.tcm("b", 128, 128, Dtype::kBf16);
    test::init(tl, {x, a});
    tl.exp(b, a);   // 1 reads a (MATH)
    tl.load(a, x);  // 2 overwrites a (DMA)
  });
  EXPECT_GE(stage_of(r, 2).start_ps, stage_of(r, 1).end_ps);
}

TEST(Scoreboard, WriteAfterWriteWaits) {
  const RunResult r = run_kernel([](Tl& tl) {
    const Tensor x = tl.hbm("x", 128, 128, Dtype::kBf16);
    const Tensor a = tl.tcm("a", 128, 128, Dtype::kBf16);
    test::init(tl, {x});
    tl.fill(a, 0.0);  // 1 writes a (MATH)
    tl.load(a, x);    // 2 writes a (DMA)
  });
  EXPECT_GE(stage_of(r, 2).start_ps, stage_of(r, 1).end_ps);
}

TEST(Scoreboard, IndependentCommandsOnDifferentEnginesOverlap) {
  const RunResult r = run_kernel([](Tl& tl) {
    const Tensor x = tl.hbm("x", 256, 256, Dtype::kBf16);
    const Tensor a = tl.tcm("a", 256, 256, Dtype::kBf16);
    const Tensor b = tl.tcm("b", 256, 256, Dtype::kBf16);
    const Tensor c = tl.tcm("c", 256, 256, Dtype::kBf16);
    const Tensor d = tl.tcm("d", 256, 256, Dtype::kBf16);
    test::init(tl, {x, b});
    tl.load(a, x);   // 1 DMA
    tl.exp(c, b);    // 2 MATH, unrelated
    tl.dot(d, b, b); // 3 GEMM, reads b only (RAR is no hazard)
  });
  const OpRecord s1 = stage_of(r, 1), s2 = stage_of(r, 2), s3 = stage_of(r, 3);
  EXPECT_LT(s2.start_ps, s1.end_ps);  // MATH started while DMA ran
  EXPECT_LT(s3.start_ps, s1.end_ps);  // GEMM too
  EXPECT_LT(s3.start_ps, s2.end_ps);
}

TEST(Scoreboard, DisjointViewsOfOneTensorDoNotConflict) {
  const RunResult r = run_kernel([](Tl& tl) {
    const Tensor x = tl.hbm("x", 128, 128, Dtype::kBf16);
    const Tensor a = tl.tcm("a", 256, 128, Dtype::kBf16);
    const Tensor top = tl.view(a, 0, 128), bottom = tl.view(a, 128, 128);
    const Tensor c = tl.tcm("c", 128, 128, Dtype::kBf16);
    test::init(tl, {x, bottom});
    tl.load(top, x);    // 1 writes the top half
    tl.exp(c, bottom);  // 2 reads the bottom half: independent
    tl.exp(c, top);     // 3 reads the top half: RAW on 1 (and WAW on 2)
  });
  EXPECT_LT(stage_of(r, 2).start_ps, stage_of(r, 1).end_ps);
  EXPECT_GE(stage_of(r, 3).start_ps, stage_of(r, 1).end_ps);
}

// Two column slices of one row-major tensor interleave without sharing a
// byte: the bounding ranges overlap, the bytes do not.
TEST(Scoreboard, ColumnSlicesOfOneTensorConflictOnlyWhereTheyOverlap) {
  const RunResult r = run_kernel([](Tl& tl) {
    const Tensor x = tl.hbm("x", 128, 64, Dtype::kFp32);
    const Tensor a = tl.tcm("a", 128, 128, Dtype::kFp32);
    const Tensor left = tl.view(a, 0, 128, 0, 64), right = tl.view(a, 0, 128, 64, 64);
    const Tensor middle = tl.view(a, 0, 128, 32, 64);  // columns 32..95: half of each
    const Tensor c = tl.tcm("c", 128, 64, Dtype::kFp32), d = tl.tcm("d", 128, 64, Dtype::kFp32);
    test::init(tl, {x, right});
    tl.load(left, x);    // 1 writes columns 0..63 (DMA)
    tl.exp(c, right);    // 2 reads columns 64..127: no byte in common with 1
    tl.exp(d, middle);   // 3 reads columns 32..95: RAW on 1
  });
  EXPECT_LT(stage_of(r, 2).start_ps, stage_of(r, 1).end_ps);  // not ordered after 1
  const auto d = of_kind(r, RecordKind::kDispatch);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(stage_of(r, 2).start_ps, d[1].end_ps);  // runs as soon as it is written
  EXPECT_GE(stage_of(r, 3).start_ps, stage_of(r, 1).end_ps);
}

// 128 x 128 fp32 at 0x1000: rows of 512 bytes.
constexpr uint64_t kBase = 0x1000, kRow = 128 * 4;
ByteRange columns(uint64_t c0, uint64_t ncols) {
  return ByteRange::strided(kBase + c0 * 4, ncols * 4, kRow, 128);
}

TEST(HazardScoreboard, StridedViewsCompareTheBytesTouched) {
  const std::vector<ByteRange> none;
  const std::vector<ByteRange> left{columns(0, 64)}, right{columns(64, 64)};
  // The bounding ranges overlap ([0x1000, 0x10f00) and [0x1100, 0x11000)) ...
  ASSERT_LT(right[0].begin, left[0].end);
  // ... but no byte is shared: no hazard either way.
  EXPECT_EQ(HazardScoreboard::classify(none, left, right, none), Hazard::kNone);
  EXPECT_EQ(HazardScoreboard::classify(none, left, none, right), Hazard::kNone);
  EXPECT_EQ(HazardScoreboard::classify(right, none, none, left), Hazard::kNone);
  // One column more and they share column 64 of every row.
  const std::vector<ByteRange> left65{columns(0, 65)};
  EXPECT_EQ(HazardScoreboard::classify(none, left65, right, none), Hazard::kRaw);
  EXPECT_EQ(HazardScoreboard::classify(none, left65, none, right), Hazard::kWaw);
  EXPECT_EQ(HazardScoreboard::classify(right, none, none, left65), Hazard::kWar);
  // Against a plain range: row 0's right half only misses the left slice;
  // one byte further reaches row 1's first column.
  const std::vector<ByteRange> gap{{kBase + 256, kBase + 512}}, gap1{{kBase + 256, kBase + 513}};
  EXPECT_EQ(HazardScoreboard::classify(none, left, gap, none), Hazard::kNone);
  EXPECT_EQ(HazardScoreboard::classify(none, left, gap1, none), Hazard::kRaw);
  EXPECT_EQ(HazardScoreboard::classify(none, gap1, left, none), Hazard::kRaw);
  // A column slice of a tensor with wider rows (other stride) that lands in
  // the gaps of `left`: 64 rows of 1024 bytes from column 64 -> no byte of
  // left; from column 63 -> the last column of every other row.
  const std::vector<ByteRange> wide{ByteRange::strided(kBase + 256, 256, 2 * kRow, 64)};
  const std::vector<ByteRange> wide63{ByteRange::strided(kBase + 252, 256, 2 * kRow, 64)};
  EXPECT_EQ(HazardScoreboard::classify(none, left, wide, none), Hazard::kNone);
  EXPECT_EQ(HazardScoreboard::classify(none, left, wide63, none), Hazard::kRaw);
  // The scoreboard itself: the right slice does not wait for the left one.
  HazardScoreboard sb;
  EXPECT_TRUE(sb.add(1, {}, left).empty());
  EXPECT_TRUE(sb.add(2, right, {}).empty());
  EXPECT_EQ(sb.add(3, left65, {}).size(), 1u);  // RAW on 1 only
}

// Against a byte-by-byte reference on many small random patterns.
TEST(HazardScoreboard, StridedOverlapMatchesByteSets) {
  uint64_t state = 12345;
  auto rnd = [&](uint64_t n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (state >> 33) % n;
  };
  auto bytes = [](const ByteRange& r) {
    std::vector<bool> b(4096, false);
    if (r.contiguous()) {
      for (uint64_t x = r.begin; x < r.end; ++x) b[x] = true;
    } else {
      for (uint64_t i = 0; i < r.rows(); ++i)
        for (uint64_t x = 0; x < r.run; ++x) b[r.begin + i * r.stride + x] = true;
    }
    return b;
  };
  int overlapping = 0, disjoint = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    ByteRange r[2];
    const uint64_t shared_stride = 1 + rnd(64);
    for (ByteRange& x : r) {
      const uint64_t stride = trial % 3 ? shared_stride : 1 + rnd(64);
      const uint64_t run = 1 + rnd(stride + 4);  // sometimes >= stride: contiguous
      x = ByteRange::strided(rnd(256), run, stride, 1 + rnd(24));
    }
    const std::vector<bool> a = bytes(r[0]), b = bytes(r[1]);
    bool shared = false;
    for (size_t i = 0; i < a.size(); ++i) shared = shared || (a[i] && b[i]);
    ASSERT_EQ(r[0].overlaps(r[1]), shared)
        << "trial " << trial << ": [" << r[0].begin << " run " << r[0].run << " stride "
        << r[0].stride << " rows " << r[0].rows() << "] vs [" << r[1].begin << " run " << r[1].run
        << " stride " << r[1].stride << " rows " << r[1].rows() << "]";
    ASSERT_EQ(r[1].overlaps(r[0]), shared) << "trial " << trial;
    (shared ? overlapping : disjoint)++;
  }
  // Both outcomes are well represented, with bounds overlapping in many of the disjoint ones.
  EXPECT_GT(overlapping, 2000);
  EXPECT_GT(disjoint, 2000);
}

TEST(HazardScoreboard, ClassifiesByteRanges) {
  const std::vector<ByteRange> none, r1{{0, 100}}, r2{{50, 150}}, r3{{100, 200}};
  EXPECT_EQ(HazardScoreboard::classify(none, r1, r2, none), Hazard::kRaw);
  EXPECT_EQ(HazardScoreboard::classify(r1, none, none, r2), Hazard::kWar);
  EXPECT_EQ(HazardScoreboard::classify(none, r1, none, r2), Hazard::kWaw);
  EXPECT_EQ(HazardScoreboard::classify(none, r1, r3, r3), Hazard::kNone);  // [0,100) vs [100,200)
  EXPECT_EQ(HazardScoreboard::classify(r1, none, r2, none), Hazard::kNone);  // read after read
  HazardScoreboard sb;
  EXPECT_TRUE(sb.add(1, {}, r1).empty());
  const auto b = sb.add(2, r2, {});
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].id, 1u);
  EXPECT_EQ(b[0].hazard, Hazard::kRaw);
  sb.remove(1);
  EXPECT_TRUE(sb.add(3, {}, r1).size() == 1);  // WAR against 2 only
}

TEST(EngineTiming, Formulas) {
  PeConfig cfg;
  cfg.gemm.array_rows = 16;
  cfg.gemm.array_cols = 8;
  EXPECT_EQ(gemm_cycles(cfg, 33, 8, 100), 3u * 1 * 100 + 16 + 8);
  cfg.math.lanes = 32;
  cfg.math.pipeline_latency_cycles = 5;
  cfg.math.transcendental_cycles = 3;
  EXPECT_EQ(math_cycles(cfg, MathOp::kExp, 65, 0), 5u + 3 * 3);
  EXPECT_EQ(math_cycles(cfg, MathOp::kAdd, 64, 0), 5u + 2 * 1);
  EXPECT_EQ(math_cycles(cfg, MathOp::kRowSum, 64 * 64, 64), 5u + 128 + 6);  // + log2(64)
  cfg.hbm.pseudo_channels = 4;
  cfg.hbm.channel_gbps = 25;
  cfg.hbm.efficiency = 0.5;  // 50 GB/s = 25 B/cycle at 2 GHz
  cfg.clock_freq_ghz = 2.0;
  EXPECT_DOUBLE_EQ(cfg.hbm_bytes_per_cycle(), 25.0);
  Stage s;
  s.bytes = 1000;
  EXPECT_EQ(dma_cycles(cfg, s), cfg.dma.setup_cycles + cfg.hbm.latency_cycles + 40);
  s.tcm_only = true;
  EXPECT_EQ(dma_cycles(cfg, s), cfg.dma.setup_cycles + 8);  // 1000 / 128 rounded up
  EXPECT_EQ(tcm_cycles(cfg, 256), cfg.tcm.latency_cycles + 2);
}

TEST(EngineTiming, ClockScalesTimeNotCycles) {
  PeConfig slow, fast;
  fast.clock_freq_ghz = 2.0;
  const Kernel k = [](Tl& tl) {
    const Tensor a = tl.tcm("a", 64, 64, Dtype::kFp32);
    const Tensor b = tl.tcm("b", 64, 64, Dtype::kFp32);
    test::init(tl, {a});
    tl.exp(b, a);
  };
  const OpRecord s = stage_of(run_kernel(k, slow), 1), f = stage_of(run_kernel(k, fast), 1);
  EXPECT_EQ(s.end_ps - s.start_ps, 2 * (f.end_ps - f.start_ps));
}

TEST(Latency, RunsFromStartToLastCompletion) {
  const RunResult r = run_kernel(many_loads);
  uint64_t last = 0;
  for (const OpRecord& rec : r.records) last = std::max(last, rec.end_ps);
  EXPECT_EQ(r.launches.at(0).start_ps, 0u);
  EXPECT_EQ(r.launches.at(0).end_ps, last);
}

TEST(Launches, BackToBackLaunchesEachGetTheirOwnResult) {
  RunSpec spec;
  spec.launches = {{"first", many_loads}, {"second", many_loads}};
  const RunResult r = run_isolated(spec);
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.launches.size(), 2u);
  EXPECT_EQ(r.launches[1].start_ps, r.launches[0].end_ps);
  EXPECT_EQ(r.launches[0].latency_ps(), r.launches[1].latency_ps());
  EXPECT_EQ(r.launches[0].commands, 32u);
  EXPECT_EQ(r.launches[1].commands, 32u);
}

// Kernel-author mistakes end the run cleanly with a message naming kernel,
// command and shapes.
RunResult run_failing(const Kernel& k) {
  RunSpec spec;
  spec.keep_records = true;
  spec.launches = {{"bad_kernel", k}};
  return run_isolated(spec);
}

TEST(KernelErrors, DotShapeMismatch) {
  const RunResult r = run_failing([](Tl& tl) {
    const Tensor a = tl.tcm("a", 8, 16, Dtype::kFp32);
    const Tensor b = tl.tcm("b", 32, 8, Dtype::kFp32);
    const Tensor c = tl.tcm("c", 8, 8, Dtype::kFp32);
    tl.dot(c, a, b);
  });
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.error, HasSubstr("kernel 'bad_kernel'"));
  EXPECT_THAT(r.error, HasSubstr("command #1 GemmCmd"));
  EXPECT_THAT(r.error, HasSubstr("[8, 16]"));
  EXPECT_THAT(r.error, HasSubstr("[32, 8]"));
}

TEST(KernelErrors, ElementwiseShapeMismatch) {
  const RunResult r = run_failing([](Tl& tl) {
    const Tensor a = tl.tcm("a", 8, 16, Dtype::kFp32);
    const Tensor b = tl.tcm("b", 8, 8, Dtype::kFp32);
    tl.add(a, a, b);
  });
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.error, HasSubstr("MathCmd add"));
  EXPECT_THAT(r.error, HasSubstr("'b' [8, 8]"));
}

TEST(KernelErrors, LoadFromTcmIsRejected) {
  const RunResult r = run_failing([](Tl& tl) {
    const Tensor a = tl.tcm("a", 8, 8, Dtype::kFp32);
    const Tensor b = tl.tcm("b", 8, 8, Dtype::kFp32);
    tl.load(a, b);
  });
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.error, HasSubstr("DmaReadCmd: src 'b' [8, 8] fp32 tcm must be in hbm"));
}

TEST(KernelErrors, OutOfBoundsViewAndTcmOverflow) {
  RunResult r = run_failing([](Tl& tl) {
    const Tensor a = tl.tcm("a", 8, 8, Dtype::kFp32);
    tl.view(a, 4, 8);
  });
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.error, HasSubstr("out of bounds of 'a' [8, 8]"));
  r = run_failing([](Tl& tl) { tl.tcm("huge", 4096, 4096, Dtype::kFp32); });
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.error, HasSubstr("does not fit in TCM"));
}

// Views live in a ring so the descriptor table does not grow with a long
// context; a view older than the ring is an error that says so.
TEST(KernelErrors, StaleViewHandle) {
  const RunResult r = run_failing([](Tl& tl) {
    const Tensor a = tl.tcm("a", 64, 64, Dtype::kFp32);
    const Tensor first = tl.view(a, 0, 8);
    for (uint64_t i = 0; i < kViewCapacity; ++i) tl.view(a, 0, 8);
    tl.fill(first, 1.0);
  });
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.error, HasSubstr("view handle 0 is stale"));
  // The newest views still work.
  const RunResult ok = test::run_kernel([](Tl& tl) {
    const Tensor a = tl.tcm("a", 64, 64, Dtype::kFp32);
    Tensor v;
    for (uint64_t i = 0; i < kViewCapacity + 10; ++i) v = tl.view(a, 0, 8);
    tl.fill(v, 1.0);
  });
  EXPECT_EQ(ok.launches.at(0).commands, 1u);
}

// `good` accepted exp commands, then one whose shapes do not match.
RunResult run_then_reject(int good) {
  return run_failing([good](Tl& tl) {
    const Tensor a = tl.tcm("a", 64, 64, Dtype::kFp32);
    const Tensor b = tl.tcm("b", 4, 4, Dtype::kFp32);
    test::init(tl, {a, b});
    for (int i = 0; i < good; ++i) tl.exp(a, a);
    tl.exp(a, b);  // rejected before any dispatch time
  });
}

TEST(KernelErrors, RejectedCommandChargesNothing) {
  const RunResult r = run_then_reject(1);
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.error, HasSubstr("command #2"));
  const auto d = of_kind(r, RecordKind::kDispatch);
  ASSERT_EQ(d.size(), 1u);  // command #1 only: #2 was never charged
  EXPECT_EQ(d[0].cmd_id, 1u);
}

// PE_CPU checks commands ahead of simulated time (temporal decoupling), but
// a rejected command still ends the launch only after every earlier command
// was written and has completed, at the last completion.
TEST(KernelErrors, RejectionAfterRunAheadWritesEveryEarlierCommand) {
  constexpr int kGood = 200;  // more than the run-ahead queue and the descriptor queue
  const RunResult r = run_then_reject(kGood);
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.error, HasSubstr("command #" + std::to_string(kGood + 1)));
  const auto d = of_kind(r, RecordKind::kDispatch);
  ASSERT_EQ(d.size(), size_t(kGood));
  EXPECT_EQ(d.back().cmd_id, uint64_t(kGood));
  uint64_t last_accepted = d.back().end_ps;
  for (const OpRecord& s : of_kind(r, RecordKind::kStall)) {
    if (s.cmd_id == uint64_t(kGood)) last_accepted = s.end_ps;
  }
  const auto math = of_kind(r, RecordKind::kMath);
  ASSERT_EQ(math.size(), size_t(kGood));  // every written command ran
  uint64_t last_done = 0;
  for (const OpRecord& rec : r.records) last_done = std::max(last_done, rec.end_ps);
  EXPECT_EQ(math.back().cmd_id, uint64_t(kGood));
  EXPECT_EQ(math.back().end_ps, last_done);
  EXPECT_LT(last_accepted, last_done);
  ASSERT_EQ(r.launches.size(), 1u);
  EXPECT_EQ(r.launches[0].end_ps, last_done);
  EXPECT_EQ(r.launches[0].commands, uint64_t(kGood));
}

// tl builds each command in PE_CPU's free run-ahead slot
// (or, the ring full, a staged command moved in later), reusing whatever
// command the slot held. The same commands built as Command values and
// moved through dispatch() must give the same op log and, in data mode, the
// same values: no field of an earlier command (an extra of scale, an
// operand count) may survive in a reused slot. 7 commands a round against
// 64 slots: each slot sees every type, and the ring fills.
TEST(RunAhead, CommandsBuiltInTheSlotMatchMovedCommands) {
  constexpr int kRounds = 40;
  std::vector<float> values[2];
  const auto make = [&](bool in_place) {
    return [&values, in_place](Tl& tl) {
      const Tensor src = tl.hbm("src", 16, 16, Dtype::kFp32);
      const Tensor x = tl.tcm("x", 16, 16, Dtype::kFp32);
      const Tensor y = tl.tcm("y", 16, 16, Dtype::kFp32);
      const Tensor m = tl.tcm("m", 16, 1, Dtype::kFp32);
      test::init(tl, {src});
      for (int i = 0; i < kRounds; ++i) {
        const double factor = 0.5 + 0.01 * i;
        if (in_place) {
          tl.load(x, src);
          tl.scale(y, x, factor);
          tl.exp(y, y);
          tl.rowmax(m, y);
          tl.fill(x, 0.25 * i);
          tl.add(y, y, x);
          tl.dot(y, x, y, {/*transpose_b=*/false, /*accumulate=*/true});
        } else {
          MathCmd scale{MathOp::kScale, {x.handle}, y.handle, {{"factor", factor}}};
          MathCmd fill{MathOp::kFill, {}, x.handle, {{"value", 0.25 * i}}};
          GemmCmd dot{x.handle, y.handle, y.handle, 16, 16, 16, false, true};
          tl.emit(DmaReadCmd{x.handle, src.handle});
          tl.emit(scale);
          tl.emit(MathCmd{MathOp::kExp, {y.handle}, y.handle, {}});
          tl.emit(MathCmd{MathOp::kRowMax, {y.handle}, m.handle, {}});
          tl.emit(fill);
          tl.emit(MathCmd{MathOp::kAdd, {y.handle, x.handle}, y.handle, {}});
          tl.emit(dot);
        }
      }
      values[in_place ? 1 : 0] = tl.host_read(y);
    };
  };
  PeConfig cfg;
  cfg.data_mode = true;
  const RunResult moved = run_kernel(make(false), cfg);
  const RunResult built = run_kernel(make(true), cfg);
  ASSERT_TRUE(moved.ok && built.ok) << moved.error << built.error;
  ASSERT_EQ(moved.launches.at(0).commands, uint64_t(7 * kRounds));
  ASSERT_EQ(built.records.size(), moved.records.size());
  for (size_t i = 0; i < built.records.size(); ++i) {
    const OpRecord& a = built.records[i];
    const OpRecord& b = moved.records[i];
    EXPECT_EQ(op_log_csv_row(a), op_log_csv_row(b)) << "record " << i;
  }
  ASSERT_EQ(values[1].size(), values[0].size());
  EXPECT_EQ(values[1], values[0]);
  EXPECT_EQ(built.launches[0].logical_bytes, moved.launches[0].logical_bytes);
}

// Without an op log the model keeps totals only (no record is built); the
// totals must be those the records would give.
TEST(OpLogTotals, SameWithAndWithoutRecords) {
  const Kernel k = [](Tl& tl) {
    const Tensor src = tl.hbm("src", 256, 256, Dtype::kBf16);
    const Tensor x = tl.tcm("x", 256, 256, Dtype::kBf16);
    const Tensor y = tl.tcm("y", 256, 256, Dtype::kFp32);
    test::init(tl, {src});
    for (int i = 0; i < 20; ++i) {
      tl.load(x, src);
      tl.dot(y, x, x);
      tl.exp(y, y);
      tl.cycles(3);
    }
  };
  RunSpec with, without;
  with.launches = without.launches = {{"k", k}};
  with.keep_records = true;
  without.keep_records = false;
  without.summary = false;
  const RunResult a = run_isolated(with), b = run_isolated(without);
  ASSERT_TRUE(a.ok && b.ok) << a.error << b.error;
  EXPECT_TRUE(b.records.empty());
  EXPECT_EQ(a.latency_ps(), b.latency_ps());
  for (int c = 0; c < kNumComponents; ++c) {
    EXPECT_EQ(a.records_by_component[c], b.records_by_component[c]) << to_string(Component(c));
    EXPECT_EQ(a.launches[0].busy_ps[c], b.launches[0].busy_ps[c]) << to_string(Component(c));
  }
  EXPECT_EQ(a.launches[0].stall_ps, b.launches[0].stall_ps);
  EXPECT_GT(a.launches[0].busy_ps[int(Component::kPeCpu)], 0u);
}

// An LT initiator in PE_CPU's place (here a test thread driving PE_CPU's
// port) writes descriptors with a blocking b_transport: a write returns once
// accepted, and a full queue holds it until a command completes.
struct BlockingWriter : sc_core::sc_module {
  Pe& pe;
  int writes;
  std::vector<uint64_t> accepted_ps;
  bool all_ok = true;
  uint64_t completed = 0;  // read from the completion register
  BlockingWriter(sc_core::sc_module_name name, Pe& p, int n) : sc_module(name), pe(p), writes(n) {
    SC_HAS_PROCESS(BlockingWriter);
    SC_THREAD(run);
  }
  void run() {
    TensorTable& t = pe.tensors();
    const Command load = DmaReadCmd{t.declare("dst", MemSpace::kTcm, 256, 256, Dtype::kBf16),
                                    t.declare("src", MemSpace::kHbm, 256, 256, Dtype::kBf16)};
    tlm::tlm_generic_payload p;
    auto* ext = new CommandExtension;  // owned by the payload
    p.set_extension(ext);
    std::vector<uint8_t> bytes;
    for (int i = 0; i < writes; ++i) {
      ext->cmd = &load;
      ext->id = uint64_t(i + 1);
      bytes = desc::encode(load, uint32_t(i + 1));  // the payload carries the descriptor
      p.set_data_ptr(bytes.data());
      p.set_data_length(unsigned(bytes.size()));
      p.set_streaming_width(unsigned(bytes.size()));
      p.set_command(tlm::TLM_WRITE_COMMAND);
      p.set_address(kQueueAddress);
      p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      pe.pe_cpu.cmd->b_transport(p, delay);
      all_ok = all_ok && p.is_response_ok();
      accepted_ps.push_back(now_ps());
    }
    p.set_command(tlm::TLM_READ_COMMAND);  // the completion register: drains
    p.set_address(kDrainAddress);
    p.set_data_ptr(reinterpret_cast<unsigned char*>(&completed));
    p.set_data_length(sizeof completed);
    p.set_streaming_width(sizeof completed);
    p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    pe.pe_cpu.cmd->b_transport(p, delay);
    all_ok = all_ok && p.is_response_ok();
  }
};

TEST(BackPressure, BlockingDescriptorWritesWaitForASlot) {
  constexpr int kWrites = 6;
  const nlohmann::json j = run_function_isolated([] {
    PeConfig cfg;
    cfg.scheduler.queue_depth = 2;
    PeTop top(cfg);
    Pe& pe = top.pe();
    BlockingWriter w("writer", pe, kWrites);
    sc_core::sc_start();
    return nlohmann::json{{"accepted_ps", w.accepted_ps},
                          {"ok", w.all_ok},
                          {"completed", w.completed},
                          {"dma_stages", pe.op_log().count(Component::kPeDma)},
                          {"end_ps", now_ps()}};
  });
  ASSERT_FALSE(j.contains("error")) << j.dump();
  EXPECT_TRUE(j["ok"].get<bool>());
  EXPECT_EQ(j["completed"].get<uint64_t>(), uint64_t(kWrites));  // the drain read's data
  EXPECT_EQ(j["dma_stages"].get<uint64_t>(), uint64_t(kWrites));
  // Every load writes dst (WAW), so they run one after another, each taking
  // the DMA formula's time d; with two slots, write i is accepted when load
  // i - 2 completes, at (i - 1) x d.
  Stage s;
  s.kind = RecordKind::kDmaRead;
  s.bytes = 256 * 256 * 2;
  const uint64_t d = dma_cycles(PeConfig{}, s) * period_ps(PeConfig{});
  const auto accepted = j["accepted_ps"].get<std::vector<uint64_t>>();
  ASSERT_EQ(accepted.size(), size_t(kWrites));
  for (int i = 0; i < kWrites; ++i) {
    EXPECT_EQ(accepted[i], i < 2 ? 0 : uint64_t(i - 1) * d) << "write " << i;
  }
  EXPECT_EQ(j["end_ps"].get<uint64_t>(), uint64_t(kWrites) * d);
}

// A VP that stops the simulation finds the op log's last instant passed on
// without calling flush() (Pe::end_of_simulation, docs/front-door.md).
TEST(OpLogEnd, StoppingTheSimulationFlushesTheLastInstant) {
  const nlohmann::json j = run_function_isolated([] {
    PeConfig cfg;
    PeTop top(cfg);
    Pe& pe = top.pe();
    pe.op_log().configure(true, "");
    pe.launch("k", [](Tl& tl) {
      const Tensor t = tl.tcm("t", 64, 64, Dtype::kFp32);
      tl.math(MathOp::kFill, t, {}, {{"value", 1.0}});
      tl.wait();
    });
    sc_core::sc_start();
    const size_t before = pe.op_log().records().size();
    sc_core::sc_stop();
    const size_t after = pe.op_log().records().size();
    pe.op_log().flush();  // the harness's own call after it: nothing more
    return nlohmann::json{{"before", before}, {"after", after}, {"again", pe.op_log().records().size()}};
  });
  ASSERT_FALSE(j.contains("error")) << j.dump();
  EXPECT_GT(j["after"].get<size_t>(), j["before"].get<size_t>()) << "the last instant was held until sc_stop";
  EXPECT_EQ(j["again"], j["after"]);
}

// --- failures while a command runs: a time past 2^64 - 1 ps
// raised inside a SystemC method (PE_CPU's dispatch pipeline, an engine's
// b_transport, HBM) fails the launch like a kernel error, naming the kernel
// and the command; never an "(E549) uncaught exception" from the kernel.

constexpr uint64_t kMaxPs = std::numeric_limits<uint64_t>::max();  // 2^64 - 1

RunResult run_launches(std::vector<std::pair<std::string, Kernel>> launches) {
  RunSpec spec;
  spec.keep_records = true;
  spec.launches = std::move(launches);
  return run_isolated(spec);
}

// Emit time: 2^64 - 1 cycles at 1 GHz overflow from any start; nothing is
// dispatched and no time passes.
TEST(CommandFaults, CyclesPast2To64PsFailAtEmitTime) {
  const RunResult r = run_launches({{"k", [](Tl& tl) { tl.cycles(kMaxPs); }}});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error,
            "kernel 'k', tl.cycles(18446744073709551615): dispatch: simulated time overflows: "
            "18446744073709551615 cycles at 1 GHz from 0 ps end past 2^64 - 1 ps (about 213 days)");
  ASSERT_EQ(r.launches.size(), 1u);
  EXPECT_EQ(r.launches[0].error, r.error);
  EXPECT_EQ(r.launches[0].end_ps, 0u);
  EXPECT_EQ(r.launches[0].cpu_cycles_ps, 0u);
  EXPECT_EQ(r.end_ps, 0u);
}

// Run time: 10^16 cycles at 1 GHz are 10^19 ps, which fits; the second
// starts at 10^19 and would end at 2 x 10^19 > 2^64 - 1. The kernel thread
// queued it while the first ran, so only PE_CPU's dispatch method sees it.
// The next launch never runs.
TEST(CommandFaults, CyclesOverflowingLaterFailTheLaunchNotTheSimulator) {
  const uint64_t n = 10000000000000000;  // 10^16
  ASSERT_LT(n * 1000, kMaxPs);
  ASSERT_GT(n * 1000, kMaxPs - n * 1000);  // 2 x 10^19 does not fit
  const RunResult r = run_launches({{"k",
                                     [n](Tl& tl) {
                                       tl.cycles(n);
                                       tl.cycles(n);
                                     }},
                                    {"never", [](Tl& tl) { tl.cycles(1); }}});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error,
            "kernel 'k', tl.cycles(10000000000000000): dispatch: simulated time overflows: "
            "10000000000000000 cycles at 1 GHz from 10000000000000000000 ps end past 2^64 - 1 ps "
            "(about 213 days)");
  EXPECT_THAT(r.error, ::testing::Not(HasSubstr("E549")));
  ASSERT_EQ(r.launches.size(), 1u);  // the second launch did not start
  EXPECT_EQ(r.launches[0].error, r.error);
  EXPECT_EQ(r.launches[0].cpu_cycles_ps, n * 1000);  // the first one ran
  EXPECT_EQ(r.end_ps, n * 1000);
}

// Run time, inside an engine: the load's dispatch fits, its DMA setup too,
// then HBM's access would end past 2^64 - 1 ps (PE_SCHEDULER's issue method
// -> PE_DMA -> HBM). Times computed here from the configuration.
TEST(CommandFaults, HbmAccessPast2To64PsFailsNamingTheCommand) {
  const PeConfig cfg;
  const uint64_t spin = 18446744073709500;  // cycles: ends 51615 ps before 2^64
  const uint64_t bytes = 64 * 64 * 2;       // bf16 64x64
  const uint64_t access =
      cfg.hbm.latency_cycles + uint64_t(std::ceil(double(bytes) / cfg.hbm_bytes_per_cycle()));
  const RunResult r = run_launches({{"late_dma", [spin](Tl& tl) {
                                       const Tensor x = tl.hbm("x", 64, 64, Dtype::kBf16);
                                       const Tensor a = tl.tcm("a", 64, 64, Dtype::kBf16);
                                       tl.host_random(x, 1);
                                       tl.cycles(spin);
                                       tl.load(a, x);
                                     }}});
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.launches.size(), 1u);
  const uint64_t start = (spin + r.launches[0].dispatch_cycles_charged + cfg.dma.setup_cycles) * 1000;
  ASSERT_GT(start, kMaxPs - access * 1000) << "the case must overflow";
  EXPECT_EQ(r.error, "kernel 'late_dma', command #1 DmaReadCmd: simulated time overflows: " +
                         std::to_string(access) + " cycles at 1 GHz from " + std::to_string(start) +
                         " ps end past 2^64 - 1 ps (about 213 days)");
  EXPECT_EQ(r.launches[0].commands, 1u);
}

// Data mode computes fp32 and bf16 only: an fp16 operand is refused at emit
// time (it was an E549 from PE_MATH's stage); timing mode runs it.
TEST(CommandFaults, DataModeRefusesFp16AtEmitTime) {
  const Kernel k = [](Tl& tl) {
    const Tensor a = tl.tcm("a", 64, 64, Dtype::kFp16);
    tl.fill(a, 1.0);
  };
  RunSpec spec;
  spec.launches = {{"half", k}};
  spec.config.data_mode = true;
  const RunResult r = run_isolated(spec);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error,
            "kernel 'half', command #1 MathCmd: data mode supports fp32 and bf16, not fp16: 'a' "
            "[64, 64] fp16 tcm");
  EXPECT_EQ(r.launches.at(0).commands, 0u);
  spec.config.data_mode = false;
  EXPECT_TRUE(run_isolated(spec).ok);
}

}  // namespace
}  // namespace kb
