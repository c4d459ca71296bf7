// AddressSanitizer and SystemC's coroutines (the sanitizer build of .ci/run).
//
// Debian's libsystemc announces its coroutine switches to ASan, but after a
// switch back to the simulator's own (main) stack ASan still takes the last
// coroutine's stack for the current one. A throw from an SC_METHOD, which
// runs on the main stack, then has its __asan_handle_no_return ignored
// ("False positive error reports may follow"), and the frames it unwinds
// stay poisoned: the next frames built there are reported as
// stack-use-after-scope. A catch block in an SC_METHOD calls this first:
// everything below its frame was unwound and holds no live object. So does
// PE_CPU's catch of a kernel's exception, on its thread's coroutine stack
// (a shallow frame: 256 KiB below it stays inside the stack).
#pragma once

#include <cstdint>

// KB_ASAN: built with AddressSanitizer. g++ defines __SANITIZE_ADDRESS__;
// clang 14 (the fuzz build) does not, it answers __has_feature. Testing the
// macro alone left the fuzz build without these workarounds: stale poison
// from a fault thrown in a method was reported at teardown (seed
// ipc_recv_size_mismatch once the scheduler had an over-aligned member).
#if defined(__SANITIZE_ADDRESS__)
#define KB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KB_ASAN 1
#endif
#endif

#if defined(KB_ASAN)
#include <sanitizer/asan_interface.h>
#endif

namespace kb {

inline void asan_forget_unwound_frames() {
#if defined(KB_ASAN)
  char here;
  constexpr uintptr_t kBytes = uintptr_t(1) << 18;  // the main stack is 8 MiB
  const uintptr_t below = reinterpret_cast<uintptr_t>(&here) - kBytes;
  ASAN_UNPOISON_MEMORY_REGION(reinterpret_cast<void*>(below), kBytes);
#endif
}

}  // namespace kb
