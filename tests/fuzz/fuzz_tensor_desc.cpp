// libFuzzer harness: the tensor descriptor decoder, kb::desc::decode_tensor
// (models/isa/descriptor.h), and the table's validation of what decodes
// (TensorTable::install). DecodeError and KernelError are the expected
// answers to bytes that are not a valid tensor. Bytes that decode must
// encode back to exactly themselves; anything else (a crash, a sanitizer
// report, another exception, a mismatch) is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "models/isa/descriptor.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static kb::TensorTable table(4u << 20);  // the default TCM size
  kb::TensorDesc d;
  try {
    d = kb::desc::decode_tensor(data, size);
  } catch (const kb::desc::DecodeError&) {
    return 0;
  }
  const auto again = kb::desc::encode_tensor(d, d.name);
  if (size != again.size() || std::memcmp(again.data(), data, size) != 0) std::abort();
  try {
    table.install(kb::regs::kTensorTable, d);
  } catch (const kb::KernelError&) {
  }
  return 0;
}

// libsystemc.so references sc_main; nothing here elaborates a simulation.
extern "C" int sc_main(int, char**) { return 0; }
