// Untrusted input files (config YAML, command streams): bounded, regular,
// text: a device, a FIFO, a directory or an endless file is a clear
// error, never a hang or unbounded memory.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace kb {

struct InputFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Size limits (bytes). A full configuration is about 2 KiB; a recorded
// command stream of a long run is tens of MB.
inline constexpr uint64_t kMaxConfigFileBytes = 1u << 20;            // 1 MiB
inline constexpr uint64_t kMaxStreamFileBytes = uint64_t(1) << 30;   // 1 GiB

// Reads the whole of `path`, which must be a regular file of at most
// `max_bytes` bytes with no NUL byte. `what` names the file's role in
// messages ("config file", "command stream"). Opening never blocks (a FIFO
// is rejected, not waited on). Throws InputFileError:
//   "cannot open config file 'x': No such file or directory"
//   "config file 'x': not a regular file (a character device)"
//   "config file 'x': larger than the limit of 1048576 bytes"
//   "x:3: NUL byte in config file (expected text)"
std::string read_input_file(const std::string& path, uint64_t max_bytes, const char* what);

}  // namespace kb
