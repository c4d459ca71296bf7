#include "models/util/output_file.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <streambuf>
#include <system_error>
#include <thread>
#include <vector>

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
//
// A regular file's bytes are written by a background
// thread, so that the simulating thread only formats (writing a 125 MB
// trace, page cache and disk, cost ~1.4x the run's wall time). The owner
// fills one of kSlots buffers and hands a full one to the writer, which
// writes them in the order handed over. The writer starts at the first
// hand-off (a file that fits one buffer is written by its owner at commit,
// with no thread) and is joined at commit, destruction and before a fork
// (fork_prepare). It records the first failed write's errno; the owner
// sees it at its next hand-off, flush or commit, where it saw its own
// write's failure before, and the bytes after a failure are dropped, as
// before. Devices and pipes are written by the owner, as before: the
// process's own stdout must stay in step with std::cout, and a pipe's
// reader, /dev/null or /dev/full gain nothing from a thread.
class OutputFile::Buf : public std::streambuf {
 public:
  // `regular`: a regular (temporary) file, written in the background.
  Buf(int fd, bool regular);
  // Without commit the temporary file is removed: what is not yet written
  // is dropped.
  ~Buf() override { stop_writer(true); }
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  int error() const {
    std::lock_guard<std::mutex> lock(mu_);
    return errno_;
  }
  // Every byte written, the writer thread ended. False after a failed write.
  bool flush_all() {
    const bool ok = drain();
    stop_writer(false);
    return ok && error() == 0;
  }

