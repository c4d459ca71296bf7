// Safe outputs, the fork boundary, signals and timeouts, end to
// end through the kernbench binary (KERNBENCH_BIN) and the runner:
// - no output ever deletes or replaces another file (--vcd PATH, DIR,
//   /dev/full, symlinks), and nothing half-written is left under an
//   output's final name after a failure, a timeout or a signal;
// - a failed output is exit 1 with the path and the OS error, found before
//   the simulation when it can be;
// - SIGTERM / SIGINT to the CLI end its children too (no process left in its
//   process group), a stopped child does not hang the CLI, children die
//   with a killed parent;
// - a non-UTF-8 name cannot throw across the fork;
// - the sweep CSV holds every figure exactly.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tb/run/runner.h"
#include "tests/test_files.h"

namespace {

namespace fs = std::filesystem;
using kb::test::CliResult;
using kb::test::read_file;
using kb::test::TempDir;
using kb::test::write_file;
using ::testing::HasSubstr;
using ::testing::Not;

const char kBench[] = "gemm-tiled-single-op";
const char kNonUtf8Stream[] = "tests/data/outputs/non_utf8_names.stream";
// Runs for tens of seconds: long enough to be interrupted mid-simulation.
const std::vector<std::string> kLongRun = {"gqa-decode", "--param", "context=16777216"};

CliResult run_cli(const std::vector<std::string>& args) { return kb::test::run_program(KERNBENCH_BIN, args); }

// `kernbench <command> <kLongRun...> <rest...>`
std::vector<std::string> long_run(const std::string& command, const std::vector<std::string>& rest) {
  std::vector<std::string> a = {command};
  a.insert(a.end(), kLongRun.begin(), kLongRun.end());
  a.insert(a.end(), rest.begin(), rest.end());
  return a;
}

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

bool is_char_device(const char* path) {
  struct stat st {};
  return stat(path, &st) == 0 && S_ISCHR(st.st_mode);
}

// ---- a kernbench process in its own process group --------------------------

struct Spawned {
  pid_t pid = -1;
  std::string out_path, err_path;
};

Spawned spawn(const std::vector<std::string>& args, const TempDir& io) {
  Spawned s{-1, io.file("stdout"), io.file("stderr")};
  std::vector<std::string> argv_s = {KERNBENCH_BIN};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  s.pid = fork();
  if (s.pid < 0) throw std::runtime_error("fork failed");
  if (s.pid == 0) {
    setpgid(0, 0);
    signal(SIGINT, SIG_DFL);  // as from a terminal, whatever the test runner ignores
    signal(SIGTERM, SIG_DFL);
    const int out = open(s.out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = open(s.err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(127);
    execv(argv[0], argv.data());
    _exit(127);
  }
  setpgid(s.pid, s.pid);
  return s;
}

// The pids whose parent is `pid` (from /proc/*/stat).
std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> out;
  DIR* d = opendir("/proc");
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    const pid_t p = pid_t(std::atoi(e->d_name));
    if (p <= 0) continue;
    const std::string stat = read_file("/proc/" + std::to_string(p) + "/stat");
    const auto paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream rest(stat.substr(paren + 2));
    char state;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == pid) out.push_back(p);
  }
  closedir(d);
  return out;
}

// Polls `done` every 20 ms for up to `seconds`.
template <typename F>
bool eventually(F done, double seconds = 30) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

// Waits for the spawned process (at most 60 s, then kills its group); its
// wait status.
int wait_for(pid_t pid) {
  int status = 0;
  const bool exited = eventually([&] { return waitpid(pid, &status, WNOHANG) == pid; }, 60);
  if (!exited) {
    kill(-pid, SIGKILL);
    waitpid(pid, &status, 0);
    ADD_FAILURE() << "kernbench did not exit within 60 s";
  }
  return status;
}

// No process is left in the group (kill(-pgid, 0) finds none).
bool group_empty(pid_t pgid) { return kill(-pgid, 0) != 0 && errno == ESRCH; }

