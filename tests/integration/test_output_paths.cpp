// Outputs never lose data and never block: two outputs on one file, or an
// output on a file the command reads, is bad input before anything runs
// (tb/cli/cli_util.h, check_distinct_paths); an output that is a FIFO no
// process opens is refused after a short wait instead of blocking for
// ever (models/util/output_file.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/test_files.h"

namespace {

namespace fs = std::filesystem;
using kb::test::CliResult;
using kb::test::TempDir;
using ::testing::HasSubstr;

CliResult run_cli(const std::vector<std::string>& args) { return kb::test::run_program(KERNBENCH_BIN, args); }

constexpr const char* kBench = "gemm-composite";

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

struct Clash {
  const char* name;
  const char* first;
  const char* second;
};

class TwoOutputsOnOnePath : public ::testing::TestWithParam<Clash> {};

TEST_P(TwoOutputsOnOnePath, IsBadInputAndWritesNothing) {
  TempDir dir;
  const std::string path = dir.file("out");
  const CliResult r = run_cli({"run", kBench, GetParam().first, path, GetParam().second, path});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr(std::string(GetParam().first) + " '" + path + "' and " + GetParam().second + " '" +
                               path + "' are one file: two outputs would overwrite each other"));
  EXPECT_EQ(r.out, "") << "nothing ran";
  EXPECT_EQ(names_in(dir.file("")), std::vector<std::string>{});
}

INSTANTIATE_TEST_SUITE_P(EveryPair, TwoOutputsOnOnePath,
                         ::testing::Values(Clash{"trace_vcd", "--trace", "--vcd"},
                                           Clash{"oplog_stats", "--oplog", "--stats"},
                                           Clash{"json_trace", "--json", "--trace"},
                                           Clash{"oplog_record", "--oplog", "--record"}),
                         [](const ::testing::TestParamInfo<Clash>& p) { return std::string(p.param.name); });

TEST(OutputPaths, JsonOntoTheConfigLeavesTheConfigAsItWas) {
  TempDir dir;
  const std::string config = dir.file("pe.yaml");
  fs::copy_file("configs/pe.yaml", config);
  const std::string before = kb::test::read_file(config);
  const CliResult r = run_cli({"run", kBench, "--config", config, "--json", config});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("the output would overwrite the input"));
  EXPECT_EQ(kb::test::read_file(config), before);
}

TEST(OutputPaths, ASymlinkOrAHardLinkIsTheSameFile) {
  TempDir dir;
  const std::string file = dir.file("trace.json"), sym = dir.file("sym.json"), hard = dir.file("hard.json");
  kb::test::write_file(file, "kept\n");
  fs::create_symlink(file, sym);
  fs::create_hard_link(file, hard);
  for (const std::string& other : {sym, hard}) {
    const CliResult r = run_cli({"run", kBench, "--trace", file, "--stats", other});
    EXPECT_EQ(r.exit_code, 2) << other << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("are one file"));
  }
  EXPECT_EQ(kb::test::read_file(file), "kept\n");
}

TEST(OutputPaths, ANewFileByTwoSpellingsIsTheSameFile) {
  TempDir dir;
  const CliResult r = run_cli({"run", kBench, "--oplog", dir.file("x.csv"), "--stats", dir.file("./x.csv")});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(names_in(dir.file("")), std::vector<std::string>{});
}

// A symlink to a file not there yet (absolute or relative, through a
// second link) is the file it will create.
TEST(OutputPaths, ASymlinkToANewFileIsThatFile) {
  TempDir dir;
  fs::create_symlink(dir.file("new.json"), dir.file("abs.json"));
  fs::create_symlink("new.json", dir.file("rel.json"));
  fs::create_symlink("rel.json", dir.file("twice.json"));
  for (const std::string link : {"abs.json", "rel.json", "twice.json"}) {
    const CliResult r = run_cli({"run", kBench, "--trace", dir.file("new.json"), "--stats", dir.file(link)});
    EXPECT_EQ(r.exit_code, 2) << link << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("are one file"));
  }
  EXPECT_FALSE(fs::exists(dir.file("new.json")));
}

TEST(OutputPaths, ReplayOutputOntoItsStreamIsRefused) {
  TempDir dir;
  const std::string stream = dir.file("s.txt");
  ASSERT_EQ(run_cli({"run", kBench, "--record", stream}).exit_code, 0);
  const std::string before = kb::test::read_file(stream);
  const CliResult r = run_cli({"replay", stream, "--oplog", stream});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("the stream '" + stream + "' and --oplog"));
  EXPECT_EQ(kb::test::read_file(stream), before);
}

TEST(OutputPaths, SweepCsvOntoTheConfigIsRefused) {
  TempDir dir;
  const std::string config = dir.file("pe.yaml");
  fs::copy_file("configs/pe.yaml", config);
  const std::string before = kb::test::read_file(config);
  const CliResult r = run_cli({"sweep", kBench, "--param", "m=64,128", "--config", config, "--csv", config});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(kb::test::read_file(config), before);
}

TEST(OutputPaths, DevNullMayTakeSeveralOutputs) {
  const CliResult r = run_cli({"run", kBench, "--trace", "/dev/null", "--stats", "/dev/null", "--oplog", "/dev/null"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// A FIFO nothing reads: refused after the short wait for a reader
// (kFifoReaderWait), naming it; ctest's timeout would catch a hang.
TEST(OutputPaths, AFifoWithoutAReaderIsRefusedAfterAShortWait) {
  TempDir dir;
  const std::string fifo = dir.file("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const char* option : {"--oplog", "--trace", "--vcd", "--stats", "--json"}) {
    const CliResult r = run_cli({"run", kBench, option, fifo});
    EXPECT_EQ(r.exit_code, 1) << option << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("'" + fifo + "': a FIFO that no process reads (none opened it within 2 s")) << option;
  }
  const CliResult s = run_cli({"sweep", kBench, "--param", "m=64,128", "--csv", fifo});
  EXPECT_EQ(s.exit_code, 1) << s.err;
  EXPECT_THAT(s.err, HasSubstr("a FIFO that no process reads"));
}

}  // namespace