 protected:
  int_type overflow(int_type ch) override {
    if (!hand_off()) return traits_type::eof();
    if (ch != traits_type::eof()) {
      *pptr() = char(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }
  // Returns when every byte is written (callers' flush() keeps its meaning).
  int sync() override { return drain() ? 0 : -1; }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (n <= 0) return 0;
    if (!background_) {
      // A block larger than the room left goes to the file at once, not
      // through the buffer: the trace writer hands over 64 KB blocks,
      // which would otherwise be copied twice.
      if (n > epptr() - pptr()) {
        if (!hand_off()) return 0;
        if (n >= epptr() - pbase()) {
          if (const int e = write_all(s, size_t(n)); e != 0) {
            record(e);
            return 0;
          }
          return n;
        }
      }
      std::memcpy(pptr(), s, size_t(n));
      pbump(int(n));
      return n;
    }
    // The writer writes from the buffers only: a block is copied into them.
    std::streamsize done = 0;
    while (done < n) {
      if (pptr() == epptr() && !hand_off()) return done;
      const std::streamsize k = std::min<std::streamsize>(n - done, epptr() - pptr());
      std::memcpy(pptr(), s + done, size_t(k));
      pbump(int(k));
      done += k;
    }
    return n;
  }

 private:
  // Bounded memory: 8 MiB a file, enough for the owner to go on
  // formatting while the writer waits for a write_back() sync.
  static constexpr int kSlots = 8;
  static constexpr size_t kSyncBytes = size_t(16) << 20;  // write_back(): made durable every 16 MiB
  static constexpr size_t kSlotBytes = size_t(1) << 20;  // in the background
  static constexpr size_t kDirectBytes = size_t(1) << 16;  // by the owner
  static constexpr char kWriterName[] = "kb-output";

  // Writes [p, p + len) to the file; 0 or the errno of the failure.
  int write_all(const char* p, size_t len) const {
    while (len > 0) {
      const ssize_t n = ::write(fd_, p, len);
      if (n < 0) {
        if (errno == EINTR) continue;
        return errno;
      }
      p += n;
      len -= size_t(n);
    }
    return 0;
  }
  void record(int e) {
    std::lock_guard<std::mutex> lock(mu_);
    if (errno_ == 0) errno_ = e;
  }
  void reset() { setp(slots_[cur_].get(), slots_[cur_].get() + slot_bytes_); }
  // The full buffer to the writer (or the file); false after a failure.
  bool hand_off();
  // Every byte handed over and written; false after a failure.
  bool drain();
  // The writer thread, started if not running; false if it cannot be.
  bool ensure_writer();
  void stop_writer(bool discard);
  void join_locked(bool discard);
  void writer_loop();
  int write_back(size_t len);

  const int fd_;
  const bool regular_;
  bool background_;  // false for good when no thread could be started
  const size_t slot_bytes_;
  std::unique_ptr<char[]> slots_[kSlots];
  int cur_ = 0;  // the slot the owner fills (the owner's only)
  mutable std::mutex mu_;
  std::condition_variable work_;  // to the writer: a slot handed over, or stop
  std::condition_variable freed_;  // to the owner: a slot written
  // Under mu_: the handed-over slots are head_ .. head_ + count_ - 1 (in
  // writing or waiting); the owner's slot is free while count_ < kSlots.
  size_t len_[kSlots] = {};
  int head_ = 0, count_ = 0;
  int errno_ = 0;
  bool stop_ = false, discard_now_ = false;
  // The writer's (or the owner's when no writer runs): bytes written so
  // far and bytes made durable, for write_back.
  off_t written_ = 0, synced_ = 0;
  // Under writers_mu().
  std::thread writer_;
  bool running_ = false;

  // The Bufs whose writer thread runs, for fork_prepare.
  // Made on first use and never destroyed: a Buf destroyed during static
  // destruction (a VP's global) still finds them.
  static std::mutex& writers_mu() {
    static std::mutex* m = new std::mutex;
    return *m;
  }
  static std::vector<Buf*>& writers() {
    static std::vector<Buf*>* w = new std::vector<Buf*>;
    return *w;
  }
  static void fork_prepare();
  static void fork_done();
};

// A fork waits for each writer thread to finish its writes and joins it: a
// thread is never alive across fork() (tb/run/isolated.cpp forks the
// simulations), and none holds a lock that the child would inherit locked.

void OutputFile::Buf::fork_prepare() {
  writers_mu().lock();  // held until the fork is done: no writer starts
  for (Buf* b : writers()) b->join_locked(false);
  writers().clear();
}

void OutputFile::Buf::fork_done() { writers_mu().unlock(); }

OutputFile::Buf::Buf(int fd, bool regular)
    : fd_(fd), regular_(regular), background_(regular), slot_bytes_(regular ? kSlotBytes : kDirectBytes) {
  // Every slot now, so that no allocation can fail between a hand-off and
  // the writer's start (untouched pages cost a small file nothing).
  for (auto& slot : slots_) {
    slot.reset(new char[slot_bytes_]);  // not zeroed: pages touched only when written
    if (!regular) break;  // the owner's one buffer
  }
  reset();
}

bool OutputFile::Buf::hand_off() {
  const size_t len = size_t(pptr() - pbase());
  if (!background_) {
    reset();
    if (const int e = write_all(slots_[cur_].get(), len); e != 0) record(e);
    return error() == 0;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (errno_ != 0) {  // the bytes after a failure are dropped, as before
      reset();
      return false;
    }
    if (len == 0) return true;
    len_[cur_] = len;
    ++count_;
  }
  work_.notify_one();
  if (!ensure_writer()) {
    // No thread (the system's limit): the owner writes from now on.
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    writer_loop();
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = false;
    }
    background_ = false;
    reset();
    return error() == 0;
  }
  const int next = (cur_ + 1) % kSlots;
  {
    std::unique_lock<std::mutex> lock(mu_);
    freed_.wait(lock, [this] { return count_ < kSlots; });
  }
  cur_ = next;
  reset();
  return error() == 0;
}

bool OutputFile::Buf::drain() {
  if (!background_) return hand_off();
  bool running;
  {
    std::lock_guard<std::mutex> lock(writers_mu());
    running = running_;
  }
  if (!running) {
    // Nothing handed over is waiting (the writer ends only with every
    // slot written): the owner writes the rest itself, a small file
    // without a thread at all.
    const char* p = pbase();
    const size_t len = size_t(pptr() - p);
    reset();
    if (error() != 0) return false;
    if (const int e = write_all(p, len); e != 0) record(e);
    written_ += off_t(len);
    return error() == 0;
  }
  if (!hand_off()) return false;
  std::unique_lock<std::mutex> lock(mu_);
  freed_.wait(lock, [this] { return count_ == 0; });
  return errno_ == 0;
}

