// What every part of the kernbench CLI shares: its exit statuses, a user's
// value shown in a message, and the outputs of the CLI's own process.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/util/output_file.h"
#include "tb/run/output.h"

namespace kb::cli {

constexpr int kExitRunFailed = 1;
constexpr int kExitBadInput = 2;

// A user's value in a message, cut short and on one line (control
// characters and bytes from 0x7f escaped as \xNN).
std::string shown(const std::string& s);
// A message from outside the process (a point file's error) as one safe
// line for a terminal: control characters, DEL and bytes that are not UTF-8
// escaped as \xNN, C1 controls (U+0080..U+009F) as \u00NN, other UTF-8
// kept; cut after about `max` bytes, saying the full length. A run's own
// error (a deadlock naming every blocked PE) is given no cap.
constexpr size_t kTerminalSafeMax = 1000;
std::string terminal_safe(const std::string& s, size_t max = kTerminalSafeMax);

// JSON for the user's files: invalid UTF-8 in a name is replaced, not thrown on.
std::string dump(const nlohmann::json& j);

// The outputs of this process (--json, --csv, goldens) are opened before
// any run (tb/run/output.h): a path that cannot be written fails at once
// (exit 1).
using kb::open_output;

// A file a command line names: its option ("--trace"), the path, and
// whether the command writes it.
struct PathUse {
  std::string option;
  std::string path;  // empty: not given
  bool output = true;
};
// Bad input (exit 2): two outputs on one file, or an output on a file the
// command reads, so that no output is lost or an input overwritten.
// Files are the same when their device and inode are (an existing file,
// through any symlink or hard link) or their resolved paths are (a file not
// there yet). Character devices (/dev/null, /dev/stdout) may be shared.
struct PathClash : std::runtime_error {
  using std::runtime_error::runtime_error;
};
void check_distinct_paths(const std::vector<PathUse>& uses);

}  // namespace kb::cli
