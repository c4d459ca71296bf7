// CounterHistory: the step function of a counter told every value it takes
// (PE_SCHEDULER's occupancy for a trace: no signal, no
// process), and CounterProbe, the same history of a signal. Told the same
// values, the two give the same samples.
#include "models/trace/counter_probe.h"

#include <gtest/gtest.h>

#include <systemc>
#include <utility>
#include <vector>

namespace kb {
namespace {

using Samples = std::vector<std::pair<uint64_t, uint32_t>>;

Samples pairs(const std::vector<CounterSample>& v) {
  Samples out;
  for (const CounterSample& s : v) out.emplace_back(s.time_ps, s.value);
  return out;
}

TEST(CounterHistory, KeepsTheLastValueOfATimeStepAndDropsNonChanges) {
  CounterHistory h(5);
  h.observe(10, 6);
  h.observe(10, 7);  // the same time step: the last value stands
  h.observe(20, 7);  // no change
  h.observe(30, 8);
  h.observe(30, 7);  // back to the last final value: no change at 30
  h.observe(40, 2);
  EXPECT_EQ(pairs(h.samples()), (Samples{{0, 5}, {10, 7}})) << "40's sample is not final yet";
  h.flush();
  EXPECT_EQ(pairs(h.samples()), (Samples{{0, 5}, {10, 7}, {40, 2}}));
  h.flush();  // idempotent
  EXPECT_EQ(h.samples().size(), 3u);
}

TEST(CounterHistory, AValueAtTimeZeroReplacesTheInitialOne) {
  CounterHistory h(0);
  h.observe(0, 3);
  h.observe(5, 3);
  h.flush();
  EXPECT_EQ(pairs(h.samples()), (Samples{{0, 3}}));
}

TEST(CounterHistory, TheSinkGetsEachSampleWhenFinalEvenWhenNotKept) {
  Samples sunk;
  CounterHistory h(1, /*keep=*/false, [&](const CounterSample& s) { sunk.emplace_back(s.time_ps, s.value); });
  h.observe(7, 2);
  EXPECT_EQ(sunk, (Samples{{0, 1}}));
  h.observe(9, 3);
  EXPECT_EQ(sunk, (Samples{{0, 1}, {7, 2}}));
  h.flush();
  EXPECT_EQ(sunk, (Samples{{0, 1}, {7, 2}, {9, 3}}));
  EXPECT_TRUE(h.samples().empty());
}

// A thread writes a signal through several delta cycles and time steps,
// with values that come back within a step; a CounterProbe watches the
// signal, a CounterHistory is told every write. Same samples.
SC_MODULE(Writer) {
  sc_core::sc_signal<uint32_t> sig{"sig"};
  CounterHistory history{0};
  SC_CTOR(Writer) { SC_THREAD(run); }
  void write(uint32_t v) {
    sig.write(v);
    history.observe(uint64_t(sc_core::sc_time_stamp().value()), v);  // 1 ps resolution
  }
  void run() {
    const std::vector<std::vector<uint32_t>> steps = {
        {1}, {2, 3}, {3}, {4, 3}, {5, 6, 5}, {0}, {0, 7, 0}, {9}};
    for (const auto& deltas : steps) {
      wait(10, sc_core::SC_NS);
      for (uint32_t v : deltas) {
        write(v);
        wait(sc_core::SC_ZERO_TIME);
      }
    }
    // Two writes in one delta cycle: the signal takes the last.
    wait(10, sc_core::SC_NS);
    write(4);
    write(9);  // back to 9: no change at 90 ns
    wait(10, sc_core::SC_NS);
    write(5);
    write(6);
  }
};

TEST(CounterHistory, EqualsACounterProbeOnTheSignalItWrites) {
  Writer w("writer");
  CounterProbe probe("probe", w.sig);
  sc_core::sc_start();
  probe.flush();
  w.history.flush();
  EXPECT_EQ(pairs(w.history.samples()), pairs(probe.samples()));
  EXPECT_EQ(pairs(w.history.samples()),
            (Samples{{0, 0}, {10000, 1}, {20000, 3}, {50000, 5}, {60000, 0}, {80000, 9}, {100000, 6}}))
      << "30, 40, 70 and 90 ns end where they began";
}

}  // namespace
}  // namespace kb
