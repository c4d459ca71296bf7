// Memory of mesh runs (docs/cli.md, "Memory limits"):
// - the mesh op log streams: peak RSS is flat in the number of records;
// - the estimate made before a mesh is built (models/top/memory_estimate.h)
//   is within 25% of the measured peak RSS, on three meshes;
// - a mesh over --max-memory or over RLIMIT_AS is refused before it is
//   built (exit 2, the estimate in the message, nothing written);
// - data mode's storage stops at the limit with its size (exit 1).
// RSS figures are skipped under AddressSanitizer (shadow memory and
// quarantine change them).
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "models/config/pe_config.h"
#include "models/tl/tl.h"
#include "models/top/memory_estimate.h"
#include "models/util/asan_stack.h"  // KB_ASAN
#include "tb/run/memory_limit.h"
#include "tb/run/mesh_run.h"
#include "tests/test_files.h"

namespace {

using kb::test::TempDir;

// Peak RSS in bytes of `kernbench args` and its children (wait4: the largest
// of the process and the children it waited for); its exit status.
long long cli_peak_rss(const std::vector<std::string>& args, int* exit_code, rlim_t address_space = 0,
                       const std::string& stderr_path = "") {
  const pid_t pid = fork();
  if (pid == 0) {
    if (address_space) {
      const rlimit l{address_space, address_space};
      if (setrlimit(RLIMIT_AS, &l) != 0) _exit(126);
    }
    std::vector<std::string> copy = args;
    std::string bin = KERNBENCH_BIN;
    std::vector<char*> argv = {bin.data()};
    for (std::string& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (!std::freopen("/dev/null", "w", stdout)) _exit(126);
    if (!stderr_path.empty() && !std::freopen(stderr_path.c_str(), "w", stderr)) _exit(126);
    execv(bin.c_str(), argv.data());
    _exit(127);
  }
  rusage usage{};
  int status = 0;
  if (pid < 0 || wait4(pid, &status, 0, &usage) != pid) return -1;
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return static_cast<long long>(usage.ru_maxrss) * 1024;
}

size_t lines(const std::string& path) {
  std::ifstream in(path);
  size_t n = 0;
  std::string line;
  while (std::getline(in, line)) ++n;
  return n;
}

uint64_t vm_rss_bytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

// A ring all-reduce of `bytes` per PE in 4096-element chunks on the default
// 64-PE mesh: records grow with bytes. 1 MiB gives about 74 k records.
std::vector<std::string> ring(uint64_t bytes, const std::string& oplog) {
  return {"run", "allreduce", "--param", "sizes=" + std::to_string(bytes), "--param", "algos=ring",
          "--param", "chunk_elems=4096", "--oplog", oplog};
}

TEST(MeshMemory, OpLogPeakRssIsFlatInTheNumberOfRecords) {
#ifdef KB_ASAN
  GTEST_SKIP() << "peak RSS is not meaningful under AddressSanitizer";
#endif
  TempDir dir;
  const uint64_t sizes[2] = {uint64_t(1) << 20, uint64_t(10) << 20};
  long long rss[2];
  size_t rows[2];
  for (int i = 0; i < 2; ++i) {
    int code = -1;
    const std::string csv = dir.file("oplog" + std::to_string(i) + ".csv");
    rss[i] = cli_peak_rss(ring(sizes[i], csv), &code);
    ASSERT_EQ(code, 0);
    rows[i] = lines(csv);
  }
  std::printf("op log rows %zu -> %zu, peak RSS %.1f -> %.1f MiB\n", rows[0], rows[1],
              double(rss[0]) / 1048576.0, double(rss[1]) / 1048576.0);
  ASSERT_GE(rows[1], 9 * rows[0]);  // the long run has about 10x the records
  // Kept in memory, the 10x run's ~670 k extra records (about 270 B each
  // with their merge) would add ~40% to the short run's ~450 MiB.
  EXPECT_LT(double(rss[1]), 1.10 * double(rss[0])) << "peak RSS grows with the op log's length";
}

// The op log settles the PE logs as it streams, which passes their held
// records on to the trace earlier: a run with a trace settles them at the
// same records without an op log, so the trace is the same either way
// (tb/run/mesh_op_log.h). 1 MiB gives about 74 k records: two settles.
TEST(MeshMemory, TheTraceIsTheSameWithOrWithoutTheOpLog) {
  TempDir dir;
  std::vector<std::string> alone = ring(uint64_t(1) << 20, dir.file("unused.csv"));
  alone.resize(alone.size() - 2);  // no --oplog
  alone.insert(alone.end(), {"--trace", dir.file("alone.json")});
  std::vector<std::string> beside = ring(uint64_t(1) << 20, dir.file("oplog.csv"));
  beside.insert(beside.end(), {"--trace", dir.file("beside.json")});
  int code = -1;
  (void)cli_peak_rss(alone, &code);
  ASSERT_EQ(code, 0);
  (void)cli_peak_rss(beside, &code);
  ASSERT_EQ(code, 0);
  ASSERT_GT(lines(dir.file("oplog.csv")), size_t(2) << 15) << "enough records for the op log to settle";
  const std::string a = kb::test::read_file(dir.file("alone.json")), b = kb::test::read_file(dir.file("beside.json"));
  EXPECT_GT(a.size(), 0u);
  EXPECT_TRUE(a == b) << "the traces differ (" << a.size() << " and " << b.size() << " bytes)";
}

// Estimate against measured: the child's peak RSS less what this process
// held when it forked (the child starts with it).
TEST(MeshMemory, EstimateIsWithin25PercentOfMeasuredRssOnThreeMeshes) {
#ifdef KB_ASAN
  GTEST_SKIP() << "peak RSS is not meaningful under AddressSanitizer";
#endif
  struct Mesh {
    uint32_t h, w, pes, launched;
  };
  for (const Mesh m : {Mesh{1, 1, 8, 8}, Mesh{1, 2, 8, 4}, Mesh{2, 4, 8, 64}}) {
    kb::MeshRunSpec spec;
    spec.config.topology.mesh.h = m.h;
    spec.config.topology.mesh.w = m.w;
    spec.config.topology.cube.pes = m.pes;
    for (uint32_t g = 0; g < m.launched; ++g) spec.pes.push_back(g);
    spec.kernel_name = "k";
    spec.kernel = [](kb::Tl& tl) { tl.cycles(1); };
    const kb::MemoryEstimate e = kb::estimate_mesh_memory(spec.config, m.launched);
    const uint64_t before = vm_rss_bytes();
    const kb::MeshRunResult r = kb::run_mesh_isolated(spec);
    ASSERT_TRUE(r.ok) << r.error;
    const double measured = double(r.peak_rss_kb * 1024) - double(before);
    std::printf("%ux%ux%u, %u launching: estimate %.1f MiB, measured %.1f MiB\n", m.h, m.w, m.pes, m.launched,
                double(e.resident_bytes) / 1048576.0, measured / 1048576.0);
    EXPECT_NEAR(double(e.resident_bytes), measured, 0.25 * measured) << e.text();
  }
}

TEST(MeshMemory, MeshOverMaxMemoryIsRefusedBeforeItIsBuilt) {
  TempDir dir;
  const std::string csv = dir.file("oplog.csv");
  std::vector<std::string> args = ring(uint64_t(1) << 20, csv);
  args.insert(args.end(), {"--max-memory", "100MiB"});
  const kb::test::CliResult r = kb::test::run_program(KERNBENCH_BIN, args);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("64 PEs"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("more than the 100 MiB allowed (--max-memory"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(csv));
  EXPECT_EQ(r.out, "");
}

TEST(MeshMemory, MeshOverTheAddressSpaceLimitIsRefusedBeforeItIsBuilt) {
#ifdef KB_ASAN
  GTEST_SKIP() << "AddressSanitizer's shadow memory cannot be mapped under a 2 GiB RLIMIT_AS";
#endif
  // 512 PEs need about 5 GiB of address space (their view rings); under a
  // 2 GiB RLIMIT_AS the run is refused instead of failing to set up a stack.
  int code = -1;
  TempDir dir;
  const std::string err = dir.file("err");
  const long long rss = cli_peak_rss({"run", "allreduce", "--param", "sizes=65536", "--param", "algos=ring",
                                      "--set", "topology.mesh.h=8", "--set", "topology.mesh.w=8"},
                                     &code, rlim_t(2) << 30, err);
  ASSERT_GT(rss, 0);
  EXPECT_EQ(code, 2);
  const std::string message = kb::test::read_file(err);
  EXPECT_NE(message.find("of address space for 512 PEs"), std::string::npos) << message;
  EXPECT_NE(message.find("RLIMIT_AS"), std::string::npos) << message;
#ifndef KB_ASAN
  EXPECT_LT(rss, 200LL << 20) << "refused before the mesh was built";
#endif
}

TEST(MeshMemory, MaxMemoryTakesSizesWithUnitsAndRefusesTheRest) {
  EXPECT_EQ(kb::parse_memory_size("4GiB"), uint64_t(4) << 30);
  EXPECT_EQ(kb::parse_memory_size("512M"), uint64_t(512) << 20);
  EXPECT_EQ(kb::parse_memory_size("1048576B"), uint64_t(1) << 20);
  for (const char* bad : {"", "4", "4GB", "GiB", "-1GiB", "1KiB", "99999999999999999TiB", "4 GiB", "1.5GiB"}) {
    EXPECT_THROW(kb::parse_memory_size(bad), std::invalid_argument) << bad;
  }
  const kb::test::CliResult r = kb::test::run_program(KERNBENCH_BIN, {"run", "allreduce", "--max-memory", "4\x1b"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--max-memory"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << "the argument is echoed escaped";
}

TEST(MeshMemory, DataModeStorageStopsAtTheLimitWithItsSize) {
  // 64 PEs x 4 MiB of data: the storage passes what 600 MiB leaves after
  // the model's ~440 MiB estimate.
  const kb::test::CliResult r = kb::test::run_program(
      KERNBENCH_BIN, {"run", "allreduce", "--data", "--param", "sizes=4194304", "--param", "algos=ring",
                      "--max-memory", "600MiB"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("data mode: the memories' storage would pass its limit of"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("bad_alloc"), std::string::npos) << r.err;
}

}  // namespace
