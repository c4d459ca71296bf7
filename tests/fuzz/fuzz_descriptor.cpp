// libFuzzer harness: the binary descriptor decoder, kb::desc::decode
// (models/isa/descriptor.h). DecodeError is the expected answer to bytes
// that are not a descriptor. Bytes that decode must encode back to exactly
// themselves (the layout is a bijection on valid descriptors); anything
// else (a crash, a sanitizer report, another exception, a mismatch) is a
// finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "models/isa/descriptor.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kb::desc::Decoded d;
  try {
    d = kb::desc::decode(data, size);
  } catch (const kb::desc::DecodeError&) {
    return 0;
  }
  // A decoded command re-encodes (EncodeError here is a finding too).
  const std::vector<uint8_t> again = kb::desc::encode(d.cmd, d.completion_id);
  if (again.size() != size || std::memcmp(again.data(), data, size) != 0) std::abort();
  return 0;
}

// libsystemc.so references sc_main; nothing here elaborates a simulation.
extern "C" int sc_main(int, char**) { return 0; }