bool OutputFile::Buf::ensure_writer() {
  // Registered before writers_mu() is taken: glibc holds its fork lock while
  // it runs fork_prepare, which takes writers_mu() (one order only).
  static const int registered = ::pthread_atfork(fork_prepare, fork_done, fork_done);
  if (registered != 0) return false;
  std::lock_guard<std::mutex> lock(writers_mu());
  if (running_) return true;
  writers().reserve(writers().size() + 1);  // may throw before a thread exists
  // The writer takes no asynchronous signal (SIGINT, SIGTERM: the main
  // thread's handlers); those its own writes raise (SIGPIPE, SIGXFSZ) act
  // as they did on the owner's.
  sigset_t block, old;
  sigfillset(&block);
  for (int s : {SIGPIPE, SIGXFSZ, SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS}) sigdelset(&block, s);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  try {
    writer_ = std::thread([this] { writer_loop(); });
  } catch (const std::system_error&) {
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    return false;
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ::pthread_setname_np(writer_.native_handle(), kWriterName);  // as top -H and the tests show it
  running_ = true;
  writers().push_back(this);
  return true;
}

void OutputFile::Buf::stop_writer(bool discard) {
  std::lock_guard<std::mutex> lock(writers_mu());
  if (!running_) return;
  join_locked(discard);
  const auto it = std::find(writers().begin(), writers().end(), this);
  if (it != writers().end()) writers().erase(it);
}

void OutputFile::Buf::join_locked(bool discard) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    discard_now_ = discard;
  }
  work_.notify_one();
  writer_.join();
  running_ = false;
  std::lock_guard<std::mutex> lock(mu_);
  stop_ = false;
}

// A regular file's pages go to the disk as the run goes, not all in
// commit()'s fsync: this slot's writeback is started, and
// every kSyncBytes the file is made durable with fdatasync, on the writer
// thread while the owner formats. sync_file_range alone is not enough: it
// leaves the pages in a disk's (or a virtual disk's host's) write cache,
// and flushing a large trace from it in the final fsync can take as long
// as the run. A writeback or sync error is the file's error (consumed
// here: fsync would not see it again).
int OutputFile::Buf::write_back(size_t len) {
  const off_t off = written_;
  written_ += off_t(len);
  if (::sync_file_range(fd_, off, off_t(len), SYNC_FILE_RANGE_WRITE) != 0) {
    return errno == EINVAL || errno == ESPIPE ? 0 : errno;  // not supported: fsync does it all
  }
  if (written_ - synced_ >= off_t(kSyncBytes)) {
    synced_ = written_;
    if (::fdatasync(fd_) != 0 && errno != EINVAL) return errno;
  }
  return 0;
}

void OutputFile::Buf::writer_loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_.wait(lock, [this] { return count_ > 0 || stop_; });
    if (count_ == 0) return;  // stopped, every slot written
    const int slot = head_;
    const size_t len = len_[slot];
    const bool skip = errno_ != 0 || discard_now_;
    lock.unlock();
    int e = skip ? 0 : write_all(slots_[slot].get(), len);
    if (e == 0 && !skip && regular_) e = write_back(len);
    lock.lock();
    if (e != 0 && errno_ == 0) errno_ = e;
    head_ = (head_ + 1) % kSlots;
    --count_;
    freed_.notify_one();
  }
}

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
      // A device or pipe: written in place, as `> /dev/null` would. A FIFO
      // is opened without blocking, so one that nothing reads is refused
      // instead of waiting for a reader for ever: a reader started just
      // before (`reader fifo & kernbench ...`) has kFifoReaderWait to open
      // its end. Its writes then block as a pipe's do.
      const bool fifo = S_ISFIFO(st.st_mode);
      const auto give_up = std::chrono::steady_clock::now() + kFifoReaderWait;
      while ((fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | (fifo ? O_NONBLOCK : 0))) < 0 && fifo &&
             errno == ENXIO && std::chrono::steady_clock::now() < give_up) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      if (fd_ < 0 && fifo && errno == ENXIO) {
        fail("a FIFO that no process reads (none opened it within " +
             std::to_string(std::chrono::duration_cast<std::chrono::seconds>(kFifoReaderWait).count()) +
             " s; start its reader first)");
      }
      if (fd_ < 0) fail(std::strerror(errno));
      if (fifo) {
        const int flags = ::fcntl(fd_, F_GETFL);
        if (flags < 0 || ::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK) < 0) fail(std::strerror(errno));
      }
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
  buf_ = std::make_unique<Buf>(fd_, !temp_.empty());
  os_ = std::make_unique<std::ostream>(buf_.get());
}

OutputFile::~OutputFile() {
  os_.reset();
  buf_.reset();  // joins the writer thread before the descriptor closes
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temp_.empty()) {
    ::unlink(temp_.c_str());
    unregister_pending(temp_);
  }
}

std::ostream& OutputFile::stream() { return *os_; }

void OutputFile::commit() {
  if (committed_) return;
  if (!buf_->flush_all() || os_->bad()) {  // the writer thread joined
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
