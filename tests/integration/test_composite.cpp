// Composite commands: docs/cost-model.md TR1 and TR8 for composites, the
// scheduler's tile plan, cross-composite hazards and engine saturation.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "kernels/gemm/gemm_composite.h"
#include "kernels/recipes/softmax_merge.h"
#include "models/pe/engines/engine_timing.h"
#include "models/pe/engines/pe_dma.h"
#include "models/pe/engines/pe_gemm.h"
#include "models/pe/engines/pe_math.h"
#include "models/pe/engines/pe_tcm.h"
#include "models/pe/scheduler/tile_plan.h"
#include "tests/sim_util.h"
#include "tests/test_files.h"

namespace kb {
namespace {

using test::of_kind;
using test::period_ps;
using test::run_kernel;
using test::select;
using ::testing::HasSubstr;

// --- the three composites of docs/cost-model.md TR1

CompositeCmd one_gemm(Tl& tl) {
  const Tensor a = tl.tcm("a", 64, 64, Dtype::kBf16);
  const Tensor b = tl.hbm("b", 64, 64, Dtype::kBf16);
  const Tensor c = tl.tcm("c", 64, 64, Dtype::kBf16);
  test::init(tl, {a, b});
  return CompositeCmd{"one_gemm", {gemm_op(OpScope::kTile, c, a, b)}, {c.handle}};
}

CompositeCmd math_chain(Tl& tl) {
  const Tensor x = tl.tcm("x", 32, 64, Dtype::kFp32);
  const Tensor m = tl.tcm("m", 32, 1, Dtype::kFp32);
  const Tensor s = tl.tcm("s", 32, 1, Dtype::kFp32);
  test::init(tl, {x});
  const OpScope p = OpScope::kPrologue;
  return CompositeCmd{"math_chain",
                      {math_op(MathOp::kRowMax, p, m, {x}), math_op(MathOp::kSubBcast, p, x, {x, m}),
                       math_op(MathOp::kExp, p, x, {x}), math_op(MathOp::kRowSum, p, s, {x}),
                       math_op(MathOp::kDivBcast, p, x, {x, s})},
                      {x.handle}};
}

struct MergeTensors {
  Tensor s, v;
  SoftmaxMergeState st;
  SoftmaxMergeScratch x;
};

MergeTensors merge_tensors(Tl& tl, int64_t g = 8, int64_t t = 128, int64_t d = 128) {
  MergeTensors m;
  m.s = tl.tcm("S", g, t, Dtype::kFp32);
  m.v = tl.hbm("V", t, d, Dtype::kBf16);
  m.st = {tl.tcm("m0", g, 1, Dtype::kFp32), tl.tcm("m1", g, 1, Dtype::kFp32),
          tl.tcm("l", g, 1, Dtype::kFp32), tl.tcm("O", g, d, Dtype::kFp32)};
  m.x = {tl.tcm("mt", g, 1, Dtype::kFp32), tl.tcm("corr", g, 1, Dtype::kFp32),
         tl.tcm("P", g, t, Dtype::kFp32), tl.tcm("rs", g, 1, Dtype::kFp32)};
  test::init(tl, {m.s, m.v, m.st.m_in, m.st.l, m.st.o});
  return m;
}

CompositeCmd merge(Tl& tl) {
  const MergeTensors m = merge_tensors(tl);
  return CompositeCmd{"softmax_merge", softmax_merge_ops(m.s, m.v, m.st, m.x),
                      {m.st.l.handle, m.st.o.handle}};
}

using Builder = CompositeCmd (*)(Tl&);
struct CompositeCase {
  const char* name;
  Builder build;
  size_t ops;
  // Whole cycles PE_CPU must wait, ceil(FIXED + logical_bytes x R) worked
  // out by hand (logical bytes pinned by CompositeBytes.HandCountedSizes);
  // every exact figure has a fraction, so floor would be one cycle short.
  uint64_t charged_defaults;  // FIXED 40, R 0.0625
  uint64_t charged_override;  // FIXED 75, R 0.35
};

class CompositeFormula : public ::testing::TestWithParam<std::tuple<CompositeCase, bool>> {};

// TR1 for composites: recorded dispatch == FIXED_PER_CMD + logical_bytes x R,
// charged as its ceiling.
TEST_P(CompositeFormula, DispatchEqualsFormula) {
  const auto [c, overridden] = GetParam();
  PeConfig cfg;
  if (overridden) {
    cfg = load_pe_config("", {"pe.attrs.pe_cost_model.fixed_per_cmd_cycles=75",
                              "pe.attrs.pe_cost_model.byte_cycles_recip=0.35",
                              "pe.attrs.clock_freq_ghz=2.0"});
  }
  const RunResult r = run_kernel(
      [build = c.build](Tl& tl) {
        const CompositeCmd cmd = build(tl);
        tl.metric("ops", double(cmd.ops.size()));
        tl.composite(cmd);
      },
      cfg);
  ASSERT_EQ(r.launches.size(), 1u);
  ASSERT_EQ(r.launches[0].metrics.size(), 1u);
  EXPECT_EQ(r.launches[0].metrics[0].second, double(c.ops));  // TR1's 1-, 5- and 11-op composites
  const auto d = of_kind(r, RecordKind::kDispatch);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_STREQ(d[0].cmd_type, "CompositeCmd");
  const double formula = double(cfg.cost_model.fixed_per_cmd_cycles) +
                         d[0].logical_bytes * cfg.cost_model.byte_cycles_recip;
  EXPECT_DOUBLE_EQ(d[0].dispatch_cycles_exact, formula);
  const uint64_t charged = overridden ? c.charged_override : c.charged_defaults;
  ASSERT_NE(std::floor(formula), std::ceil(formula));  // the case tells ceil from floor
  EXPECT_EQ(d[0].dispatch_cycles_charged, charged);
  // PE_CPU waits exactly that many cycles: 1000 ps each at 1 GHz, 500 at 2 GHz.
  EXPECT_EQ(d[0].end_ps - d[0].start_ps, charged * (overridden ? 500u : 1000u));
  // One dispatch whatever the plan expands into (docs/cost-model.md D5).
  EXPECT_GT(r.records.size(), 2u);
  EXPECT_EQ(r.launches.at(0).commands, 1u);
  std::printf("[ info ] %s: %u logical bytes, dispatch %.4f cycles (%s)\n", c.name,
              d[0].logical_bytes, d[0].dispatch_cycles_exact, overridden ? "override" : "defaults");
}

// one_gemm 54 bytes:    40 + 54 / 16 = 43.375  -> 44;  75 + 54 x 0.35 = 93.9    -> 94
// math_chain 130 bytes: 40 + 130 / 16 = 48.125 -> 49;  75 + 130 x 0.35 = 120.5  -> 121
// softmax_merge 311:    40 + 311 / 16 = 59.4375 -> 60; 75 + 311 x 0.35 = 183.85 -> 184
INSTANTIATE_TEST_SUITE_P(
    Composites, CompositeFormula,
    ::testing::Combine(::testing::Values(CompositeCase{"one_gemm", one_gemm, 1, 44, 94},
                                         CompositeCase{"math_chain", math_chain, 5, 49, 121},
                                         CompositeCase{"softmax_merge", merge, 11, 60, 184}),
                       ::testing::Bool()),
    [](const auto& tp) {  // not `info`: gtest's own parameter name
      return std::string(std::get<0>(tp.param).name) +
             (std::get<1>(tp.param) ? "_override" : "_defaults");
    });

TEST(CompositeBytes, HandCountedSizes) {
  // Re-derived from docs/cost-model.md D2 field by field, to pin the builders.
  RunSpec spec;
  spec.launches = {{"sizes", [](Tl& tl) {
                      EXPECT_EQ(one_gemm(tl).logical_bytes(), 54u);  // the D3 anchor
                      // 5 ops: rowmax 20, sub_bcast 28, exp 20, rowsum 20, div_bcast 28
                      EXPECT_EQ(math_chain(tl).logical_bytes(), 4u + 1 + 116 + 1 + 8);
                      // 10 math ops (4 unary x 20 + 6 binary x 28) + gemm with
                      // accumulate (1+1+1+16+8+1+12+1 = 41), rw {l, O}
                      const CompositeCmd m = merge(tl);
                      EXPECT_EQ(m.ops.size(), 11u);
                      EXPECT_EQ(m.logical_bytes(), 4u + 1 + (4 * 20 + 6 * 28 + 41) + 1 + 16);
                      std::printf("[ info ] softmax_merge: %zu ops, %u logical bytes\n",
                                  m.ops.size(), m.logical_bytes());
                    }}};
  const RunResult r = run_isolated(spec);
  EXPECT_TRUE(r.ok) << r.error;
}

// --- docs/cost-model.md TR8 / D7: the size cap

// A composite of n binary math ops: 4 + 1 + 28 n + 1 + 8 bytes.
CompositeCmd chain_of(Tl& tl, int n) {
  const Tensor a = tl.tcm("a", 8, 8, Dtype::kFp32);
  test::init(tl, {a});
  CompositeCmd c{"chain" + std::to_string(n), {}, {a.handle}};
  for (int i = 0; i < n; ++i) c.ops.push_back(math_op(MathOp::kAdd, OpScope::kPrologue, a, {a, a}));
  return c;
}

TEST(CompositeCap, OverTheCapFailsAtEmitAndNothingReachesTheScheduler) {
  RunSpec spec;
  spec.keep_records = true;
  spec.launches = {{"capped", [](Tl& tl) {
                      const Tensor b = tl.tcm("b", 8, 8, Dtype::kFp32);
                      const CompositeCmd big = chain_of(tl, 40);  // 1130 bytes > 1024
                      tl.fill(b, 1.0);                  // command 1: fine
                      tl.composite(big);
                      tl.fill(b, 2.0);                  // never reached
                    }}};
  const RunResult r = run_isolated(spec);
  ASSERT_FALSE(r.ok);
  EXPECT_THAT(r.error, HasSubstr("kernel 'capped'"));
  EXPECT_THAT(r.error, HasSubstr("composite 'chain40'"));
  EXPECT_THAT(r.error, HasSubstr(std::to_string(4 + 1 + 28 * 40 + 1 + 8)));
  EXPECT_THAT(r.error, HasSubstr("cap of 1024"));
  // Only command 1 was dispatched and executed; the composite charged no
  // time: the failed launch ended when command 1, issued as its dispatch
  // ended, completed (a failed launch ends at its last completion).
  const auto d = of_kind(r, RecordKind::kDispatch);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].cmd_id, 1u);
  for (const OpRecord& rec : r.records) EXPECT_EQ(rec.cmd_id, 1u);
  const auto m = of_kind(r, RecordKind::kMath);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].start_ps, d[0].end_ps);
  ASSERT_EQ(r.launches.size(), 1u);
  EXPECT_EQ(r.launches[0].end_ps, m[0].end_ps);
}