// A temporary output file (NAME.tmp.XXXXXX) of `name` in `dir`.
bool has_temporary(const std::string& dir, const std::string& name) {
  for (const std::string& e : entries(dir))
    if (e.rfind(name + ".tmp.", 0) == 0) return true;
  return false;
}

// ---- --vcd never destroys anything ------------------------------------------

TEST(OutputsVcd, PathWithoutVcdSuffixLeavesPathDotVcdAlone) {
  TempDir dir;
  const std::string path = dir.file("waves"), other = dir.file("waves.vcd");
  write_file(other, "someone else's file\n");
  const CliResult r = run_cli({"run", kBench, "--vcd", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(other), "someone else's file\n") << "--vcd waves must not touch waves.vcd";
  EXPECT_EQ(read_file(path).rfind("$date", 0), 0u) << "the VCD is written under the name given";
  EXPECT_EQ(entries(dir.file("")), (std::vector<std::string>{"waves", "waves.vcd"}));
}

TEST(OutputsVcd, DirectoryIsRefusedWithNoStrayFile) {
  TempDir dir;
  const std::string sub = dir.file("sub");
  fs::create_directory(sub);
  const CliResult r = run_cli({"run", kBench, "--vcd", sub});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("cannot write VCD '" + sub + "': is a directory"));
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(entries(dir.file("")), std::vector<std::string>{"sub"}) << "no sub.vcd, no temporary";
  EXPECT_TRUE(fs::is_empty(sub));
}

