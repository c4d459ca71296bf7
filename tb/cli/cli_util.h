// What every part of the kernbench CLI shares: its exit statuses, a user's
// value shown in a message, and the outputs of the CLI's own process.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "models/util/output_file.h"
#include "tb/run/output.h"

namespace kb::cli {

constexpr int kExitRunFailed = 1;
constexpr int kExitBadInput = 2;

// A user's value in a message, cut short and on one line (control
// characters and bytes from 0x7f escaped as \xNN).
std::string shown(const std::string& s);

// JSON for the user's files: invalid UTF-8 in a name is replaced, not thrown on.
std::string dump(const nlohmann::json& j);

// The outputs of this process (--json, --csv, goldens) are opened before
// any run (tb/run/output.h): a path that cannot be written fails at once
// (exit 1).
using kb::open_output;

}  // namespace kb::cli
