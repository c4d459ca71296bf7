// OutputFile (models/util/output_file.h): a file is written to a temporary
// beside it and renamed into place only by commit(); symlinks are written
// through, devices and pipes written in place, directories refused; every
// write is checked. A regular file is written by a background thread:
// the same bytes, the same errors, no thread left after
// commit or destruction, none alive across fork().
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "models/util/output_file.h"
#include "tests/test_files.h"

namespace {

namespace fs = std::filesystem;
using kb::OutputError;
using kb::OutputFile;
using kb::test::read_file;
using kb::test::TempDir;
using kb::test::write_file;
using ::testing::HasSubstr;

// Names in a folder, sorted.
std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// This process's OutputFile writer threads (/proc/self/task/*/comm is
// their name; a sanitizer's own threads are not counted).
size_t threads() {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator("/proc/self/task")) n += read_file(e.path() / "comm") == "kb-output\n";
  return n;
}

// The count once it is `expected`, or after 5 s: a joined thread's entry
// may linger a moment, a thread never joined stays.
size_t threads_settled(size_t expected) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  size_t n = threads();
  while (n != expected && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    n = threads();
  }
  return n;
}

// `n` bytes that differ from their neighbours' (a reordered, lost or
// repeated block changes them), starting at byte `from` of the sequence.
std::string pattern(size_t from, size_t n) {
  std::string s(n, '\0');
  // The top byte of a 64-bit product: no period a misplaced buffer could hide in.
  for (size_t i = 0; i < n; ++i) s[i] = char((uint64_t(from + i) * 0x9E3779B97F4A7C15u) >> 56);
  return s;
}

TEST(OutputFile, WritesATemporaryBesideItAndRenamesOnCommit) {
  TempDir dir;
  const std::string path = dir.file("out.txt");
  OutputFile f(path, "test output");
  f.stream() << "hello\n";
  const std::string temp = f.temp_path();
  ASSERT_FALSE(temp.empty());
  EXPECT_EQ(fs::path(temp).parent_path(), fs::path(path).parent_path()) << "same folder, so rename is atomic";
  EXPECT_TRUE(fs::exists(temp));
  EXPECT_FALSE(fs::exists(path)) << "nothing under the final name before commit()";
  f.commit();
  EXPECT_TRUE(f.committed());
  EXPECT_EQ(read_file(path), "hello\n");
  EXPECT_FALSE(fs::exists(temp));
  EXPECT_EQ(entries(dir.file("")), std::vector<std::string>{"out.txt"});
}

// Blocks larger than the stream's buffer go to the file directly: the
// bytes and their order are those written.
TEST(OutputFile, LargeBlocksBetweenSmallWritesKeepEveryByteInOrder) {
  TempDir dir;
  const std::string path = dir.file("big.txt");
  std::string expected;
  {
    OutputFile f(path, "test output");
    for (int i = 0; i < 5; ++i) {
      const std::string small = "line " + std::to_string(i) + "\n";
      const std::string big(size_t(200000 + 4093 * i), char('a' + i));
      f.stream() << small;
      f.stream().write(big.data(), std::streamsize(big.size()));
      expected += small + big;
    }
    f.commit();
  }
  EXPECT_EQ(read_file(path), expected);
}

