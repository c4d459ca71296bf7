#include "models/util/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace kb {
namespace {

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string read_input_file(const std::string& path, uint64_t max_bytes, const char* what) {
  const std::string name = std::string(what) + " '" + path + "'";
  // O_NONBLOCK: opening a FIFO must not wait for a writer.
  Fd f{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (f.fd < 0) throw InputFileError("cannot open " + name + ": " + std::strerror(errno));
  struct stat st;
  if (::fstat(f.fd, &st) != 0) throw InputFileError("cannot stat " + name + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) {
    throw InputFileError(name + ": not a regular file (" + file_kind(st.st_mode) + ")");
  }
  const std::string too_big =
      name + ": larger than the limit of " + std::to_string(max_bytes) + " bytes";
  if (uint64_t(st.st_size) > max_bytes) throw InputFileError(too_big);
  std::string text;
  text.reserve(size_t(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(f.fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw InputFileError("cannot read " + name + ": " + std::strerror(errno));
    }
    if (n == 0) break;
    // The file may grow while it is read: the limit holds for what is read.
    if (text.size() + size_t(n) > max_bytes) throw InputFileError(too_big);
    text.append(buf, size_t(n));
  }
  const size_t nul = text.find('\0');
  if (nul != std::string::npos) {
    const auto line = 1 + std::count(text.begin(), text.begin() + std::ptrdiff_t(nul), '\n');
    throw InputFileError(path + ":" + std::to_string(line) + ": NUL byte in " + what +
                         " (expected text)");
  }
  return text;
}

}  // namespace kb
