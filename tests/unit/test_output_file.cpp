// OutputFile (models/util/output_file.h): a file is written to a temporary
// beside it and renamed into place only by commit(); symlinks are written
// through, devices and pipes written in place, directories refused; every
// write is checked.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
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

// Blocks larger than the stream's buffer go to the file directly (issue
// 16 item 3): the bytes and their order are those written.
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

}  // namespace
