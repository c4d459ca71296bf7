// The PE clock keeps time exactly: edge N is at round(N x 1000 /
// f) ps, halves up, so delays of whole cycles never accumulate rounding.
// Expected values come from hand-reduced periods (1.5 GHz: 2000/3 ps), not
// from the clock's own arithmetic.
#include "models/util/clock.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "models/isa/cost_model.h"
#include "tests/sim_util.h"

namespace kb {
namespace {

using testing::HasSubstr;

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

// round(n x num / den), halves up, in 128 bits: the reference.
uint64_t rounded(uint64_t n, Uint128 num, uint64_t den) {
  return uint64_t((2 * Uint128(n) * num + den) / (2 * Uint128(den)));
}

TEST(Clock, OneAndAHalfGigahertzIsExact) {
  const Clock c(1.5);  // period 2000/3 ps
  EXPECT_EQ(c.edge_ps(1), 667u);
  EXPECT_EQ(c.edge_ps(2), 1333u);
  EXPECT_EQ(c.edge_ps(3), 2000u);
  EXPECT_EQ(c.delay_ps(0, 3), 2000u);
  EXPECT_EQ(c.edge_ps(3000000000u), 2000000000000u);  // 3e9 cycles: 2 s exactly
  EXPECT_EQ(c.delay_ps(0, 3000000000u), 2000000000000u);
  // A delay depends on where it starts, and ends on an edge.
  EXPECT_EQ(c.delay_ps(667, 1), 666u);
  EXPECT_EQ(c.delay_ps(1333, 1), 667u);
  EXPECT_EQ(c.delay_ps(1333, 3), 2000u);
  // One cycle at a time from 0, 3000 times: no drift (whole-ps rounding of
  // the period gave 3000 x 667 = 2001000).
  uint64_t t = 0;
  for (int i = 0; i < 3000; ++i) t += c.delay_ps(t, 1);
  EXPECT_EQ(t, 2000000u);
}

TEST(Clock, DecimalFrequenciesAreTakenAsWritten) {
  // 0.7 GHz is 10000/7 ps, not 1000 / 0.6999999999999999556 ps.
  const Clock c07(0.7);
  EXPECT_EQ(c07.edge_ps(7), 10000u);
  EXPECT_EQ(c07.edge_ps(7000000000000000u), 10000000000000000000u);
  for (uint64_t n : {1u, 2u, 3u, 1000001u, 123456789u}) {
    EXPECT_EQ(c07.edge_ps(n), rounded(n, 10000, 7)) << n;
  }
  const Clock c33(3.3);  // 10000/33 ps
  for (uint64_t n : {1u, 5u, 33u, 1000u, 987654321u}) {
    EXPECT_EQ(c33.edge_ps(n), rounded(n, 10000, 33)) << n;
  }
  // 1/3 GHz reads back as 0.3333333333333333: 10^19 / 3333333333333333 ps.
  const Clock third(1.0 / 3.0);
  EXPECT_EQ(third.edge_ps(3333333333333333u), 10000000000000000000u);
  EXPECT_EQ(third.edge_ps(1), 3000u);
  // 17 significant digits at the lowest frequency: 10^22 / (10^16 + 2) ps.
  const Clock slowest(0.0010000000000000002);
  EXPECT_EQ(slowest.edge_ps(1), 1000000u);
  EXPECT_EQ(slowest.edge_ps(5000000000000u), 4999999999999999000u);
}

TEST(Clock, HalvesRoundUp) {
  const Clock c(400.0);  // 2.5 ps
  EXPECT_EQ(c.edge_ps(1), 3u);
  EXPECT_EQ(c.edge_ps(2), 5u);
  EXPECT_EQ(c.edge_ps(3), 8u);
  EXPECT_EQ(c.delay_ps(3, 1), 2u);
  EXPECT_EQ(c.delay_ps(5, 1), 3u);
}

// A whole-ps period keeps the old n x period, whatever the start.
TEST(Clock, WholePicosecondPeriodsAreMultiples) {
  struct Case {
    double ghz;
    uint64_t period;
  };
  for (const Case& k : {Case{1.0, 1000}, Case{2.0, 500}, Case{0.25, 4000}, Case{1000.0, 1},
                        Case{0.001, 1000000}}) {
    const Clock c(k.ghz);
    for (uint64_t start : {0u, 1u, 123u, 999999u}) {
      for (uint64_t n : {0u, 1u, 7u, 1000000u}) {
        EXPECT_EQ(c.delay_ps(start, n), n * k.period) << k.ghz << " GHz from " << start;
      }
    }
  }
}

TEST(Clock, CycleAtInvertsEveryEdge) {
  for (double ghz : {1.5, 0.7, 3.3, 400.0, 999.9, 1000.0, 0.001, 1.0 / 3.0}) {
    const Clock c(ghz);
    uint64_t prev = 0;
    for (uint64_t n = 0; n < 5000; ++n) {
      const uint64_t t = c.edge_ps(n);
      if (n > 0) {
        EXPECT_GT(t, prev) << ghz << " GHz, edge " << n;  // distinct ps
      }
      EXPECT_EQ(c.cycle_at(t), n) << ghz << " GHz";
      prev = t;
    }
    for (uint64_t n : {uint64_t(1) << 40, (uint64_t(1) << 44) + 12345}) {
      EXPECT_EQ(c.cycle_at(c.edge_ps(n)), n) << ghz << " GHz";
    }
  }
}

TEST(Clock, FrequencyOutsideItsBoundsIsRefused) {
  EXPECT_NO_THROW(Clock(0.001));
  EXPECT_NO_THROW(Clock(1000.0));
  for (double bad : {0.0, -1.0, 0.00099, 1000.0000001, 1e9, std::nan(""),
                     std::numeric_limits<double>::infinity()}) {
    EXPECT_THROW(Clock{bad}, std::invalid_argument) << bad;
  }
  try {
    Clock c(1e9);
    ADD_FAILURE();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "clock frequency 1e+09 GHz is outside [0.001, 1000] GHz (a period of 1 ps to 1 us)");
  }
}

// Cycles of 2^64 - 1 reported 2^63 ps (a float-to-int overflow).
TEST(Clock, TimePast64BitsThrows) {
  const Clock c1(1.0);
  EXPECT_THROW(c1.delay_ps(0, kMax), TimeOverflow);
  EXPECT_THROW(c1.delay_ps(kMax - 999, 1), TimeOverflow);
  EXPECT_EQ(c1.delay_ps(kMax - 1000, 1), 1000u);
  const Clock c15(1.5);
  EXPECT_THROW(c15.edge_ps(kMax), TimeOverflow);
  EXPECT_THROW(c15.delay_ps(0, kMax), TimeOverflow);
  // The last edge that fits: the largest n with round(n x 2000/3) < 2^64.
  const uint64_t last = 27670116110564327u;
  EXPECT_EQ(c15.edge_ps(last), 18446744073709551333u);
  EXPECT_THROW(c15.edge_ps(last + 1), TimeOverflow);
  const Clock fastest(1000.0);
  EXPECT_EQ(fastest.edge_ps(kMax), kMax);
  try {
    c1.delay_ps(5, kMax);
    ADD_FAILURE();
  } catch (const TimeOverflow& e) {
    EXPECT_STREQ(e.what(), "simulated time overflows: 18446744073709551615 cycles at 1 GHz from "
                           "5 ps end past 2^64 - 1 ps (about 213 days)");
  }
}

// cost_model.cpp: a charged cycle count beyond 64 bits is an error, not UB.
TEST(CostModel, ChargedCyclesPast64BitsThrow) {
  CostModelConfig cm;
  cm.byte_cycles_recip = 1e300;  // beyond the loader's bound: only from code
  DmaReadCmd read;
  const Command cmd = read;
  try {
    dispatch_cost(cmd, cm);
    ADD_FAILURE() << "expected std::overflow_error";
  } catch (const std::overflow_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("dispatch cost of DmaReadCmd does not fit in 64 bits: 8 + "));
    EXPECT_THAT(e.what(), HasSubstr("(pe.attrs.pe_cost_model.byte_cycles_recip)"));
  }
}