TEST(CompositeCap, AtAndBelowTheCapEmitNormally) {
  // 36 ops: 4 + 1 + 1008 + 1 + 8 = 1022 bytes; with one rw handle more, 1030.
  const RunResult r = run_kernel([](Tl& tl) {
    CompositeCmd c = chain_of(tl, 36);
    ASSERT_EQ(c.logical_bytes(), 1022u);
    tl.composite(c);
  });
  EXPECT_EQ(r.launches.at(0).commands, 1u);
  PeConfig at_cap;
  at_cap.cost_model.max_composite_logical_bytes = 1022;
  const RunResult r2 = run_kernel([](Tl& tl) { tl.composite(chain_of(tl, 36)); }, at_cap);
  EXPECT_EQ(r2.launches.at(0).commands, 1u);
}

TEST(CompositeCap, OverriddenCapIsHonoured) {
  PeConfig small = load_pe_config("", {"pe.attrs.pe_cost_model.max_composite_logical_bytes=100"});
  RunSpec spec;
  spec.config = small;
  spec.launches = {{"k", [](Tl& tl) { tl.composite(chain_of(tl, 4)); }}};  // 126 bytes
  RunResult r = run_isolated(spec);
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.error, HasSubstr("126 logical bytes, over the cap of 100"));
  PeConfig large = load_pe_config("", {"pe.attrs.pe_cost_model.max_composite_logical_bytes=2000"});
  spec.config = large;
  spec.launches = {{"k", [](Tl& tl) { tl.composite(chain_of(tl, 60)); }}};  // 1694 bytes
  r = run_isolated(spec);
  EXPECT_TRUE(r.ok) << r.error;
}

