#include "models/util/output_file.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <streambuf>

namespace kb {
namespace {

// The pending temporaries, in fixed storage so that a signal handler can
// unlink them without allocating.
constexpr int kMaxPending = 32;
char g_pending[kMaxPending][PATH_MAX];
std::atomic<bool> g_used[kMaxPending];

int register_pending(const std::string& p) {
  if (p.size() >= PATH_MAX) return -1;
  for (int i = 0; i < kMaxPending; ++i) {
    bool expected = false;
    if (g_used[i].compare_exchange_strong(expected, true)) {
      std::memcpy(g_pending[i], p.c_str(), p.size() + 1);
      return i;
    }
  }
  return -1;
}

void unregister_pending(const std::string& p) {
  for (int i = 0; i < kMaxPending; ++i) {
    if (g_used[i].load() && p == g_pending[i]) {
      g_used[i].store(false);
      return;
    }
  }
}


}  // namespace

// A streambuf over a file descriptor that remembers its first error.
class OutputFile::Buf : public std::streambuf {
 public:
  explicit Buf(int fd) : fd_(fd) { setp(buf_, buf_ + sizeof buf_); }
  int error() const { return errno_; }
  bool flush_all() { return drain() && errno_ == 0; }

 protected:
  int_type overflow(int_type ch) override {
    if (!drain()) return traits_type::eof();
    if (ch != traits_type::eof()) {
      *pptr() = char(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }
  int sync() override { return drain() ? 0 : -1; }
  // A block larger than the room left goes to the file at once, not
  // through the buffer: the trace writer hands over 64 KB blocks (issue 16
  // item 3), which would otherwise be copied twice.
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (n <= 0) return 0;
    if (n > epptr() - pptr()) {
      if (!drain()) return 0;
      if (size_t(n) >= sizeof buf_) return write_all(s, size_t(n)) ? n : 0;
    }
    std::memcpy(pptr(), s, size_t(n));
    pbump(int(n));
    return n;
  }

 private:
  bool write_all(const char* p, size_t len) {
    while (len > 0) {
      const ssize_t n = ::write(fd_, p, len);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno_ == 0) errno_ = errno;
        return false;
      }
      p += n;
      len -= size_t(n);
    }
    return errno_ == 0;
  }
  bool drain() {
    const bool ok = write_all(pbase(), size_t(pptr() - pbase()));
    setp(buf_, buf_ + sizeof buf_);
    return ok;
  }
  int fd_;
  int errno_ = 0;
  char buf_[1 << 16];
};

// The descriptor a /dev/stdout, /dev/stderr or /dev/fd/N path names, or -1.
static int own_descriptor(const std::string& path) {
  if (path == "/dev/stdout") return STDOUT_FILENO;
  if (path == "/dev/stderr") return STDERR_FILENO;
  const std::string fd_dir = "/dev/fd/";
  if (path.compare(0, fd_dir.size(), fd_dir) != 0 || path.size() == fd_dir.size() ||
      path.size() > fd_dir.size() + 9) {
    return -1;
  }
  int fd = 0;
  for (size_t i = fd_dir.size(); i < path.size(); ++i) {
    if (path[i] < '0' || path[i] > '9') return -1;
    fd = fd * 10 + (path[i] - '0');
  }
  return fd;
}

void OutputFile::fail(const std::string& reason) const {
  throw OutputError("cannot write " + (what_.empty() ? "" : what_ + " ") + "'" + path_ + "': " + reason);
}

OutputFile::OutputFile(const std::string& path, const std::string& what, const std::string& temp_suffix)
    : path_(path), what_(what), target_(path) {
  if (path.empty()) fail("empty file name");
  struct stat st;
  if (const int own = own_descriptor(path); own >= 0) {
    fd_ = ::fcntl(own, F_DUPFD_CLOEXEC, 0);
    if (fd_ < 0) fail(std::strerror(errno));
  } else if (::stat(path.c_str(), &st) == 0) {
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
      // A device or pipe: written in place, as `> /dev/null` would.
      fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd_ < 0) fail(std::strerror(errno));
    } else if (S_ISDIR(st.st_mode)) {
      fail("is a directory");
    } else if (!S_ISREG(st.st_mode)) {
      fail("not a regular file, device or pipe");
    } else {
      // A regular file, perhaps through symlinks: replace the target.
      char resolved[PATH_MAX];
      if (::realpath(path.c_str(), resolved) == nullptr) {
        fail(std::string("cannot resolve the path: ") + std::strerror(errno));
      }
      target_ = resolved;
    }
  } else if (errno != ENOENT) {
    fail(std::strerror(errno));
  } else {
    struct stat lst;
    if (::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
      fail("a symlink to a missing file");
    }
  }
  if (fd_ < 0) {
    std::string tmpl = target_ + ".tmp.XXXXXX" + temp_suffix;
    fd_ = ::mkostemps(tmpl.data(), int(temp_suffix.size()), O_CLOEXEC);
    if (fd_ < 0) fail(std::strerror(errno));
    temp_ = tmpl;
    register_pending(temp_);
    // mkostemp creates 0600; give the file the mode a plain open would.
    mode_t mode;
    if (::stat(target_.c_str(), &st) == 0) {
      mode = st.st_mode & 07777;
    } else {
      const mode_t mask = ::umask(0);
      ::umask(mask);
      mode = 0666 & ~mask;
    }
    ::fchmod(fd_, mode);
  }
  buf_ = std::make_unique<Buf>(fd_);
  os_ = std::make_unique<std::ostream>(buf_.get());
}

OutputFile::~OutputFile() {
  os_.reset();
  buf_.reset();
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temp_.empty()) {
    ::unlink(temp_.c_str());
    unregister_pending(temp_);
  }
}

std::ostream& OutputFile::stream() { return *os_; }

void OutputFile::commit() {
  if (committed_) return;
  if (!buf_->flush_all() || os_->bad()) {
    fail(std::strerror(buf_->error() ? buf_->error() : EIO));
  }
  if (!temp_.empty() && ::fsync(fd_) != 0 && errno != EINVAL) {
    fail(std::strerror(errno));
  }
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail(std::strerror(errno));
  if (!temp_.empty()) {
    if (::rename(temp_.c_str(), target_.c_str()) != 0) {
      fail(std::string("cannot move the temporary file into place: ") + std::strerror(errno));
    }
    unregister_pending(temp_);
  }
  committed_ = true;
}

void write_output_file(const std::string& path, const std::string& text, const std::string& what) {
  OutputFile f(path, what);
  f.stream().write(text.data(), std::streamsize(text.size()));
  f.commit();
}

void remove_pending_outputs() noexcept {
  for (int i = 0; i < kMaxPending; ++i) {
    if (g_used[i].load()) ::unlink(g_pending[i]);
  }
}

void forget_pending_outputs() noexcept {
  for (int i = 0; i < kMaxPending; ++i) g_used[i].store(false);
}

}  // namespace kb
