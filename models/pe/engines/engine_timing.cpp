#include "models/pe/engines/engine_timing.h"

#include <cstdio>
#include <string>

#include "models/isa/tensor_table.h"
#include "models/util/checked.h"

namespace kb {

namespace {

[[noreturn]] void too_many_cycles(const std::string& what) {
  throw KernelError(what + ": the cycle count does not fit in 64 bits");
}

}  // namespace

void cycles_overflow(const char* what) { too_many_cycles(what); }

uint64_t ceil_div_real(uint64_t bytes, double per_cycle) {
  const std::optional<uint64_t> c = ceil_to_u64(double(bytes) / per_cycle - 1e-9);
  if (!c) {
    char rate[32];
    std::snprintf(rate, sizeof rate, "%.17g", per_cycle);
    too_many_cycles(std::to_string(bytes) + " bytes at " + rate + " bytes per cycle");
  }
  return *c;
}

}  // namespace kb