// --- the tile plan

// 64^3 hardware tiles, so small GEMMs have many tiles.
PeConfig tile64() {
  PeConfig cfg;
  cfg.tile = {64, 64, 64};
  return cfg;
}

struct PlanCase {
  MemSpace a, b, c;
};

// Stages per tile of a 128 x 192 x 256 GEMM composite (tiles 64^3: 2 x 3 x 4).
std::map<int64_t, std::map<RecordKind, int>> stages_per_tile(const RunResult& r) {
  std::map<int64_t, std::map<RecordKind, int>> n;
  for (const OpRecord& rec : r.records)
    if (rec.component != Component::kPeCpu) ++n[rec.tile][rec.kind];
  return n;
}

Kernel gemm_in(PlanCase p, int64_t m = 128, int64_t n = 192, int64_t k = 256) {
  return [=](Tl& tl) {
    auto decl = [&](const char* name, int64_t r, int64_t c, MemSpace s) {
      return s == MemSpace::kHbm ? tl.hbm(name, r, c, Dtype::kBf16) : tl.tcm(name, r, c, Dtype::kBf16);
    };
    const Tensor a = decl("a", m, k, p.a), b = decl("b", k, n, p.b), c = decl("c", m, n, p.c);
    test::init(tl, {a, b});
    tl.composite("gemm", {gemm_op(OpScope::kTile, c, a, b)}, {c});
  };
}

TEST(TilePlan, DmaOnlyForOperandsInHbm) {
  const PeConfig cfg = tile64();
  const uint64_t tiles = gemm_tile_count(cfg.tile, 128, 192, 256).value_or(0);
  ASSERT_EQ(tiles, 2u * 3 * 4);
  for (PlanCase p : {PlanCase{MemSpace::kHbm, MemSpace::kHbm, MemSpace::kHbm},
                     PlanCase{MemSpace::kTcm, MemSpace::kHbm, MemSpace::kTcm},
                     PlanCase{MemSpace::kTcm, MemSpace::kTcm, MemSpace::kHbm},
                     PlanCase{MemSpace::kTcm, MemSpace::kTcm, MemSpace::kTcm}}) {
    const auto n = stages_per_tile(run_kernel(gemm_in(p), cfg));
    const int reads = (p.a == MemSpace::kHbm) + (p.b == MemSpace::kHbm);
    ASSERT_EQ(n.size(), tiles);
    int blocks = 0;
    for (const auto& [tile, kinds] : n) {
      EXPECT_GE(tile, 0);
      auto count = [&](RecordKind k) { return kinds.count(k) ? kinds.at(k) : 0; };
      EXPECT_EQ(count(RecordKind::kDmaRead), reads) << "tile " << tile;
      EXPECT_EQ(count(RecordKind::kFetch), 1);
      EXPECT_EQ(count(RecordKind::kGemm), 1);
      // STORE (and DMA_WRITE for an HBM output) once per output block, on
      // its last K step (every 4th tile here).
      const bool last_k = tile % 4 == 3;
      EXPECT_EQ(count(RecordKind::kStore), last_k ? 1 : 0) << "tile " << tile;
      EXPECT_EQ(count(RecordKind::kDmaWrite), last_k && p.c == MemSpace::kHbm ? 1 : 0);
      blocks += count(RecordKind::kStore);
    }
    EXPECT_EQ(blocks, 2 * 3);
  }
}

