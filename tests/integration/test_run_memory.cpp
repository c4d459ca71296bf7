// Memory of a run with many launches (a 1.1 MB stream of 100 k launches
// takes 2.2 GB if the whole result crosses the fork as one JSON document,
// built in the child and parsed whole in the parent).
//
// Peak RSS grows with the number of launches only by the per-launch result
// structs the report needs: LaunchResult and a statistics WindowStats (about
// 1 KB together) and the replayed kernel itself. The bound, 3 KB per launch
// between 10 k and 100 k launches, holds them with room for the allocator;
// the whole-document transport took about 20 KB per launch on each side.
// Measured through the CLI (parent and child, with --json) and through
// run_isolated (the parent and the child apart). Skipped under
// AddressSanitizer, whose shadow memory and quarantine change RSS.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "models/config/pe_config.h"
#include "models/util/asan_stack.h"  // KB_ASAN
#include "tb/benches/bench_registry.h"
#include "tb/replay/command_stream.h"
#include "tb/run/runner.h"
#include "tests/test_files.h"


namespace {

using kb::test::TempDir;

constexpr double kMaxBytesPerLaunch = 3000;
constexpr size_t kFew = 10000, kMany = 100000;

// A stream of `n` launches, each one tl.cycles(1) (tb/replay/command_stream.h).
std::string stream_file(const TempDir& dir, size_t n) {
  const std::string path = dir.file("launches_" + std::to_string(n) + ".kbs");
  std::string text = "# kernbench command stream v1\n";
  for (size_t i = 0; i < n; ++i) text += "kernel k\ncycles 1\n";
  kb::test::write_file(path, text);
  return path;
}

// Peak RSS in bytes of `kernbench args` and its children (wait4 reports the
// largest of the process and the children it waited for); stdout discarded.
long long cli_peak_rss(const std::vector<std::string>& args, int* status) {
  const pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> argv;
    std::string bin = KERNBENCH_BIN;
    argv.push_back(bin.data());
    std::vector<std::string> copy = args;
    for (std::string& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (!std::freopen("/dev/null", "w", stdout)) _exit(126);
    execv(bin.c_str(), argv.data());
    _exit(127);
  }
  rusage usage{};
  if (pid < 0 || wait4(pid, status, 0, &usage) != pid) return -1;
  return static_cast<long long>(usage.ru_maxrss) * 1024;
}

TEST(RunMemory, CliReplayGrowsByLessThan3KbPerLaunch) {
#ifdef KB_ASAN
  GTEST_SKIP() << "peak RSS is not meaningful under AddressSanitizer";
#endif
  TempDir dir;
  long long rss[2];
  long long json_size[2];
  const size_t n[2] = {kFew, kMany};
  for (int i = 0; i < 2; ++i) {
    const std::string json = dir.file("summary.json");
    int status = 0;
    rss[i] = cli_peak_rss({"replay", stream_file(dir, n[i]), "--json", json}, &status);
    ASSERT_GT(rss[i], 0);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
    json_size[i] = static_cast<long long>(kb::test::read_file(json).size());
  }
  // Every launch is in the summary: it grows with the launches.
  EXPECT_GT(json_size[1], 9 * json_size[0]);
  const double per_launch = double(rss[1] - rss[0]) / double(kMany - kFew);
  RecordProperty("bytes_per_launch", std::to_string(per_launch));
  EXPECT_LT(per_launch, kMaxBytesPerLaunch) << "peak RSS " << rss[0] << " B at " << kFew << " launches, "
                                             << rss[1] << " B at " << kMany;
}

// Runs of kFew and then kMany launches through run_isolated, in a fresh
// process (so that no earlier test's peak hides theirs): that process's peak
// RSS and its largest child's after each, or what went wrong.
struct IsolatedPeaks {
  long long parent[2] = {}, child[2] = {};
  std::string error;
};

IsolatedPeaks isolated_peaks(const TempDir& dir) {
  int fds[2];
  if (pipe(fds) != 0) return {{}, {}, "pipe failed"};
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    IsolatedPeaks p;
    const size_t n[2] = {kFew, kMany};
    for (int i = 0; i < 2 && p.error.empty(); ++i) {
      {
        kb::RunSpec spec;
        spec.launches = kb::load_command_stream(stream_file(dir, n[i]));
        const kb::RunResult r = kb::run_isolated(spec);
        // The whole result arrived: every launch and its statistics window.
        const int cycles = kb::command_type_index("CpuOverheadCmd");
        if (!r.ok) p.error = "run failed: " + r.error;
        else if (r.launches.size() != n[i] || r.stats.launches.size() != n[i])
          p.error = std::to_string(r.launches.size()) + " launches, " + std::to_string(r.stats.launches.size()) +
                    " statistics windows, expected " + std::to_string(n[i]);
        else if (r.launches.back().kernel != "k" || r.stats.launches.back().name != "k" ||
                 r.stats.run.by_type[cycles].commands != n[i])
          p.error = "the last launch or the run's tl.cycles count is wrong";
      }
      rusage self{}, children{};
      getrusage(RUSAGE_SELF, &self);
      getrusage(RUSAGE_CHILDREN, &children);
      p.parent[i] = static_cast<long long>(self.ru_maxrss) * 1024;
      p.child[i] = static_cast<long long>(children.ru_maxrss) * 1024;
    }
    const std::string text = std::to_string(p.parent[0]) + " " + std::to_string(p.child[0]) + " " +
                             std::to_string(p.parent[1]) + " " + std::to_string(p.child[1]) + " " + p.error;
    if (write(fds[1], text.data(), text.size()) != ssize_t(text.size())) _exit(1);
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char buf[4096];
  for (ssize_t got; (got = read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, size_t(got));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  IsolatedPeaks p;
  std::istringstream in(text);
  if (!(in >> p.parent[0] >> p.child[0] >> p.parent[1] >> p.child[1])) {
    p.error = "the measuring process gave no figures (status " + std::to_string(status) + ")";
    return p;
  }
  std::getline(in >> std::ws, p.error);
  return p;
}

TEST(RunMemory, RunIsolatedParentAndChildGrowByLessThan3KbPerLaunch) {
#ifdef KB_ASAN
  GTEST_SKIP() << "peak RSS is not meaningful under AddressSanitizer";
#endif
  TempDir dir;
  const IsolatedPeaks p = isolated_peaks(dir);
  ASSERT_EQ(p.error, "");
  const double per_parent = double(p.parent[1] - p.parent[0]) / double(kMany - kFew);
  const double per_child = double(p.child[1] - p.child[0]) / double(kMany - kFew);
  RecordProperty("parent_bytes_per_launch", std::to_string(per_parent));
  RecordProperty("child_bytes_per_launch", std::to_string(per_child));
  EXPECT_LT(per_parent, kMaxBytesPerLaunch) << p.parent[0] << " B, then " << p.parent[1] << " B";
  EXPECT_LT(per_child, kMaxBytesPerLaunch) << p.child[0] << " B, then " << p.child[1] << " B";
}

// The result crosses the fork a line at a time, launches and statistics
// windows as flat arrays of fields: what the parent reads is what the child
// had, every field (to_json of both; the wall time and peak RSS differ run
// to run). A bench with several launches, metrics, records and occupancy.
TEST(RunTransport, IsolatedResultIsTheChildsOwnResult) {
  kb::register_builtin_benches();
  const kb::Bench& b = kb::BenchRegistry::instance().get("gqa-decode");
  kb::RunSpec spec;
  spec.config = kb::load_pe_config("", {});
  spec.launches = b.launches(kb::BenchRegistry::instance().params(b, {"context=512"}), spec.config);
  spec.keep_records = true;
  const nlohmann::json own = kb::run_function_isolated([&spec] { return kb::to_json(kb::run_in_process(spec)); });
  nlohmann::json read = kb::to_json(kb::run_isolated(spec));
  ASSERT_FALSE(own.contains("error") && own.size() == 1) << own.dump();
  ASSERT_TRUE(read.at("ok")) << read.at("error");
  ASSERT_GE(read.at("launches").size(), 2u);
  ASSERT_GT(read.at("records").size(), 0u);
  ASSERT_GT(read.at("occupancy").size(), 0u);
  ASSERT_EQ(read.at("stats").at("launches").size(), read.at("launches").size());
  bool metrics = false;
  for (const auto& l : read.at("launches")) metrics |= !l.at("metrics").empty();
  EXPECT_TRUE(metrics);
  nlohmann::json expected = own;
  for (nlohmann::json* j : {&expected, &read}) {
    j->erase("sim_wall_seconds");
    j->erase("peak_rss_kb");
  }
  EXPECT_EQ(read, expected);
}

}  // namespace