TEST(OutputFile, ALargeBlockToDevFullIsAnOutputError) {
  if (access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no writable /dev/full";
  OutputFile f("/dev/full", "trace");
  const std::string big(300000, 'x');
  f.stream().write(big.data(), std::streamsize(big.size()));
  EXPECT_THROW(f.commit(), OutputError);
}

TEST(OutputFile, WithoutCommitNothingIsWrittenAndTheOldFileStays) {
  TempDir dir;
  const std::string path = dir.file("out.txt");
  write_file(path, "old contents\n");
  {
    OutputFile f(path);
    f.stream() << std::string(1 << 20, 'x');  // past the buffer: bytes reached the temporary
  }
  EXPECT_EQ(read_file(path), "old contents\n");
  EXPECT_EQ(entries(dir.file("")), std::vector<std::string>{"out.txt"}) << "temporary removed";
}

TEST(OutputFile, ReplacesARegularFileKeepingItsMode) {
  TempDir dir;
  const std::string path = dir.file("out.txt");
  write_file(path, "old\n");
  ASSERT_EQ(chmod(path.c_str(), 0640), 0);
  kb::write_output_file(path, "new\n");
  EXPECT_EQ(read_file(path), "new\n");
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
}

TEST(OutputFile, WritesThroughASymlink) {
  TempDir dir;
  const std::string target = dir.file("target.txt"), link = dir.file("link");
  write_file(target, "old\n");
  fs::create_symlink("target.txt", link);
  kb::write_output_file(link, "new\n");
  EXPECT_TRUE(fs::is_symlink(link)) << "the link stays a link";
  EXPECT_EQ(fs::read_symlink(link), fs::path("target.txt"));
  EXPECT_EQ(read_file(target), "new\n") << "its target is replaced";
  EXPECT_EQ(entries(dir.file("")), (std::vector<std::string>{"link", "target.txt"}));
}

TEST(OutputFile, WritesDevNullInPlace) {
  struct stat before {};
  ASSERT_EQ(stat("/dev/null", &before), 0);
  OutputFile f("/dev/null");
  EXPECT_EQ(f.temp_path(), "") << "a device is written directly";
  f.stream() << std::string(1 << 20, 'x');
  EXPECT_NO_THROW(f.commit());
  struct stat after {};
  ASSERT_EQ(stat("/dev/null", &after), 0);
  EXPECT_TRUE(S_ISCHR(after.st_mode));
  EXPECT_EQ(after.st_rdev, before.st_rdev);
}

TEST(OutputFile, DevFullIsAnOutputErrorAndStaysADevice) {
  if (access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no writable /dev/full";
  OutputFile f("/dev/full", "op log");
  f.stream() << "a line\n";
  try {
    f.commit();
    FAIL() << "commit() to /dev/full must throw";
  } catch (const OutputError& e) {
    EXPECT_STREQ(e.what(), "cannot write op log '/dev/full': No space left on device");
  }
  struct stat st {};
  ASSERT_EQ(stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "/dev/full never replaced by a regular file";
}

TEST(OutputFile, RefusesADirectory) {
  TempDir dir;
  const std::string sub = dir.file("sub");
  fs::create_directory(sub);
  try {
    OutputFile f(sub, "VCD");
    FAIL() << "a directory must be refused";
  } catch (const OutputError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot write VCD '" + sub + "': is a directory");
  }
  EXPECT_TRUE(fs::is_directory(sub));
  EXPECT_EQ(entries(dir.file("")), std::vector<std::string>{"sub"}) << "no stray file";
}

TEST(OutputFile, MissingFolderIsAnOutputErrorWithTheOsError) {
  TempDir dir;
  const std::string path = dir.file("missing/out.json");
  try {
    OutputFile f(path, "JSON summary");
    FAIL();
  } catch (const OutputError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot write JSON summary '" + path + "': No such file or directory");
  }
}

TEST(OutputFile, WritesIntoAFifo) {
  TempDir dir;
  const std::string fifo = dir.file("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const pid_t reader = fork();
  ASSERT_GE(reader, 0);
  if (reader == 0) {  // reads the pipe into a file
    const int in = open(fifo.c_str(), O_RDONLY);
    const int out = open(dir.file("read").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    char buf[4096];
    ssize_t n;
    while ((n = read(in, buf, sizeof buf)) > 0) {
      if (write(out, buf, size_t(n)) != n) _exit(1);
    }
    _exit(0);
  }
  {
    OutputFile f(fifo);
    EXPECT_EQ(f.temp_path(), "");
    f.stream() << "through the pipe\n";
    f.commit();
  }
  int status = 0;
  ASSERT_EQ(waitpid(reader, &status, 0), reader);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(read_file(dir.file("read")), "through the pipe\n");
  struct stat st {};
  ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the pipe is not renamed onto";
}

TEST(OutputFile, TempSuffixEndsTheTemporaryName) {
  TempDir dir;
  OutputFile f(dir.file("waves"), "VCD", ".vcd");
  const std::string t = f.temp_path();
  ASSERT_GE(t.size(), 4u);
  EXPECT_EQ(t.substr(t.size() - 4), ".vcd");
  EXPECT_EQ(t.rfind(dir.file("waves.tmp."), 0), 0u) << t;
}

TEST(OutputFile, RemovePendingOutputsUnlinksUncommittedTemporaries) {
  TempDir dir;
  OutputFile f(dir.file("a.csv"));
  f.stream() << "x";
  const std::string temp = f.temp_path();
  ASSERT_TRUE(fs::exists(temp));
  kb::remove_pending_outputs();  // what a signal handler calls
  EXPECT_FALSE(fs::exists(temp));
  EXPECT_FALSE(fs::exists(dir.file("a.csv")));
}

// A forked child forgets the parent's temporaries: its signal handler must
// not remove a file the parent is still writing.
TEST(OutputFile, ForgetPendingOutputsKeepsTheParentsTemporaries) {
  TempDir dir;
  OutputFile f(dir.file("parent.json"));
  const std::string temp = f.temp_path();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    kb::forget_pending_outputs();
    kb::remove_pending_outputs();
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(fs::exists(temp));
  f.stream() << "{}\n";
  f.commit();
  EXPECT_EQ(read_file(dir.file("parent.json")), "{}\n");
}

// The writes a caller makes, replayed on any ostream: blocks of many
// lengths (1 byte to past a background buffer) through write(), << and
// put(), so that every boundary of the buffers is crossed in every way.
void replay(std::ostream& os, size_t total, uint32_t seed) {
  size_t done = 0;
  uint32_t x = seed;
  while (done < total) {
    x = x * 1664525u + 1013904223u;
    const size_t lens[] = {1, 7, 4096, 65535, 65536, 65537, 200003, size_t(1) << 20, (size_t(1) << 20) + 3,
                           3 * (size_t(1) << 20) + 11};
    const size_t n = std::min(total - done, lens[(x >> 8) % (sizeof lens / sizeof lens[0])]);
    const std::string block = pattern(done, n);
    switch ((x >> 20) % 3) {
      case 0: os.write(block.data(), std::streamsize(n)); break;
      case 1: os << block; break;
      default:
        for (char c : block.substr(0, std::min<size_t>(n, 5000))) os.put(c);
        if (n > 5000) os.write(block.data() + 5000, std::streamsize(n - 5000));
    }
    done += n;
  }
}

// The background writer writes exactly what std::ofstream
// writes, for sizes on and about every multiple of the buffers (64 KiB,
// 1 MiB, the 8 MiB ring) and of the 16 MiB between the writer's fdatasyncs.
TEST(OutputFile, BytesAreThoseOfAnOfstreamForSizesAroundBufferBoundaries) {
  TempDir dir;
  const size_t K = size_t(1) << 10, M = size_t(1) << 20;
  uint32_t seed = 1;
  for (size_t base : {size_t(0), 64 * K, M, 2 * M, 4 * M, 5 * M, 8 * M, 9 * M, 16 * M}) {
    for (long delta : {-1L, 0L, 1L}) {
      if (base == 0 && delta < 0) continue;
      const size_t size = size_t(long(base) + delta);
      SCOPED_TRACE("size " + std::to_string(size));
      const std::string path = dir.file("out.bin"), ref = dir.file("ref.bin");
      {
        std::ofstream r(ref, std::ios::binary);
        replay(r, size, seed);
      }
      {
        OutputFile f(path, "test output");
        replay(f.stream(), size, seed);
        f.commit();
      }
      const std::string got = read_file(path), want = read_file(ref);
      ASSERT_EQ(want.size(), size);
      ASSERT_EQ(got.size(), size);
      ASSERT_TRUE(got == want) << "first difference at byte "
                               << std::mismatch(got.begin(), got.end(), want.begin()).first - got.begin();
      ++seed;
    }
  }
}

// A file that fits a buffer is written at commit without a thread; a larger
// one has one writer thread, joined by commit() and by the destructor.
TEST(OutputFile, TheWriterThreadEndsAtCommitAndAtDestruction) {
  TempDir dir;
  const size_t before = threads();
  {
    OutputFile f(dir.file("small.txt"));
    f.stream() << "a few bytes\n";
    EXPECT_EQ(threads(), before);
    f.commit();
  }
  EXPECT_EQ(read_file(dir.file("small.txt")), "a few bytes\n");
  const std::string big = pattern(0, 6u << 20);
  {
    OutputFile f(dir.file("big.bin"));
    f.stream().write(big.data(), std::streamsize(big.size()));
    EXPECT_EQ(threads(), before + 1) << "one writer thread";
    f.commit();
    EXPECT_EQ(threads_settled(before), before) << "commit() joins the writer";
  }
  EXPECT_TRUE(read_file(dir.file("big.bin")) == big);
  write_file(dir.file("kept.txt"), "old\n");
  {
    OutputFile f(dir.file("kept.txt"));
    f.stream().write(big.data(), std::streamsize(big.size()));
    EXPECT_EQ(threads(), before + 1);
  }
  EXPECT_EQ(threads_settled(before), before) << "the destructor joins the writer";
  EXPECT_EQ(read_file(dir.file("kept.txt")), "old\n");
  EXPECT_EQ(entries(dir.file("")), (std::vector<std::string>{"big.bin", "kept.txt", "small.txt"}));
}

// flush() returns with every byte so far in the file (with or without the
// writer thread), and writing goes on after it.
TEST(OutputFile, FlushPutsEveryByteSoFarInTheFile) {
  TempDir dir;
  OutputFile f(dir.file("out.bin"));
  std::string all;
  for (size_t n : {size_t(10), size_t(3u << 20) + 5, size_t(1), size_t(1u << 20), size_t(700000)}) {
    const std::string block = pattern(all.size(), n);
    f.stream().write(block.data(), std::streamsize(n));
    all += block;
    f.stream().flush();
    ASSERT_TRUE(f.stream().good());
    EXPECT_TRUE(read_file(f.temp_path()) == all) << "after " << all.size() << " bytes";
  }
  f.commit();
  EXPECT_TRUE(read_file(dir.file("out.bin")) == all);
}

// tb/run/runner.cpp forks the simulations: a fork first waits for the writer
// to write what it was handed and joins it; writing resumes after.
TEST(OutputFile, NoWriterThreadIsAliveAcrossFork) {
  TempDir dir;
  const size_t before = threads();
  OutputFile f(dir.file("out.bin"));
  const std::string first = pattern(0, (7u << 20) / 2), second = pattern(first.size(), 5u << 20);
  f.stream().write(first.data(), std::streamsize(first.size()));
  ASSERT_EQ(threads(), before + 1);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  EXPECT_EQ(threads_settled(before), before) << "the writer was joined before the fork";
  const auto size = fs::file_size(f.temp_path());
  EXPECT_GT(size, 0u) << "what the writer was handed is written";
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(fs::file_size(f.temp_path()), size) << "and nothing writes it since";
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  f.stream().write(second.data(), std::streamsize(second.size()));
  f.commit();
  EXPECT_TRUE(read_file(dir.file("out.bin")) == first + second);
}

// A write that fails on the writer thread (here EFBIG past RLIMIT_FSIZE: a
// regular file, as a full disk would be) is the same OutputError as a
// failed write of the owner's: the stream goes bad at a later hand-off,
// commit() names the OS error, nothing is left under either name, and
// nothing hangs. In a child: the limit is the process's.
TEST(OutputFile, AFailedWriteOnTheWriterThreadIsAnOutputError) {
  TempDir dir;
  const std::string path = dir.file("trace.json");
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    signal(SIGXFSZ, SIG_IGN);  // the write fails with EFBIG instead
    const rlim_t limit = (3u << 20) + 12345;
    const rlimit lim{limit, limit};
    if (setrlimit(RLIMIT_FSIZE, &lim) != 0) _exit(2);
    const size_t before = threads();
    std::string temp;
    int rc = 0;
    {
      OutputFile f(path, "trace");
      temp = f.temp_path();
      const std::string block = pattern(0, 65536);
      for (int i = 0; i < 512; ++i) f.stream().write(block.data(), std::streamsize(block.size()));  // 32 MiB
      if (!f.stream().bad()) rc = 3;  // seen before commit
      try {
        f.commit();
        rc = 4;
      } catch (const OutputError& e) {
        if (std::string(e.what()) != "cannot write trace '" + path + "': File too large") {
          std::fprintf(stderr, "message: %s\n", e.what());
          rc = 5;
        }
      }
    }
    if (rc == 0 && (access(path.c_str(), F_OK) == 0 || access(temp.c_str(), F_OK) == 0)) rc = 6;
    if (rc == 0 && threads_settled(before) != before) rc = 7;
    _exit(rc);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2 setrlimit, 3 stream not bad before commit, 4 commit did not throw, "
                                       "5 wrong message, 6 a file left, 7 a thread left";
  EXPECT_EQ(entries(dir.file("")), std::vector<std::string>{});
}

// A device is written by the owner, as before: many megabytes to /dev/full
// fail at the first write, with the same message.
TEST(OutputFile, ManyMegabytesToDevFullFailAtOnce) {
  if (access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no writable /dev/full";
  OutputFile f("/dev/full", "trace");
  const std::string block = pattern(0, 1u << 20);
  f.stream().write(block.data(), std::streamsize(block.size()));
  EXPECT_TRUE(f.stream().bad());
  for (int i = 0; i < 16; ++i) f.stream().write(block.data(), std::streamsize(block.size()));
  try {
    f.commit();
    FAIL() << "commit() to /dev/full must throw";
  } catch (const OutputError& e) {
    EXPECT_STREQ(e.what(), "cannot write trace '/dev/full': No space left on device");
  }
}

}  // namespace