TEST(TilePlan, ConsecutiveTilesOverlap) {
  const RunResult r =
      run_kernel(gemm_in({MemSpace::kHbm, MemSpace::kHbm, MemSpace::kTcm}), tile64());
  const auto gemms = of_kind(r, RecordKind::kGemm);
  const auto reads = of_kind(r, RecordKind::kDmaRead);
  // While tile t computes, the DMA already streams a later tile (double
  // buffering); without it the DMA would idle during every GEMM.
  int overlapped = 0, candidates = 0;
  for (const OpRecord& g : gemms) {
    if (g.tile + 1 >= int64_t(gemms.size())) continue;
    ++candidates;
    for (const OpRecord& d : reads) {
      if (d.tile > g.tile && d.start_ps < g.end_ps && d.end_ps > g.start_ps) {
        ++overlapped;
        break;
      }
    }
  }
  EXPECT_EQ(overlapped, candidates);
  // ... but never more than two tiles ahead: tile t+2's DMA waits for tile
  // t's FETCH (its buffer).
  std::map<int64_t, OpRecord> fetch;
  for (const OpRecord& rec : of_kind(r, RecordKind::kFetch)) fetch[rec.tile] = rec;
  for (const OpRecord& rec : of_kind(r, RecordKind::kDmaRead)) {
    if (rec.tile >= 2) {
      EXPECT_GE(rec.start_ps, fetch.at(rec.tile - 2).end_ps) << rec.tile;
    }
  }
}

TEST(TilePlan, PrologueAndEpilogueAreStandaloneStages) {
  const RunResult r = run_kernel([](Tl& tl) {
    const MergeTensors m = merge_tensors(tl);
    std::vector<OpSpec> ops = softmax_merge_ops(m.s, m.v, m.st, m.x);
    // An epilogue op after the tile loop: O / l, once.
    ops.push_back(math_op(MathOp::kDivBcast, OpScope::kEpilogue, m.st.o, {m.st.o, m.st.l}));
    tl.composite("merge_and_finish", ops, {m.st.l, m.st.o});
  });
  const auto math = of_kind(r, RecordKind::kMath);
  ASSERT_EQ(math.size(), 11u);  // 10 prologue + 1 epilogue, each once
  uint64_t first_fetch = ~0ull, last_tile_end = 0;
  for (const OpRecord& rec : r.records) {
    if (rec.component == Component::kPeCpu) continue;
    if (rec.kind == RecordKind::kFetch) first_fetch = std::min(first_fetch, rec.start_ps);
    if (rec.tile >= 0) last_tile_end = std::max(last_tile_end, rec.end_ps);
  }
  for (size_t i = 0; i < math.size(); ++i) {
    EXPECT_EQ(math[i].tile, -1) << math[i].op;  // never folded into a GEMM tile
    if (i + 1 < math.size()) {
      EXPECT_LE(math[i].end_ps, first_fetch) << math[i].op;
    }
  }
  EXPECT_STREQ(math.back().op, "div_bcast");
  EXPECT_GE(math.back().start_ps, last_tile_end);
  // The V stream needs no prologue: its first DMA starts with the prologue.
  const auto reads = of_kind(r, RecordKind::kDmaRead);
  ASSERT_FALSE(reads.empty());
  EXPECT_LT(reads.front().start_ps, math[9].end_ps);
}

TEST(TilePlan, CompositeCompletesWithItsLastStage) {
  RunSpec spec;
  spec.keep_records = true;
  spec.launches = {{"g", gemm_in({MemSpace::kHbm, MemSpace::kHbm, MemSpace::kHbm})}};
  const RunResult r = run_isolated(spec);
  ASSERT_TRUE(r.ok);
  uint64_t last = 0;
  for (const OpRecord& rec : r.records) last = std::max(last, rec.end_ps);
  EXPECT_EQ(r.launches[0].end_ps, last);
  EXPECT_STREQ(r.records.back().cmd_type, "CompositeCmd");
  EXPECT_EQ(r.records.back().kind, RecordKind::kDmaWrite);
}

