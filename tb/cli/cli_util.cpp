#include "tb/cli/cli_util.h"

#include <climits>
#include <cstdlib>
#include <sys/stat.h>

namespace kb::cli {

std::string shown(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size() && i < 40; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += char(c);
    } else {
      static const char kHex[] = "0123456789abcdef";
      out += std::string("\\x") + kHex[c >> 4] + kHex[c & 15];
    }
  }
  return s.size() <= 40 ? out : out + "... (" + std::to_string(s.size()) + " characters)";
}

std::string terminal_safe(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (const char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) {
      static const char kHex[] = "0123456789abcdef";
      out += std::string("\\x") + kHex[c >> 4] + kHex[c & 15];
    } else {
      out += ch;
    }
  }
  return out;
}

std::string dump(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace kb::cli

namespace kb::cli {

namespace {

// What names a file for the comparison: "dev:ino" when it exists, else its
// resolved folder and its name; "" for a character device.
std::string file_identity(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISCHR(st.st_mode)) return "";
    return "inode " + std::to_string(uint64_t(st.st_dev)) + ":" + std::to_string(uint64_t(st.st_ino));
  }
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  char resolved[PATH_MAX];
  if (::realpath(dir.c_str(), resolved) == nullptr) return "path " + path;  // opening it will say why
  return "path " + std::string(resolved) + "/" + name;
}

}  // namespace

void check_distinct_paths(const std::vector<PathUse>& uses) {
  std::vector<std::string> ids(uses.size());
  for (size_t i = 0; i < uses.size(); ++i)
    if (!uses[i].path.empty()) ids[i] = file_identity(uses[i].path);
  for (size_t i = 0; i < uses.size(); ++i) {
    if (ids[i].empty()) continue;
    for (size_t j = i + 1; j < uses.size(); ++j) {
      if (ids[j] != ids[i] || (!uses[i].output && !uses[j].output)) continue;
      const PathUse& a = uses[i];
      const PathUse& b = uses[j];
      const bool both = a.output && b.output;
      throw PathClash(a.option + " '" + shown(a.path) + "' and " + b.option + " '" + shown(b.path) +
                      "' are one file: " +
                      (both ? "two outputs would overwrite each other" : "the output would overwrite the input") +
                      "; give each its own path");
    }
  }
}

}  // namespace kb::cli
