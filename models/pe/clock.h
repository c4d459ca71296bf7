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
  sc_core::sc_time cycles(uint64_t n) const {
    return sc_core::sc_time::from_value(period_.value() * n);
  }

 private:
  sc_core::sc_time period_;
};

}  // namespace kb