// --- an accumulating GEMM into an HBM output reads the old value

// out [128, 70] fp32 in HBM += a [128, 256] bf16 @ b [256, 70] bf16, both in
// HBM; tiles 64^3: output blocks (0,0) (0,64) (64,0) (64,64), 4 K steps each.
Kernel accumulate_into(MemSpace out_space) {
  return [out_space](Tl& tl) {
    const Tensor a = tl.hbm("a", 128, 256, Dtype::kBf16), b = tl.hbm("b", 256, 70, Dtype::kBf16);
    const Tensor c = out_space == MemSpace::kHbm ? tl.hbm("c", 128, 70, Dtype::kFp32)
                                                 : tl.tcm("c", 128, 70, Dtype::kFp32);
    test::init(tl, {a, b, c});
    tl.composite("acc", {gemm_op(OpScope::kTile, c, a, b, {false, /*accumulate=*/true})}, {c});
  };
}

TEST(AccumulateIntoHbm, OutputBlockIsReadBeforeTheFirstKStep) {
  const PeConfig cfg = tile64();
  const RunResult r = run_kernel(accumulate_into(MemSpace::kHbm), cfg);
  // DMA formula by hand (docs/architecture.md, "Engine formulas"): setup 16 + HBM latency 100 + ceil(bytes /
  // B), B = 8 channels x 32 GB/s x 0.8 / 1 GHz = 204.8 bytes per cycle.
  //   block 64 x 64 fp32 = 16384 bytes: 16384 / 204.8 = 80     -> 196 cycles
  //   block 64 x 6 fp32  =  1536 bytes:  1536 / 204.8 = 7.5 -> 8 -> 124 cycles
  const std::map<int64_t, std::pair<uint64_t, uint64_t>> expected = {  // tile -> bytes, cycles
      {0, {16384, 196}}, {4, {1536, 124}}, {8, {16384, 196}}, {12, {1536, 124}}};
  std::map<int64_t, OpRecord> out_reads, fetches;
  for (const OpRecord& rec : of_kind(r, RecordKind::kDmaRead)) {
    if (rec.bytes == 4 * rec.elements) out_reads[rec.tile] = rec;  // fp32: the output (a, b are bf16)
  }
  for (const OpRecord& rec : of_kind(r, RecordKind::kFetch)) fetches[rec.tile] = rec;
  ASSERT_EQ(out_reads.size(), expected.size());
  for (const auto& [tile, want] : expected) {
    ASSERT_TRUE(out_reads.count(tile)) << "no DMA_READ of the output block in tile " << tile;
    const OpRecord& rd = out_reads.at(tile);
    EXPECT_EQ(rd.bytes, want.first) << tile;
    EXPECT_EQ(rd.end_ps - rd.start_ps, want.second * 1000) << tile;  // 1 GHz: 1000 ps a cycle
    EXPECT_LE(rd.end_ps, fetches.at(tile).start_ps) << tile;  // in TCM before it is fetched
  }
  // Tile 0's FETCH brings a, b and the old output block: 8192 + 8192 + 16384.
  EXPECT_EQ(fetches.at(0).bytes, 32768u);
  // Other tiles read a and b only.
  EXPECT_EQ(of_kind(r, RecordKind::kDmaRead).size(), 16u * 2 + 4);
}

TEST(AccumulateIntoHbm, NoReadForATcmOutput) {
  const RunResult r = run_kernel(accumulate_into(MemSpace::kTcm), tile64());
  EXPECT_EQ(of_kind(r, RecordKind::kDmaRead).size(), 16u * 2);  // a and b only
}

TEST(AccumulateIntoHbm, DataModeResultIsOldPlusProduct) {
  // Small integers: every product and sum is exact in fp32, so the result
  // must equal old + a @ b exactly (computed here in int64).
  PeConfig cfg = tile64();
  cfg.data_mode = true;
  const int64_t m = 100, n = 70, k = 130;
  auto value = [](int64_t i, int64_t salt) {  // a hash of (i, salt) in -2 .. 2
    const uint64_t h = (uint64_t(i) * 0x9e3779b97f4a7c15ull + uint64_t(salt)) >> 40;
    return float(int64_t(h % 5) - 2);
  };
  const RunResult r = run_kernel(
      [&](Tl& tl) {
        const Tensor a = tl.hbm("a", m, k, Dtype::kBf16), b = tl.hbm("b", k, n, Dtype::kBf16);
        const Tensor c = tl.hbm("c", m, n, Dtype::kFp32);
        std::vector<float> va(size_t(m * k)), vb(size_t(k * n)), vc(size_t(m * n));
        for (size_t i = 0; i < va.size(); ++i) va[i] = value(int64_t(i), 1);
        for (size_t i = 0; i < vb.size(); ++i) vb[i] = value(int64_t(i), 2);
        for (size_t i = 0; i < vc.size(); ++i) vc[i] = 10 * value(int64_t(i), 3);
        tl.host_write(a, va);
        tl.host_write(b, vb);
        tl.host_write(c, vc);
        tl.composite("acc", {gemm_op(OpScope::kTile, c, a, b, {false, true})}, {c});
        const std::vector<float> got = tl.host_read(c);
        int64_t mismatches = 0, changed = 0;
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            int64_t want = int64_t(vc[size_t(i * n + j)]);
            for (int64_t x = 0; x < k; ++x)
              want += int64_t(va[size_t(i * k + x)]) * int64_t(vb[size_t(x * n + j)]);
            mismatches += double(got[size_t(i * n + j)]) != double(want);
            changed += want != int64_t(vc[size_t(i * n + j)]);
          }
        }
        tl.metric("mismatches", double(mismatches));
        tl.metric("changed", double(changed));
      },
      cfg);
  ASSERT_EQ(r.launches.size(), 1u);
  std::map<std::string, double> metrics(r.launches[0].metrics.begin(), r.launches[0].metrics.end());
  EXPECT_EQ(metrics.at("mismatches"), 0.0);
  EXPECT_GT(metrics.at("changed"), 0.0);  // the product is not all zero
  // The plan read each output block once: 2 x 2 blocks.
  uint64_t out_reads = 0;
  for (const OpRecord& rec : of_kind(r, RecordKind::kDmaRead)) out_reads += rec.bytes == 4 * rec.elements;
  EXPECT_EQ(out_reads, 4u);
}

