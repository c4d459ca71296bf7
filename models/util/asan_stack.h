// AddressSanitizer and SystemC's coroutines (the sanitizer build of .ci/run).
//
// Debian's libsystemc announces its coroutine switches to ASan, but after a
// switch back to the simulator's own (main) stack ASan still takes the last
// coroutine's stack for the current one. A throw from an SC_METHOD, which
// runs on the main stack, then has its __asan_handle_no_return ignored
// ("False positive error reports may follow"), and the frames it unwinds
// stay poisoned: the next frames built there are reported as
// stack-use-after-scope. A catch block in an SC_METHOD calls this first:
// everything below its frame was unwound and holds no live object.
#pragma once

#include <cstdint>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

namespace kb {

inline void asan_forget_unwound_frames() {
#if defined(__SANITIZE_ADDRESS__)
  char here;
  constexpr uintptr_t kBytes = uintptr_t(1) << 18;  // the main stack is 8 MiB
  const uintptr_t below = reinterpret_cast<uintptr_t>(&here) - kBytes;
  ASAN_UNPOISON_MEMORY_REGION(reinterpret_cast<void*>(below), kBytes);
#endif
}

}  // namespace kb