// ---- in a simulation --------------------------------------------------------

// TCM only: no cycle count depends on the clock (HBM's bytes per cycle do).
void tcm_kernel(Tl& tl) {
  const Tensor a = tl.tcm("a", 64, 64, Dtype::kFp32);
  const Tensor b = tl.tcm("b", 64, 64, Dtype::kFp32);
  const Tensor c = tl.tcm("c", 64, 64, Dtype::kFp32);
  test::init(tl, {a, b});
  tl.exp(c, a);
  tl.cycles(7);
  tl.dot(c, a, b);
  tl.add(b, c, a);
  tl.copy(a, b);
}

// At 1 GHz a time in ps is 1000 x its cycle; at 1.5 GHz the same cycle
// must be at round(cycle x 2000/3) ps, record by record.
TEST(ClockInSimulation, OneAndAHalfGigahertzRunIsTheSameCyclesExactly) {
  PeConfig at1, at15;
  at15.clock_freq_ghz = 1.5;
  const RunResult r1 = test::run_kernel(tcm_kernel, at1);
  const RunResult r15 = test::run_kernel(tcm_kernel, at15);
  ASSERT_TRUE(r1.ok && r15.ok);
  ASSERT_EQ(r1.records.size(), r15.records.size());
  ASSERT_GT(r1.records.size(), 5u);
  for (size_t i = 0; i < r1.records.size(); ++i) {
    const OpRecord& a = r1.records[i];
    const OpRecord& b = r15.records[i];
    ASSERT_EQ(a.start_ps % 1000, 0u);
    ASSERT_EQ(a.end_ps % 1000, 0u);
    EXPECT_EQ(b.start_ps, rounded(a.start_ps / 1000, 2000, 3)) << "record " << i;
    EXPECT_EQ(b.end_ps, rounded(a.end_ps / 1000, 2000, 3)) << "record " << i;
  }
  const uint64_t cycles = r1.launches.at(0).latency_ps() / 1000;
  EXPECT_EQ(r15.launches.at(0).latency_ps(), rounded(cycles, 2000, 3));
  // Dispatch totals are the op log's, and the charged cycles as time.
  uint64_t dispatch = 0, cpu_cycles = 0;
  for (const OpRecord& rec : r15.records) {
    if (rec.kind == RecordKind::kDispatch) dispatch += rec.end_ps - rec.start_ps;
    if (rec.kind == RecordKind::kCpuCycles) cpu_cycles += rec.end_ps - rec.start_ps;
  }
  EXPECT_EQ(r15.launches.at(0).dispatch_ps, dispatch);
  EXPECT_EQ(r15.launches.at(0).cpu_cycles_ps, cpu_cycles);
  EXPECT_EQ(r1.launches.at(0).cpu_cycles_ps, 7000u);
}

// tl.cycles(2^63) used to end at 2^63 ps without complaint.
TEST(ClockInSimulation, TimeOverflowFailsTheRun) {
  RunSpec spec;
  spec.launches = {{"huge", [](Tl& tl) { tl.cycles(uint64_t(1) << 63); }}};
  const RunResult r = run_isolated(spec);
  EXPECT_FALSE(r.ok);
  EXPECT_THAT(r.error, HasSubstr("simulated time overflows: 9223372036854775808 cycles at 1 GHz "
                                 "from 0 ps end past 2^64 - 1 ps (about 213 days)"));
}

}  // namespace
}  // namespace kb