// --- the plan is produced lazily: memory does not grow with the
// tile count, and any tile size terminates.

// A composite GEMM out = a @ b over tensors declared in `table`, [m, k] x
// [k, n], every tensor in `space`.
CompositeCmd plan_gemm(TensorTable& table, int64_t m, int64_t n, int64_t k, MemSpace space,
                       bool accumulate = false) {
  auto decl = [&](const char* name, int64_t r, int64_t c) {
    return Tensor{table.declare(name, space, r, c, Dtype::kBf16), r, c, Dtype::kBf16, space};
  };
  const Tensor a = decl("a", m, k), b = decl("b", k, n), c = decl("c", m, n);
  return CompositeCmd{"g", {gemm_op(OpScope::kTile, c, a, b, {false, accumulate})}, {c.handle}};
}

struct Drained {
  uint64_t completed = 0;
  size_t max_live = 0;
  std::map<RecordKind, uint64_t> kinds;
};

// Completes every stage the plan makes ready, oldest position first (as the
// scheduler would with one engine), and counts them.
Drained drain(TilePlan& plan) {
  Drained d;
  std::map<uint64_t, uint32_t> ready;  // seq -> slot
  uint32_t slot;
  while (plan.pop_ready(&slot)) ready[plan.stage(slot).seq] = slot;
  while (!ready.empty()) {
    d.max_live = std::max(d.max_live, plan.live_stages());
    const uint32_t s = ready.begin()->second;
    ready.erase(ready.begin());
    ++d.kinds[plan.stage(s).kind];
    plan.complete(s);
    ++d.completed;
    while (plan.pop_ready(&slot)) ready[plan.stage(slot).seq] = slot;
  }
  return d;
}

TEST(LazyTilePlan, LiveStagesDoNotGrowWithTileCount) {
  // 1 x 1 x 1 tiles over 64^3 and 128 x 64 x 64: 262144 and 524288 tiles,
  // 3 DMA reads... per tile; the stages alive at once stay the same few.
  size_t max_live[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    const int64_t m = i == 0 ? 64 : 128;
    TensorTable table(1 << 22);
    PeConfig cfg;
    cfg.tile = {1, 1, 1};
    const CompositeCmd cmd = plan_gemm(table, m, 64, 64, MemSpace::kHbm);
    TilePlan plan;
    plan.start(1, cmd, table, cfg);
    const Drained d = drain(plan);
    const uint64_t tiles = uint64_t(m) * 64 * 64, blocks = uint64_t(m) * 64;
    EXPECT_TRUE(plan.done());
    EXPECT_EQ(d.kinds.at(RecordKind::kGemm), tiles);
    EXPECT_EQ(d.kinds.at(RecordKind::kFetch), tiles);
    EXPECT_EQ(d.kinds.at(RecordKind::kDmaRead), 2 * tiles);  // a and b blocks
    EXPECT_EQ(d.kinds.at(RecordKind::kStore), blocks);
    EXPECT_EQ(d.kinds.at(RecordKind::kDmaWrite), blocks);
    EXPECT_EQ(d.completed, plan.produced());
    max_live[i] = d.max_live;
  }
  std::printf("[ info ] 1x1x1 tiles: at most %zu / %zu stages alive\n", max_live[0], max_live[1]);
  // At most tiles t-2 .. t+2 are alive: 5 tiles x 6 stages.
  EXPECT_LE(max_live[0], 30u);
  EXPECT_EQ(max_live[0], max_live[1]);
}

