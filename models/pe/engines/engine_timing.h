// What every engine's timing formula is built from, in cycles of the PE
// clock: checked arithmetic that throws KernelError when a cycle count does
// not fit in 64 bits (never a wrapped figure). Each engine's own
// formula lives with the engine (pe_dma.h, pe_gemm.h, pe_math.h,
// pe_tcm.h) and an engine module annotates exactly its formula's cycles
// (StageEngine::cycles_of). Pure functions, so tests check stage durations
// without a simulation. Dispatch cost never enters
// here (docs/cost-model.md D5, TR5).
#pragma once

#include <cstdint>


namespace kb {

// Without overflow for any a (a + b - 1 could wrap).
inline uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }
// ceil(bytes / per_cycle).
uint64_t ceil_div_real(uint64_t bytes, double per_cycle);
// Throws KernelError: the cycle count of formula `what` does not fit in 64
// bits.
[[noreturn, gnu::cold]] void cycles_overflow(const char* what);
// a + b and a x b cycles; `what` names the formula in the error. Inline:
// every stage's formula runs them.
inline uint64_t cycles_add(uint64_t a, uint64_t b, const char* what) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) cycles_overflow(what);
  return r;
}
inline uint64_t cycles_mul(uint64_t a, uint64_t b, const char* what) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) cycles_overflow(what);
  return r;
}

}  // namespace kb
