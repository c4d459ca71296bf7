// An output file of a run or of the CLI's own process, opened before the
// work that writes it, so that a path that cannot be written fails at once
// (models/util/output_file.h: written to a temporary, moved into place by
// commit(), removed when the work ends without it).
#pragma once

#include <memory>
#include <string>

#include "models/util/output_file.h"

namespace kb {

// Null when not asked for (an empty path).
inline std::unique_ptr<OutputFile> open_output(const std::string& path, const char* what) {
  return path.empty() ? nullptr : std::make_unique<OutputFile>(path, what);
}

}  // namespace kb