TEST(LazyTilePlan, AnyTileSizeTerminates) {
  // 2^64 - 1 once wrapped to -1 in a signed tile loop that never ended; a
  // zero tile (rejected by configuration) would not advance.
  const uint64_t huge = UINT64_MAX;
  struct Case {
    TileConfig tile;
    uint64_t gemms;
  } cases[] = {{{huge, huge, huge}, 1},
               {{huge, 64, huge}, 2},  // n = 100: two column blocks
               {{uint64_t(INT64_MAX), uint64_t(INT64_MAX) + 1, 7}, 10},  // k = 70
               {{0, 0, 0}, 50 * 100 * 70}};
  for (const Case& c : cases) {
    TensorTable table(1 << 22);
    PeConfig cfg;
    cfg.tile = c.tile;
    const CompositeCmd cmd = plan_gemm(table, 50, 100, 70, MemSpace::kHbm, true);
    TilePlan plan;
    plan.start(1, cmd, table, cfg);
    const Drained d = drain(plan);
    EXPECT_TRUE(plan.done());
    EXPECT_EQ(d.kinds.at(RecordKind::kGemm), c.gemms) << c.tile.m << " " << c.tile.n << " " << c.tile.k;
  }
  // The count itself: ceil(x / t) must not wrap to 0 for a huge tile, and a
  // count past 2^64 is no count.
  EXPECT_EQ(gemm_tile_count({huge, huge, huge}, 5, 5, 5), std::optional<uint64_t>(1));
  EXPECT_EQ(gemm_tile_count({huge - 1, 2, 1}, huge, 3, 1), std::optional<uint64_t>(2 * 2));
  EXPECT_EQ(gemm_tile_count({1, 1, 1}, uint64_t(1) << 32, uint64_t(1) << 32, 1), std::nullopt);
}

TEST(LazyTilePlan, HugeTileRunsAsTheWholeGemm) {
  // A tile larger than the GEMM is the GEMM: the same op log as tile = shape.
  PeConfig huge = tile64(), exact = tile64();
  huge.tile.m = UINT64_MAX;
  exact.tile.m = 128;
  const Kernel k = gemm_in({MemSpace::kHbm, MemSpace::kHbm, MemSpace::kHbm});
  const RunResult rh = run_kernel(k, huge), re = run_kernel(k, exact);
  ASSERT_EQ(rh.records.size(), re.records.size());
  for (size_t i = 0; i < rh.records.size(); ++i) {
    EXPECT_EQ(rh.records[i].start_ps, re.records[i].start_ps) << i;
    EXPECT_EQ(rh.records[i].end_ps, re.records[i].end_ps) << i;
    EXPECT_EQ(rh.records[i].bytes, re.records[i].bytes) << i;
    EXPECT_EQ(rh.records[i].tile, re.records[i].tile) << i;
  }
  EXPECT_EQ(of_kind(rh, RecordKind::kGemm).size(), 3u * 4);  // n / 64 x k / 64
}

// --- hazards across composites

TEST(CompositeHazards, ReaderOfAnEarlierCompositesOutputWaits) {
  const RunResult r = run_kernel([](Tl& tl) {
    const Tensor a = tl.hbm("a", 128, 128, Dtype::kBf16), b = tl.hbm("b", 128, 128, Dtype::kBf16);
    const Tensor c = tl.tcm("c", 128, 128, Dtype::kBf16), d = tl.tcm("d", 128, 128, Dtype::kBf16);
    const Tensor x = tl.hbm("x", 128, 128, Dtype::kBf16), y = tl.hbm("y", 128, 128, Dtype::kBf16);
    const Tensor z = tl.tcm("z", 128, 128, Dtype::kBf16);
    test::init(tl, {a, b, x, y});
    tl.composite("producer", {gemm_op(OpScope::kTile, c, a, b)}, {c});        // 1 writes c
    tl.composite("consumer", {math_op(MathOp::kExp, OpScope::kPrologue, d, {c})}, {d});  // 2 reads c
    tl.composite("independent", {gemm_op(OpScope::kTile, z, x, y)}, {z});     // 3 unrelated
  });
  auto span = [&](uint64_t id) {
    uint64_t lo = ~0ull, hi = 0;
    for (const OpRecord& rec : r.records) {
      if (rec.cmd_id != id || rec.component == Component::kPeCpu) continue;
      lo = std::min(lo, rec.start_ps);
      hi = std::max(hi, rec.end_ps);
    }
    return std::pair{lo, hi};
  };
  const auto [p_start, p_end] = span(1);
  const auto [c_start, c_end] = span(2);
  const auto [i_start, i_end] = span(3);
  EXPECT_GE(c_start, p_end);  // RAW across composites
  EXPECT_LT(i_start, p_end);  // the independent composite is not delayed
  (void)p_start, (void)c_end, (void)i_end;
}

