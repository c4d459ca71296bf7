// Checked arithmetic for sizes, spans and cycle counts computed from user
// input: overflow is an error, never a silently wrong figure.
#pragma once

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>

namespace kb {

// a x b, or nullopt when it does not fit in 64 bits.
inline std::optional<uint64_t> checked_mul(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// a + b, or nullopt when it does not fit in 64 bits.
inline std::optional<uint64_t> checked_add(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// The product of every factor, or nullopt on overflow.
inline std::optional<uint64_t> checked_product(std::initializer_list<uint64_t> factors) {
  uint64_t r = 1;
  for (uint64_t f : factors) {
    if (__builtin_mul_overflow(r, f, &r)) return std::nullopt;
  }
  return r;
}

// x as an unsigned 64-bit integer when it is finite, >= 0 and < 2^64 (after
// truncation toward zero); nullopt otherwise. A plain cast of such a double
// is undefined behaviour.
inline std::optional<uint64_t> to_u64(double x) {
  if (!(x >= 0.0) || !(x < 18446744073709551616.0)) return std::nullopt;  // also NaN
  return static_cast<uint64_t>(x);
}

// ceil(x) as uint64_t, or nullopt (see to_u64). Below 2^53 a cast and a
// compare give the same whole number without a libm call: the dispatch cost
// and every transfer's cycles come through here.
inline std::optional<uint64_t> ceil_to_u64(double x) {
  if (x >= 0.0 && x < 9007199254740992.0) {  // 2^53: every double below it casts exactly
    const uint64_t floor = uint64_t(x);
    return floor + (double(floor) < x ? 1 : 0);
  }
  return to_u64(std::ceil(x));
}

}  // namespace kb
