// The bounds of libFuzzer's inline 8-bit coverage counters, for
// fuzz_replay's forked children to hand their coverage back. This file is
// compiled without coverage instrumentation: in an instrumented file the
// compiler declares these linker symbols itself, and a second declaration
// breaks the registration of the counters.
#include <cstddef>
#include <cstdint>

extern "C" {
extern uint8_t __start___sancov_cntrs[] __attribute__((weak));
extern uint8_t __stop___sancov_cntrs[] __attribute__((weak));
}

namespace kb::fuzz {

uint8_t* coverage_counters(size_t* size) {
  if (!__start___sancov_cntrs || !__stop___sancov_cntrs) {
    *size = 0;
    return nullptr;
  }
  *size = size_t(__stop___sancov_cntrs - __start___sancov_cntrs);
  return __start___sancov_cntrs;
}

}  // namespace kb::fuzz
