// The text of a command stream's fields (tb/replay/command_stream.h, the
// format): names with %XX escapes so that a name is always exactly one
// field, extras and floats in the shortest text that reads back exactly.
// Shared by the recorder and the parser.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "models/isa/commands.h"

namespace kb::cmdstream {

inline constexpr const char* kHeader = "# kernbench command stream v1";

std::string encode(const std::string& s, bool extra_name = false);
// `out` and `extra` are field keys of an `op` line, so an operand with that
// name has its first byte escaped (the loader compares keys before decoding).
std::string encode_operand(const std::string& s);
// False on a bad %XX escape.
bool decode(const std::string& s, std::string* out);

std::string float_text(double v);  // shortest exact form (std::to_chars)
std::string extras_text(const Extras& extras);  // " extra=..." per extra

// Long values are cut short in messages (a 10 MB token is not echoed whole).
std::string shorten(std::string_view s, size_t max = 200);

}  // namespace kb::cmdstream
