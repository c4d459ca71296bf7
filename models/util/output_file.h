// Output files that never destroy anything and never lie.
//
// A regular file (or a new name) is written to a temporary file in the same
// folder and renamed into place by commit(), so an interrupted or failed run
// leaves no half-written file under the final name. A symlink is written
// through: its target is the file replaced. A character device or FIFO
// (/dev/null, /dev/stdout, a pipe) is written directly, never renamed onto.
// A FIFO that no process opens for reading within kFifoReaderWait is
// refused (OutputError), never waited for without end.
// /dev/stdout, /dev/stderr and /dev/fd/N write to the process's own file
// descriptor, as a shell does (a rename would cut the link to a redirected
// stdout). A directory or any other kind of file is refused. Every write,
// the flush and the close are checked: a failure (a full disk) is an
// OutputError naming the path and the OS error.
//
// A regular file's bytes are written by a background thread while the
// caller formats the next ones: the same bytes, and a
// failed write is seen at a later write, flush() or commit(). The thread
// starts once more than a buffer (1 MiB) is written; commit(), the
// destructor and every fork() (which first waits for its writes) join it.
// flush() returns with every byte in the file. The writer also makes the
// file durable every 16 MiB (fdatasync), so commit()'s fsync, which the
// caller waits for, has at most that much left to flush.
#pragma once

#include <chrono>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>

namespace kb {

constexpr std::chrono::milliseconds kFifoReaderWait{2000};

struct OutputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class OutputFile {
 public:
  // Opens the temporary file (or the device). Throws OutputError. `what`
  // names the output in messages ("cannot write op log 'PATH': ...").
  // `temp_suffix` ends the temporary file's name, for writers that append
  // their own extension to the name they are given (SystemC's ".vcd").
  explicit OutputFile(const std::string& path, const std::string& what = "",
                      const std::string& temp_suffix = "");
  // Without commit(): the temporary file is removed, the final name untouched.
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // The stream to write to. Its errors are reported by commit().
  std::ostream& stream();
  // Flushes, checks every write, closes and renames into place. Throws
  // OutputError("cannot write [WHAT ]'PATH': No space left on device").
  void commit();

  const std::string& path() const { return path_; }
  // The temporary file's name ("" when writing a device directly): for
  // writers that need a file name rather than a stream.
  const std::string& temp_path() const { return temp_; }
  bool committed() const { return committed_; }

 private:
  class Buf;
  [[noreturn]] void fail(const std::string& reason) const;  // throws OutputError
  std::string path_;    // as the user gave it
  std::string what_;
  std::string target_;  // the file finally replaced (symlinks resolved)
  std::string temp_;
  int fd_ = -1;
  bool committed_ = false;
  std::unique_ptr<Buf> buf_;
  std::unique_ptr<std::ostream> os_;
};

// Writes `text` to `path` through an OutputFile. Throws OutputError.
void write_output_file(const std::string& path, const std::string& text, const std::string& what = "");

// Async-signal-safe: unlinks every temporary file of an OutputFile not yet
// committed or destroyed. Call it from a fatal-signal handler before _exit.
void remove_pending_outputs() noexcept;
// In a forked child: forgets the parent's temporaries, which are not the
// child's to remove.
void forget_pending_outputs() noexcept;

}  // namespace kb