TEST(CompositeHazards, SingleOpWriterOrdersAfterCompositeReader) {
  const RunResult r = run_kernel([](Tl& tl) {
    const Tensor a = tl.tcm("a", 128, 128, Dtype::kBf16), b = tl.hbm("b", 128, 128, Dtype::kBf16);
    const Tensor c = tl.tcm("c", 128, 128, Dtype::kBf16), x = tl.hbm("x", 128, 128, Dtype::kBf16);
    test::init(tl, {a, b, x});
    tl.composite("reader", {gemm_op(OpScope::kTile, c, a, b)}, {c});  // 1 reads a
    tl.load(a, x);                                                     // 2 overwrites a: WAR
  });
  uint64_t last_fetch = 0;
  for (const OpRecord& rec : of_kind(r, RecordKind::kFetch)) last_fetch = std::max(last_fetch, rec.end_ps);
  EXPECT_GE(test::stage_of(r, 2).start_ps, last_fetch);
}

// --- engine saturation

TEST(CompositeGemm, LargeGemmKeepsTheArrayBusy) {
  const int64_t m = 512, n = 512, k = 1024;
  const PeConfig cfg;
  const RunResult r = run_kernel([=](Tl& tl) {
    GemmShape s;
    s.m = m, s.n = n, s.k = k;
    gemm_composite(tl, s);
  }, cfg);
  const uint64_t span = r.latency_ps();
  const uint64_t busy = r.busy_ps[int(Component::kPeGemm)];
  const double util = double(busy) / double(span);
  std::printf("[ info ] composite GEMM %ldx%ldx%ld: PE_GEMM busy %.1f%% of %.3f us\n", long(m),
              long(n), long(k), 100 * util, double(span) / 1e6);
  EXPECT_GE(util, 0.90);
  // The GEMM stage durations add up to the analytic per-tile compute total.
  uint64_t analytic = 0;
  for (int64_t mi = 0; mi < m; mi += int64_t(cfg.tile.m))
    for (int64_t ni = 0; ni < n; ni += int64_t(cfg.tile.n))
      for (int64_t ki = 0; ki < k; ki += int64_t(cfg.tile.k))
        analytic += gemm_cycles(cfg, std::min<int64_t>(cfg.tile.m, m - mi),
                                std::min<int64_t>(cfg.tile.n, n - ni),
                                std::min<int64_t>(cfg.tile.k, k - ki));
  uint64_t summed = 0;
  for (const OpRecord& g : of_kind(r, RecordKind::kGemm)) summed += g.end_ps - g.start_ps;
  EXPECT_EQ(summed, analytic * period_ps(cfg));
  EXPECT_EQ(of_kind(r, RecordKind::kGemm).size(), 256u);  // 512/128 x 512/128 x 1024/64 tiles
}

TEST(CompositeGemm, TailTilesAreCut) {
  const PeConfig cfg = tile64();
  const RunResult r = run_kernel(gemm_in({MemSpace::kTcm, MemSpace::kTcm, MemSpace::kTcm}, 70, 65, 130), cfg);
  const auto g = of_kind(r, RecordKind::kGemm);
  ASSERT_EQ(g.size(), 12u);  // 2 x 2 x 3 tiles of 64
  uint64_t elements = 0;
  for (const OpRecord& rec : g) elements += rec.elements;
  EXPECT_EQ(elements, 3u * 70 * 65);  // each output element once per K step
}

// The recipe as softmax_merge() emits it (built typed,
// docs/conventions.md 13) and as text (softmax_merge_ops, what a replay
// file holds): the same op log, record for record, in timing and in data
// mode, twice in a row (the second merge depends on the first's l and O).
TEST(CompositeBuiltTyped, TheRecipeTypedGivesTheOpLogOfItsText) {
  for (bool data : {false, true}) {
    SCOPED_TRACE(data ? "data mode" : "timing mode");
    test::TempDir dir;
    std::string logs[2];
    for (int typed = 0; typed < 2; ++typed) {
      RunSpec spec;
      spec.config.data_mode = data;
      spec.oplog_path = dir.file(typed ? "typed.csv" : "text.csv");
      spec.launches = {{"merge", [typed](Tl& tl) {
                          const MergeTensors m = merge_tensors(tl);
                          for (int i = 0; i < 2; ++i) {
                            if (typed) {
                              softmax_merge(tl, m.s, m.v, m.st, m.x);
                              continue;
                            }
                            // The text, built here with the OpSpec builders from the recipe's steps.
                            std::vector<OpSpec> ops;
                            for (const MergeStep& st : softmax_merge_steps(m.s, m.st, m.x)) {
                              ops.push_back(st.binary ? math_op(st.op, OpScope::kPrologue, st.out, {st.a, st.b})
                                                      : math_op(st.op, OpScope::kPrologue, st.out, {st.a}));
                            }
                            ops.push_back(gemm_op(OpScope::kTile, m.st.o, m.x.p, m.v, {false, true}));
                            tl.composite("softmax_merge", std::move(ops), {m.st.l, m.st.o});
                          }
                        }}};
      const RunResult r = run_isolated(spec);
      ASSERT_TRUE(r.ok) << r.error;
      logs[typed] = test::read_file(spec.oplog_path);
    }
    EXPECT_GT(logs[0].size(), 100u);
    EXPECT_TRUE(logs[1] == logs[0]) << "typed:\n" << logs[1] << "\ntext:\n" << logs[0];
  }
}

}  // namespace
}  // namespace kb
