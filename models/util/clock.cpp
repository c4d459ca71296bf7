#include "models/util/clock.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <string>

namespace kb {

namespace {

Uint128 gcd(Uint128 a, Uint128 b) {
  while (b != 0) {
    const Uint128 t = a % b;
    a = b;
    b = t;
  }
  return a;
}

std::string shortest(double v) {
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

Uint128 pow10(int e) {
  Uint128 p = 1;
  for (int i = 0; i < e; ++i) p *= 10;
  return p;
}

}  // namespace

Clock::Clock(double freq_ghz) : freq_ghz_(freq_ghz), max_ps_(kb::max_ps()) {
  if (!(freq_ghz >= kMinFreqGhz && freq_ghz <= kMaxFreqGhz)) {  // also NaN
    throw std::invalid_argument("clock frequency " + shortest(freq_ghz) +
                                " GHz is outside [0.001, 1000] GHz (a period of 1 ps to 1 us)");
  }
  // f = digits x 10^exp10, from the shortest text that reads back as f
  // (at most 17 significant digits).
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, freq_ghz, std::chars_format::scientific);
  uint64_t digits = 0;
  int exp10 = 0;
  const char* p = buf;
  for (; p != res.ptr && *p != 'e'; ++p) {
    if (*p == '.') continue;
    digits = digits * 10 + uint64_t(*p - '0');
    if (p > buf) --exp10;  // each digit after the first scales by 1/10
  }
  int e = 0;
  if (p != res.ptr) std::from_chars(p + 1 + (p[1] == '+'), res.ptr, e);
  exp10 += e;
  // Period = 1000 / f ps = 1000 / (digits x 10^exp10). With f in range,
  // exp10 is at least -19 and digits below 10^17: num below 10^22.
  Uint128 num = 1000, den = digits;
  if (exp10 < 0) num *= pow10(-exp10);
  else den *= pow10(exp10);  // f <= 1000: den <= 1000
  const Uint128 g = gcd(num, den);
  num /= g;
  den /= g;
  num_ = num;
  den_ = uint64_t(den);
  q_ = uint64_t(num / den);  // at most 10^6 (f >= 0.001 GHz)
  r_ = uint64_t(num % den);
}

uint64_t Clock::edge_ps(uint64_t cycle) const {
  // cycle x num / den = cycle x q + cycle x r / den, rounded half up; every
  // product stays below 2^122.
  const Uint128 whole = Uint128(cycle) * q_;
  const Uint128 frac = (2 * Uint128(cycle) * r_ + den_) / (2 * Uint128(den_));
  const Uint128 t = whole + frac;
  if (t > max_ps_) overflow(0, cycle);
  return uint64_t(t);
}

uint64_t Clock::cycle_at(uint64_t ps) const {
  // round(ps / period) = floor((2 x ps x den + num) / (2 x num)).
  return uint64_t((2 * Uint128(ps) * den_ + num_) / (2 * num_));
}

uint64_t Clock::edge_delay_ps(uint64_t start_ps, uint64_t n) const {
  if (n == 0) return 0;
  const uint64_t first = cycle_at(start_ps);
  uint64_t last, end;
  if (__builtin_add_overflow(first, n, &last)) overflow(start_ps, n);
  const uint64_t d = edge_ps(last) - edge_ps(first);
  if (__builtin_add_overflow(start_ps, d, &end) || end > max_ps_) overflow(start_ps, n);
  return d;
}

void Clock::overflow(uint64_t start_ps, uint64_t n) const {
  // The limit is the simulator's: 2^64 - 1 ticks of its time resolution.
  const std::string limit =
      max_ps_ == std::numeric_limits<uint64_t>::max()
          ? "2^64 - 1 ps (about 213 days)"
          : std::to_string(max_ps_) + " ps (2^64 - 1 steps of the time resolution, " +
                sc_core::sc_get_time_resolution().to_string() + ")";
  throw TimeOverflow("simulated time overflows: " + std::to_string(n) + " cycles at " +
                     shortest(freq_ghz_) + " GHz from " + std::to_string(start_ps) + " ps end past " +
                     limit);
}

}  // namespace kb
