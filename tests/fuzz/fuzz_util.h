// Shared by the libFuzzer harnesses of tests/fuzz: a
// private temporary file that each input is written to, for loaders that
// take a path, and the abort that turns a broken invariant into a finding.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace kb::fuzz {

// A file of this process (mkstemps), rewritten per input, removed at exit.
class ScratchFile {
 public:
  explicit ScratchFile(const char* suffix) {
    const char* dir = std::getenv("TMPDIR");
    path_ = std::string(dir && *dir ? dir : "/tmp") + "/kernbench_fuzz_XXXXXX" + suffix;
    fd_ = mkstemps(path_.data(), int(std::string(suffix).size()));
    if (fd_ < 0) {
      std::perror("kernbench fuzz: mkstemps");
      std::abort();
    }
  }
  ~ScratchFile() {
    close(fd_);
    unlink(path_.c_str());
  }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  // Replaces the content; aborts if the write fails (a harness problem, not
  // a finding about the code under test, but it must not pass silently).
  void write(const std::string& text) {
    if (ftruncate(fd_, 0) != 0) fail("ftruncate");
    size_t off = 0;
    while (off < text.size()) {
      const ssize_t n = pwrite(fd_, text.data() + off, text.size() - off, off_t(off));
      if (n <= 0) fail("pwrite");
      off += size_t(n);
    }
  }
  const std::string& path() const { return path_; }

 private:
  [[noreturn]] void fail(const char* what) {
    std::perror((std::string("kernbench fuzz: ") + what + " " + path_).c_str());
    std::abort();
  }
  std::string path_;
  int fd_ = -1;
};

// A broken invariant: libFuzzer saves the input as a crash artifact.
[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "kernbench fuzz: FINDING: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace kb::fuzz
