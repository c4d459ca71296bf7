// The PE clock: costs live in cycles; this turns them into sc_time. Every
// module asks the PE's clock (pe.attrs.clock_freq_ghz) and none duplicates it
// (STYLE.md 3, ADR-0064 D3).
#pragma once

#include <cstdint>

#include <systemc>

namespace kb {

class Clock {
 public:
  // The period is rounded to the SystemC time resolution (1 ps).
  explicit Clock(double freq_ghz)
      : period_(sc_core::sc_time(1.0 / freq_ghz, sc_core::SC_NS)) {}
  const sc_core::sc_time& period() const { return period_; }
  // Exact while n x period stays below 2^53 ps (about 2.5 hours); inline,
  // unlike sc_time::from_value, because every stage and dispatch asks.
  sc_core::sc_time cycles(uint64_t n) const {
    sc_core::sc_time t = period_;
    t *= double(n);
    return t;
  }

 private:
  sc_core::sc_time period_;
};

// The current simulation time in ps; inline, unlike sc_time_stamp().
inline uint64_t now_ps() { return sc_core::sc_get_curr_simcontext()->time_stamp().value(); }

}  // namespace kb