TEST(OutputsVcd, DevFullFailsAndIsNeverReplaced) {
  if (!is_char_device("/dev/full")) GTEST_SKIP() << "no /dev/full";
  const CliResult r = run_cli({"run", kBench, "--vcd", "/dev/full"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("cannot write VCD '/dev/full': No space left on device"));
  EXPECT_THAT(r.out, Not(HasSubstr("VCD written")));
  EXPECT_TRUE(is_char_device("/dev/full")) << "/dev/full replaced by a regular file";
}

TEST(OutputsVcd, DevNullIsWrittenInPlace) {
  const CliResult r = run_cli({"run", kBench, "--vcd", "/dev/null"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(is_char_device("/dev/null"));
}

TEST(OutputsVcd, SymlinkIsWrittenThrough) {
  TempDir dir;
  const std::string target = dir.file("target.vcd"), link = dir.file("link");
  write_file(target, "old\n");
  fs::create_symlink("target.vcd", link);
  const CliResult r = run_cli({"run", kBench, "--vcd", link});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(read_file(target).rfind("$date", 0), 0u);
  EXPECT_EQ(entries(dir.file("")), (std::vector<std::string>{"link", "target.vcd"}));
}

// SystemC checks none of its writes: a file cut short by a size limit (as
// by a full disk) must be caught by its missing final time stamp.
TEST(OutputsVcd, TruncatedFileIsAnErrorAndNothingIsLeft) {
  TempDir dir;
  const std::string path = dir.file("waves.vcd");
  // SIGXFSZ ignored: writes past the limit fail with EFBIG instead.
  const std::string cmd = "trap '' XFSZ; ulimit -f 8; exec '" + std::string(KERNBENCH_BIN) + "' run " + kBench +
                          " --vcd '" + path + "' >'" + dir.file("out") + "' 2>'" + dir.file("err") + "'";
  const int status = std::system(("bash -c \"" + cmd + "\"").c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_THAT(read_file(dir.file("err")),
              HasSubstr("cannot write VCD '" + path + "': the waveform file is incomplete"));
  EXPECT_THAT(read_file(dir.file("out")), Not(HasSubstr("VCD written")));
  EXPECT_EQ(entries(dir.file("")), (std::vector<std::string>{"err", "out"}));
}

// ---- every output: a failure is exit 1 with the path and the OS error -------

struct FailingOutput {
  std::vector<std::string> args;
  std::string message;
  std::string never;  // a success line that must not be printed
};

TEST(OutputsFailed, DevFullIsExit1WithPathAndOsError) {
  if (!is_char_device("/dev/full")) GTEST_SKIP() << "no /dev/full";
  const std::string full = "'/dev/full': No space left on device";
  const std::vector<FailingOutput> cases = {
      {{"run", kBench, "--oplog", "/dev/full"}, "cannot write op log " + full, "op log written"},
      {{"run", kBench, "--json", "/dev/full"}, "cannot write JSON summary " + full, ""},
      {{"run", kBench, "--record", "/dev/full"}, "cannot write command stream " + full, "command stream written"},
      {{"run", kBench, "--stats", "/dev/full"}, "cannot write statistics " + full, "statistics written"},
      {{"run", kBench, "--trace", "/dev/full"}, "cannot write trace " + full, "trace written"},
      {{"replay", kNonUtf8Stream, "--oplog", "/dev/full"}, "cannot write op log " + full, "op log written"},
      {{"sweep", kBench, "--param", "m=64,128", "--csv", "/dev/full"}, "cannot write sweep CSV " + full,
       "sweep written"},
  };
  for (const FailingOutput& c : cases) {
    SCOPED_TRACE(c.args[0] + " " + c.args[c.args.size() - 2]);
    const CliResult r = run_cli(c.args);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.message));
    if (!c.never.empty()) {
      EXPECT_THAT(r.out, Not(HasSubstr(c.never)));
    }
  }
  EXPECT_TRUE(is_char_device("/dev/full"));
}

// A trace file written by OutputFile's background thread
// that cannot be written to the end (past the file-size limit, EFBIG, as a
// full disk gives ENOSPC) is still exit 1 with the path and the OS error,
// and leaves nothing under either name. sh ignores SIGXFSZ (the write
// fails instead of killing) and sets the limit (2 or 4 MiB, dash or bash
// blocks) for kernbench; the trace is ~14 MB.
TEST(OutputsFailed, ATraceFileCutShortIsExit1WithTheOsError) {
  TempDir dir;
  const std::string trace = dir.file("trace.json");
  const CliResult r = kb::test::run_program(
      "/bin/sh", {"-c", "trap '' XFSZ; ulimit -f 4096 && exec \"$0\" \"$@\"", KERNBENCH_BIN, "run", "gqa-decode",
                  "--param", "context=8192", "--trace", trace});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("cannot write trace '" + trace + "': File too large"));
  EXPECT_THAT(r.out, Not(HasSubstr("trace written")));
  EXPECT_EQ(entries(dir.file("")), std::vector<std::string>{}) << "no temporary, no trace";
}

// A bad --json path fails before the simulation: no report, and the op log
// of the same command line was never written (the run never started).
TEST(OutputsFailed, BadJsonPathFailsBeforeTheRun) {
  TempDir dir;
  const std::string json = dir.file("missing/out.json"), oplog = dir.file("oplog.csv");
  const CliResult r = run_cli({"run", kBench, "--oplog", oplog, "--json", json});
  EXPECT_EQ(r.exit_code, 1) << "an output failure is a failed run (1), not bad input (2)";
  EXPECT_THAT(r.err, HasSubstr("cannot write JSON summary '" + json + "': No such file or directory"));
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(fs::exists(oplog));
  EXPECT_EQ(entries(dir.file("")), std::vector<std::string>{});
}

TEST(OutputsFailed, BadCsvPathFailsBeforeTheSweep) {
  TempDir dir;
  const CliResult r = run_cli({"sweep", kBench, "--param", "m=64", "--csv", dir.file("")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("is a directory"));
  EXPECT_EQ(r.out, "") << "no table: the sweep did not run";
}

TEST(OutputsFailed, GoldensUpdateIntoAMissingFolderWritesNothing) {
  TempDir dir;
  const CliResult r = run_cli({"goldens", "--update", "--dir", dir.file("missing")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("cannot write golden file '" + dir.file("missing") + "/"));
  EXPECT_THAT(r.err, HasSubstr("No such file or directory"));
  EXPECT_EQ(entries(dir.file("")), std::vector<std::string>{});
}

TEST(OutputsFailed, GoldensUpdateWritesEveryGoldenThroughTheTemporary) {
  TempDir dir;
  const CliResult r = run_cli({"goldens", "--update", "--dir", dir.file("")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const std::string& e : entries(dir.file(""))) {
    EXPECT_EQ(e.find(".tmp."), std::string::npos) << e;
    EXPECT_NO_THROW(nlohmann::json::parse(read_file(dir.file(e)))) << e;
  }
  // They are the shipped goldens: the same runs, the same bytes.
  for (const auto& e : fs::directory_iterator("tests/goldens")) {
    const std::string name = e.path().filename().string();
    EXPECT_EQ(read_file(dir.file(name)), read_file(e.path().string())) << name;
  }
}

// ---- the fork boundary -----------------------------------------------------

// Kernel and tensor names are any bytes; JSON must be UTF-8. Every JSON
// output replaces the invalid bytes (U+FFFD) instead of throwing in the child.
TEST(OutputsForkBoundary, NonUtf8NamesAreReplacedInEveryJsonOutput) {
  TempDir dir;
  const std::string json = dir.file("run.json"), stats = dir.file("stats.json"), trace = dir.file("trace.json");
  const CliResult r = run_cli({"replay", kNonUtf8Stream, "--json", json, "--stats", stats, "--trace", trace});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string replaced = "non\xEF\xBF\xBDutf8\xEF\xBF\xBD(kernel";  // FF -> U+FFFD, C3 28 -> U+FFFD (
  const nlohmann::json j = nlohmann::json::parse(read_file(json));
  EXPECT_EQ(j.at("launches").at(0).at("kernel"), replaced);
  const nlohmann::json s = nlohmann::json::parse(read_file(stats));
  EXPECT_THAT(s.dump(), HasSubstr(replaced));
  const nlohmann::json t = nlohmann::json::parse(read_file(trace));
  EXPECT_THAT(t.dump(), HasSubstr(replaced));
  EXPECT_THAT(r.out, HasSubstr("kernel " + replaced)) << "the report shows the name that crossed the fork";
}

TEST(OutputsForkBoundary, ChildExceptionsBecomeErrors) {
  const nlohmann::json e = kb::run_function_isolated([]() -> nlohmann::json {
    throw std::runtime_error("thrown in the child");
  });
  EXPECT_EQ(e, (nlohmann::json{{"error", "thrown in the child"}}));
  const nlohmann::json u = kb::run_function_isolated([]() -> nlohmann::json { throw 42; });
  EXPECT_EQ(u, (nlohmann::json{{"error", "unknown exception"}}));
  const nlohmann::json bad = kb::run_function_isolated([] { return nlohmann::json{{"name", "a\xFF"}}; });
  EXPECT_EQ(bad, (nlohmann::json{{"name", "a\xEF\xBF\xBD"}}));
}

// ---- timeouts --------------------------------------------------------------

TEST(OutputsTimeout, RunIsEndedAndLeavesNoFile) {
  TempDir dir;
  const std::string oplog = dir.file("oplog.csv"), stats = dir.file("stats.json");
  const auto start = std::chrono::steady_clock::now();
  const CliResult r = run_cli(long_run("run", {"--timeout", "1.5", "--oplog", oplog, "--stats", stats}));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("failed: timed out after 1.5 s"));
  EXPECT_LT(took, 20.0) << "the run alone takes far longer";
  EXPECT_EQ(entries(dir.file("")), std::vector<std::string>{}) << "no op log, no statistics, no temporary";
}

TEST(OutputsTimeout, SweepPointsTimeOutEach) {
  TempDir dir;
  const std::string csv = dir.file("sweep.csv");
  const CliResult r = run_cli({"sweep", "gqa-decode", "--param", "context=16777216,16777215", "-j", "2",
                               "--timeout", "1", "--csv", csv});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("point 1 failed: timed out after 1 s"));
  EXPECT_THAT(r.err, HasSubstr("point 2 failed: timed out after 1 s"));
}

// A mesh bench's runs (each a child of its own) are bounded too, and its
// several mesh runs share the one limit.
TEST(OutputsTimeout, MeshRunIsEndedAndLeavesNoFile) {
  TempDir dir;
  const std::string stats = dir.file("stats.json");
  // A ring all-reduce of 24.8 M commands: about half a minute alone.
  const CliResult r = run_cli({"run", "allreduce", "--param", "sizes=67108864", "--param", "algos=ring", "--param",
                               "chunk_elems=256", "--timeout", "1", "--stats", stats});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("failed: ring 67108864 bytes: timed out after 1 s"));
  EXPECT_EQ(entries(dir.file("")), std::vector<std::string>{}) << "no statistics, no temporary";
}

TEST(OutputsTimeout, MeshBenchOfManyRunsIsBoundedAndNamesTheLimit) {
  // Seven contexts x four cases of mesh runs under one limit (they share
  // it: each is given what is left): whichever run reaches it, the message
  // names the limit, not what was left of it.
  const CliResult r = run_cli({"run", "gqa-long-ctx", "--param", "contexts=8192,16384,32768,65536,131072,262144,524288",
                               "--timeout", "1"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr(": timed out after 1 s\n"));
}

TEST(OutputsTimeout, SweepOfAMeshBenchTimesOutEachPoint) {
  const CliResult r = run_cli({"sweep", "allreduce", "--param", "sizes=67108864", "--param", "algos=ring",
                               "--param", "chunk_elems=256,512", "--timeout", "1"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("point 1 failed: ring 67108864 bytes: timed out after 1 s"));
  EXPECT_THAT(r.err, HasSubstr("point 2 failed: ring 67108864 bytes: timed out after 1 s"));
}

TEST(OutputsTimeout, ReplayTakesTheOptionAndFinishesWithinIt) {
  const CliResult r = run_cli({"replay", kNonUtf8Stream, "--timeout", "600"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(OutputsTimeout, BadValuesAreRejectedWithAClearMessage) {
  for (const std::string v : {"0", "-1", "nan", "inf", "1e400", "abc", "604801"}) {
    SCOPED_TRACE(v);
    const CliResult r = run_cli({"run", kBench, "--timeout", v});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_THAT(r.err, HasSubstr("--timeout: expected seconds, more than 0 and at most 604800 (a week), got '" +
                                 v + "'"));
    EXPECT_EQ(r.out, "");
  }
}

// ---- numeric options' messages ----------------------------------------------

TEST(OutputsCliNumbers, JobsOutOfRangeSaysWhatIsExpected) {
  for (const std::string v : {"0", "-3", "1025", "99999999999999999999", "two"}) {
    SCOPED_TRACE(v);
    const CliResult r = run_cli({"sweep", kBench, "--param", "m=64", "-j", v});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_THAT(r.err, HasSubstr("--jobs: expected a whole number from 1 to 1024, got '" + v + "'"));
    EXPECT_LT(r.err.size(), 200u) << "no 300-digit range: " << r.err;
  }
  const CliResult g = run_cli({"goldens", "-j", "0"});
  EXPECT_EQ(g.exit_code, 2);
  EXPECT_THAT(g.err, HasSubstr("--jobs: expected a whole number from 1 to 1024, got '0'"));
}

TEST(OutputsCliNumbers, PerfOptionsSayWhatIsExpected) {
  const std::map<std::string, std::string> expected = {
      {"--context", "from 1 to 4611686018427387903"},
      {"--gemm", "from 1 to 9223372036854775807"},
      {"--ceiling-commands", "from 1 to 18446744073709551615"},
      {"--repeats", "from 1 to 2147483647"},
      {"--mesh-context", "from 1 to 4611686018427387903"},
      {"--mesh-allreduce-bytes", "from 4 to 1073741824"},
  };
  for (const auto& [option, range] : expected) {
    SCOPED_TRACE(option);
    const CliResult r = run_cli({"perf", option, "0"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_THAT(r.err, HasSubstr(option + ": expected a whole number " + range + ", got '0'"));
  }
}

TEST(OutputsCliNumbers, LongValuesAreCutShort) {
  const std::string v(10000, '9');
  const CliResult r = run_cli({"sweep", kBench, "--param", "m=64", "-j", v});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("(10000 characters)"));
  EXPECT_LT(r.err.size(), 300u);
}

// ---- signals ---------------------------------------------------------------

// SIGTERM to a sweep ends every child (nothing left in its process group),
// leaves no --csv file and no temporary, and exits 128 + 15.
TEST(OutputsSignals, SigtermToASweepLeavesNoProcessAndNoFile) {
  TempDir io, dir;
  const std::string csv = dir.file("sweep.csv");
  const Spawned k = spawn({"sweep", "gqa-decode", "--param", "context=16777216,16777215", "-j", "2", "--csv", csv},
                          io);
  std::vector<pid_t> kids;
  ASSERT_TRUE(eventually([&] { return (kids = children_of(k.pid)).size() == 2; })) << read_file(k.err_path);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // into the simulation
  ASSERT_EQ(kill(k.pid, SIGTERM), 0);
  const int status = wait_for(k.pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGTERM) << status;
  EXPECT_TRUE(group_empty(k.pid)) << "a child outlived the sweep";
  for (pid_t kid : kids) EXPECT_NE(kill(kid, 0), 0) << kid;
  EXPECT_EQ(entries(dir.file("")), std::vector<std::string>{}) << "no sweep.csv, no temporary";
}

// SIGINT to `run --oplog` mid-simulation: the half-written op log (its
// temporary) is removed, no other output appears.
TEST(OutputsSignals, SigintToARunRemovesTheHalfWrittenOpLog) {
  TempDir io, dir;
  const std::string oplog = dir.file("oplog.csv"), stats = dir.file("stats.json"), json = dir.file("run.json");
  const Spawned k =
      spawn(long_run("run", {"--oplog", oplog, "--stats", stats, "--json", json}), io);
  ASSERT_TRUE(eventually([&] { return has_temporary(dir.file(""), "oplog.csv"); })) << read_file(k.err_path);
  ASSERT_EQ(kill(k.pid, SIGINT), 0);
  const int status = wait_for(k.pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGINT) << status;
  EXPECT_TRUE(group_empty(k.pid));
  EXPECT_EQ(entries(dir.file("")), std::vector<std::string>{}) << "no op log, statistics, JSON or temporary";
}

// A child stopped by SIGSTOP does not make the CLI wait forever: the run
// fails, saying why, and the child is gone.
TEST(OutputsSignals, StoppedChildFailsTheRunInsteadOfHanging) {
  TempDir io, dir;
  const std::string oplog = dir.file("oplog.csv");
  const Spawned k = spawn(long_run("run", {"--oplog", oplog}), io);
  std::vector<pid_t> kids;
  ASSERT_TRUE(eventually([&] { return (kids = children_of(k.pid)).size() == 1; }));
  ASSERT_EQ(kill(kids[0], SIGSTOP), 0);
  const int status = wait_for(k.pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
  EXPECT_THAT(read_file(k.err_path), HasSubstr("stopped by SIGSTOP and would never finish, so it was ended"));
  EXPECT_TRUE(group_empty(k.pid));
  EXPECT_EQ(entries(dir.file("")), std::vector<std::string>{});
}

// A child ended by a signal fails the run naming the signal, whether it
// died of it (SIGKILL) or its handler exited 128 + N (SIGTERM).
TEST(OutputsSignals, ChildEndedBySignalNamesTheSignal) {
  const std::pair<int, const char*> cases[] = {{SIGTERM, "run ended by signal SIGTERM"},
                                               {SIGKILL, "run ended by signal SIGKILL"},
                                               {SIGSEGV, "run crashed: signal SIGSEGV"}};
  const rlimit no_core{0, 0};  // the crash leaves no core file
  ASSERT_EQ(setrlimit(RLIMIT_CORE, &no_core), 0);
  // In the sanitizer build, ASan's own SIGSEGV handler would catch the
  // signal sent here and report it as a fault of its own; the CLI's report
  // of a crashed child is what this test is about.
  const char* asan = std::getenv("ASAN_OPTIONS");
  ASSERT_EQ(setenv("ASAN_OPTIONS", (std::string(asan ? asan : "") + ":handle_segv=0").c_str(), 1), 0);
  for (const auto& [sig, text] : cases) {
    TempDir io;
    const Spawned k = spawn(long_run("run", {}), io);
    std::vector<pid_t> kids;
    ASSERT_TRUE(eventually([&] { return (kids = children_of(k.pid)).size() == 1; }));
    ASSERT_EQ(kill(kids[0], sig), 0);
    const int status = wait_for(k.pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
    const std::string err = read_file(k.err_path);
    EXPECT_THAT(err, HasSubstr(text));
    EXPECT_THAT(err, Not(HasSubstr("without a result")));
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    EXPECT_TRUE(group_empty(k.pid));
  }
}

// SIGKILL cannot be forwarded: the child dies with its parent
// (PR_SET_PDEATHSIG) and still removes its temporary.
TEST(OutputsSignals, ChildDiesWithAKilledParent) {
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0) << "orphans come to this process, to be reaped";
  TempDir io, dir;
  const std::string oplog = dir.file("oplog.csv");
  const Spawned k = spawn(long_run("run", {"--oplog", oplog}), io);
  ASSERT_TRUE(eventually([&] { return has_temporary(dir.file(""), "oplog.csv"); }));
  const std::vector<pid_t> kids = children_of(k.pid);
  ASSERT_EQ(kids.size(), 1u);
  ASSERT_EQ(kill(k.pid, SIGKILL), 0);
  wait_for(k.pid);
  int status = 0;
  EXPECT_TRUE(eventually([&] { return waitpid(kids[0], &status, WNOHANG) == kids[0]; }, 10))
      << "the child outlived its parent";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGTERM) << status;
  EXPECT_EQ(entries(dir.file("")), std::vector<std::string>{});
  if (!group_empty(k.pid)) {
    kill(-k.pid, SIGKILL);
    ADD_FAILURE() << "a process was left";
  }
}

// ---- the sweep CSV holds every figure exactly --------------------------------

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> fields(1);
  for (char c : line) {
    if (c == ',') fields.emplace_back();
    else fields.back() += c;
  }
  return fields;
}

void flatten(const nlohmann::json& j, const std::string& prefix, std::map<std::string, nlohmann::json>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) flatten(v, prefix.empty() ? k : prefix + "." + k, out);
  } else {
    out[prefix] = j;
  }
}

TEST(OutputsSweepCsv, FiguresReadBackAsTheExactDoublesOfTheJson) {
  TempDir dir;
  const std::string csv = dir.file("sweep.csv"), json = dir.file("run.json");
  const CliResult s = run_cli({"sweep", "gqa-decode", "--param", "context=1000", "--csv", csv});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  const CliResult r = run_cli({"run", "gqa-decode", "--param", "context=1000", "--json", json});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, nlohmann::json> figures;
  flatten(nlohmann::json::parse(read_file(json)).at("figures"), "", figures);

  std::istringstream in(read_file(csv));
  std::string header_line, row_line;
  std::getline(in, header_line);
  std::getline(in, row_line);
  const auto header = split_csv_line(header_line), row = split_csv_line(row_line);
  ASSERT_EQ(header.size(), row.size());
  size_t compared = 0, inexact_at_6_digits = 0;
  for (size_t c = 1; c < header.size(); ++c) {  // column 0 is the axis
    SCOPED_TRACE(header[c]);
    ASSERT_TRUE(figures.count(header[c]));
    const nlohmann::json& v = figures.at(header[c]);
    if (!v.is_number_float()) continue;
    const double expected = v.get<double>();
    char* end = nullptr;
    const double got = std::strtod(row[c].c_str(), &end);
    EXPECT_EQ(*end, '\0') << row[c];
    EXPECT_EQ(got, expected) << row[c];  // exactly, not within a tolerance
    char six[32];
    std::snprintf(six, sizeof six, "%.6g", expected);
    inexact_at_6_digits += std::strtod(six, nullptr) != expected;
    ++compared;
  }
  EXPECT_GT(compared, 3u);
  EXPECT_GT(inexact_at_6_digits, 0u) << "the test needs figures that 6 digits cannot hold";
}

}  // namespace
