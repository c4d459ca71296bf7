// Simulated time in picoseconds, whatever the SystemC time resolution:
// every conversion between sc_time and ps in the model goes
// through ps_of() and from_ps(), never through sc_time::value() directly.
// They are exact integer arithmetic with the number of resolution ticks in
// sc_time(1, SC_PS), taken once (a double would lose exactness past 2^53
// ps). SystemC resolutions are powers of ten: 1 ps gives 1 tick per ps,
// 1 fs 1000. A resolution coarser than 1 ps cannot hold the model's times
// (whole ps) and is refused with std::invalid_argument on first use
// (building a Clock, models/pe/clock.h). In models/util so that models/trace
// can use it without including models/pe.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include <systemc>

namespace kb {

// A time past what sc_time can hold (or past 2^64 ps).
struct TimeOverflow : std::overflow_error {
  using std::overflow_error::overflow_error;
};

namespace detail {

inline uint64_t g_ticks_per_ps = 0;  // 0 until first asked for

[[gnu::noinline, gnu::cold]] inline uint64_t init_ticks_per_ps() {
  // 1 ps in ticks of the resolution, exactly; 0 when the resolution is
  // coarser (SystemC rounds it away). Fixes the resolution, as every sc_time.
  const uint64_t k = sc_core::sc_time(1, sc_core::SC_PS).value();
  if (k == 0) {
    throw std::invalid_argument("the SystemC time resolution is " +
                                sc_core::sc_get_time_resolution().to_string() +
                                ", coarser than 1 ps: the PE's clock edges are whole picoseconds "
                                "(set a resolution of 1 ps or finer with sc_set_time_resolution, "
                                "or keep the default of 1 ps)");
  }
  g_ticks_per_ps = k;
  return k;
}

}  // namespace detail

// Ticks of the SystemC time resolution in 1 ps: 1 at 1 ps, 1000 at 1 fs.
// Throws std::invalid_argument if the resolution is coarser than 1 ps.
inline uint64_t ticks_per_ps() {
  const uint64_t k = detail::g_ticks_per_ps;
  return k != 0 ? k : detail::init_ticks_per_ps();
}

// The latest time in ps that sc_time can hold: (2^64 - 1) / ticks_per_ps()
// (2^64 - 1 ps, about 213 days, at 1 ps; about 5 hours at 1 fs).
inline uint64_t max_ps() { return UINT64_MAX / ticks_per_ps(); }

namespace detail {

[[gnu::noinline]] inline uint64_t ps_of_ticks(uint64_t ticks) { return ticks / ticks_per_ps(); }

[[gnu::noinline]] inline sc_core::sc_time from_ps_scaled(uint64_t ps) {
  uint64_t ticks;
  if (__builtin_mul_overflow(ps, ticks_per_ps(), &ticks)) {
    throw TimeOverflow("simulated time " + std::to_string(ps) + " ps is past the simulator's limit of " +
                       std::to_string(max_ps()) + " ps (2^64 - 1 steps of " +
                       sc_core::sc_get_time_resolution().to_string() + ")");
  }
  return sc_core::sc_time::from_value(ticks);
}

}  // namespace detail

// A time in whole ps, rounded down (the model's own times are whole ps; only
// an outside initiator can add a finer one). Inline, one compare at 1 ps.
inline uint64_t ps_of(const sc_core::sc_time& t) {
  if (__builtin_expect(detail::g_ticks_per_ps == 1, 1)) return t.value();
  return detail::ps_of_ticks(t.value());
}

// ps as an sc_time. Throws TimeOverflow past max_ps().
inline sc_core::sc_time from_ps(uint64_t ps) {
  if (__builtin_expect(detail::g_ticks_per_ps == 1, 1)) return sc_core::sc_time::from_value(ps);
  return detail::from_ps_scaled(ps);
}

namespace detail {
// The instant the calendar runs while it looks ahead of SystemC's time
// (models/util/instant_calendar.h); null otherwise.
inline const sc_core::sc_time* g_calendar_now = nullptr;
}  // namespace detail

// The model's current time: sc_time_stamp(), or the instant the calendar
// runs ahead of it (models/util/instant_calendar.h, look-ahead). Inline (the
// scheduler asks for it every instant). Model code reads time only here.
inline const sc_core::sc_time& sim_now() {
  if (const sc_core::sc_time* t = detail::g_calendar_now) return *t;
  return sc_core::sc_get_curr_simcontext()->time_stamp();
}
// The current simulation time in ps; inline, unlike sc_time_stamp().
inline uint64_t now_ps() { return ps_of(sim_now()); }

}  // namespace kb
