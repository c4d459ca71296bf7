#include "tb/cli/cli_util.h"

#include <climits>
#include <cstdlib>
#include <sys/stat.h>
#include <unistd.h>

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

namespace {
// The length of the well-formed UTF-8 sequence at s[i], or 0.
size_t utf8_length(const std::string& s, size_t i) {
  const auto b = [&s](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  const size_t n = c >= 0xf5 ? 0 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((b(i + k) & 0xc0) != 0x80) return 0;
  if (n == 3 && ((c == 0xe0 && b(i + 1) < 0xa0) || (c == 0xed && b(i + 1) >= 0xa0))) return 0;  // overlong, surrogate
  if (n == 4 && ((c == 0xf0 && b(i + 1) < 0x90) || (c == 0xf4 && b(i + 1) >= 0x90))) return 0;  // overlong, > U+10FFFF
  return n;
}
}  // namespace

std::string terminal_safe(const std::string& s, size_t max) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  size_t i = 0;
  while (i < s.size() && out.size() < max) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : utf8_length(s, i);
    // C0 controls, DEL, C1 controls (U+0080..U+009F: 0xc2 0x80..0x9f, which
    // some terminals take as CSI and the like) and bytes that are not UTF-8.
    const bool c1 = n == 2 && c == 0xc2 && static_cast<unsigned char>(s[i + 1]) < 0xa0;
    if (n == 0 || (n == 1 && (c < 0x20 || c == 0x7f))) {
      out += std::string("\\x") + kHex[c >> 4] + kHex[c & 15];
      ++i;
    } else if (c1) {
      const unsigned char u = static_cast<unsigned char>(s[i + 1]);
      out += std::string("\\u00") + kHex[u >> 4] + kHex[u & 15];
      i += 2;
    } else {
      out.append(s, i, n);
      i += n;
    }
  }
  if (i < s.size()) out += "... (" + std::to_string(s.size()) + " bytes)";
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
std::string file_identity(const std::string& given) {
  std::string path = given;
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISCHR(st.st_mode)) return "";
    return "inode " + std::to_string(uint64_t(st.st_dev)) + ":" + std::to_string(uint64_t(st.st_ino));
  }
  // A symlink to a file not there yet names where the output will go: its
  // target (followed as the kernel would, at most 40 links).
  for (int hops = 0; hops < 40 && ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode); ++hops) {
    char target[PATH_MAX];
    const ssize_t n = ::readlink(path.c_str(), target, sizeof target - 1);
    if (n <= 0) break;
    const std::string t(target, size_t(n));
    const size_t at = path.find_last_of('/');
    path = t[0] == '/' || at == std::string::npos ? t : path.substr(0, at + 1) + t;
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
