// The PE clock: costs live in cycles; this turns them into sc_time. Every
// module asks the PE's clock (pe.attrs.clock_freq_ghz) and none duplicates it
// (docs/conventions.md 3, docs/cost-model.md D3).
//
// Time is kept exactly. Edge N of the clock (cycles counted from
// time 0) is at
//     edge_ps(N) = round(N x 1000 / f) ps, halves rounded up,
// computed in integers, with f taken as the decimal it is written as (the
// shortest decimal that reads back as the same double: 0.7 GHz is 7/10 GHz,
// not the nearest binary fraction). Every PE delay is whole cycles starting
// on an edge, so a delay of n cycles from edge N ends exactly at edge N + n
// and rounding never accumulates: at 1.5 GHz, 3 cycles are 2000 ps and 3e9
// cycles 2 s exactly, while single cycles last 667 or 666 ps. When the period
// is a whole number of ps (1, 2, 0.5, 0.25 GHz, ...) every delay is simply
// n x period. A delay starting between edges (only an outside LT initiator
// can start one) lasts as long as one starting at the nearest edge.
//
// The frequency lies in [0.001, 1000] GHz: a period of at least 1 ps gives
// every edge its own ps. A time past the simulator's limit throws
// TimeOverflow; it never wraps or saturates silently. That limit is 2^64 - 1
// ticks of the SystemC time resolution: 2^64 - 1 ps (about 213 days) at
// 1 ps, (2^64 - 1) / 1000 ps (about 5 hours) at 1 fs.
//
// Time does not depend on the simulator's resolution: every
// conversion between sc_time and ps goes through ps_of() and from_ps()
// (models/util/sim_time.h). A resolution coarser than 1 ps cannot hold the
// model's edges: building a Clock then throws std::invalid_argument.
#pragma once

#include <cstdint>
#include <stdexcept>

#include <systemc>

#include "models/util/sim_time.h"

namespace kb {

// Exact period arithmetic needs more than 64 bits (GCC and clang).
__extension__ using Uint128 = unsigned __int128;

class Clock {
 public:
  static constexpr double kMinFreqGhz = 0.001;
  static constexpr double kMaxFreqGhz = 1000.0;

  // Throws std::invalid_argument for a frequency outside [kMinFreqGhz,
  // kMaxFreqGhz] (the configuration loader refuses those first), or for a
  // SystemC time resolution coarser than 1 ps.
  explicit Clock(double freq_ghz);

  // n cycles from now, as a delay.
  sc_core::sc_time cycles(uint64_t n) const { return cycles_from(sc_core::SC_ZERO_TIME, n); }
  // n cycles from `offset` after now: loosely timed targets add their time to
  // an annotated delay, and their cycles start where that delay ends.
  sc_core::sc_time cycles_from(const sc_core::sc_time& offset, uint64_t n) const {
    const uint64_t start = now_ps() + ps_of(offset);  // both below an edge time
    return from_ps(delay_ps(start, n));  // start + delay <= max_ps_: no overflow
  }

  // ps of a delay of n cycles starting at `start_ps` (pure; for tests too).
  uint64_t delay_ps(uint64_t start_ps, uint64_t n) const {
    if (den_ == 1) {  // a whole-ps period (1 GHz and the like): the fast path
      uint64_t d, end;
      if (__builtin_mul_overflow(n, q_, &d) || __builtin_add_overflow(start_ps, d, &end) ||
          end > max_ps_) {
        overflow(start_ps, n);
      }
      return d;
    }
    return edge_delay_ps(start_ps, n);
  }
  // Time of edge `cycle`: round(cycle x 1000 / f) ps. Throws TimeOverflow.
  uint64_t edge_ps(uint64_t cycle) const;
  // The edge nearest `ps` (exact for an edge's time, since the period is at
  // least 1 ps).
  uint64_t cycle_at(uint64_t ps) const;
  // The latest time a delay may end at: max_ps() when the clock was built.
  uint64_t max_ps() const { return max_ps_; }

 private:
  uint64_t edge_delay_ps(uint64_t start_ps, uint64_t n) const;
  [[noreturn]] void overflow(uint64_t start_ps, uint64_t n) const;

  // The period is num_ / den_ ps, in lowest terms; num_ may exceed 64 bits
  // (f = 0.0010000000000000002 GHz gives 10^22 / (10^16 + 2)).
  Uint128 num_ = 0;
  uint64_t den_ = 1;
  uint64_t q_ = 0, r_ = 0;  // num_ / den_ and num_ % den_
  double freq_ghz_ = 0;
  uint64_t max_ps_ = 0;
};

}  // namespace kb
