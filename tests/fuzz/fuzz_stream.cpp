// libFuzzer harness: the command-stream parser, kb::parse_command_stream
// (tb/replay/command_stream.h). StreamError (and KernelError or InputFileError,
// should the parser validate more) are the expected answers to bad input; a
// crash, a sanitizer report, another exception, a hang or unbounded memory
// is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "models/isa/tensor_table.h"
#include "models/util/input_file.h"
#include "tb/replay/command_stream.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)kb::parse_command_stream(text, "fuzz.stream");
  } catch (const kb::StreamError&) {
  } catch (const kb::KernelError&) {
  } catch (const kb::InputFileError&) {
  }
  return 0;
}

// libsystemc.so references sc_main; nothing here elaborates a simulation.
extern "C" int sc_main(int, char**) { return 0; }
