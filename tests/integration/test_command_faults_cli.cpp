// Through the real CLI: a command that fails at dispatch or while
// it runs (a time past 2^64 - 1 ps, data mode and fp16) fails the run with
// exit status 1 and one line naming the stream's FILE:LINE, the kernel and
// the command, in timing and data mode; no SystemC report ("E549 uncaught
// exception", "In process: ..."), and no --json under the requested name.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/test_files.h"

namespace {

namespace fs = std::filesystem;
using kb::test::CliResult;
using kb::test::TempDir;

constexpr int kExitRunFailed = 1;
const std::string kData = "tests/data/replay/";
using kb::test::line_of;

CliResult run_cli(const std::vector<std::string>& args) { return kb::test::run_program(KERNBENCH_BIN, args); }

struct Case {
  const char* file;
  int line;
  const char* what;
  bool timing_fails;  // false: only data mode refuses it
};

const Case kCases[] = {
    {"cycles_max.stream", 4,
     "kernel 'c', tl.cycles(18446744073709551615): dispatch: simulated time overflows: "
     "18446744073709551615 cycles at 1 GHz from 0 ps end past 2^64 - 1 ps (about 213 days)",
     true},
    {"cycles_2p63.stream", 4,
     "kernel 'c', tl.cycles(9223372036854775808): dispatch: simulated time overflows: "
     "9223372036854775808 cycles at 1 GHz from 0 ps end past 2^64 - 1 ps (about 213 days)",
     true},
    {"cycles_late_overflow.stream", 6,
     "kernel 'c', tl.cycles(10000000000000000): dispatch: simulated time overflows: "
     "10000000000000000 cycles at 1 GHz from 10000000000000000000 ps end past 2^64 - 1 ps "
     "(about 213 days)",
     true},
    {"dma_late_overflow.stream", 9,
     "kernel 'late_dma', command #1 DmaReadCmd: simulated time overflows: 140 cycles at 1 GHz from "
     "18446744073709526000 ps end past 2^64 - 1 ps (about 213 days)",
     true},
    {"fp16_data_mode.stream", 6,
     "kernel 'half', command #1 MathCmd: data mode supports fp32 and bf16, not fp16: 'a' [64, 64] "
     "fp16 tcm",
     false},
};

TEST(CommandFaultsCli, ExitStatusAndMessageInTimingAndDataMode) {
  for (const Case& c : kCases) {
    for (bool data : {false, true}) {
      SCOPED_TRACE(std::string(c.file) + (data ? " --data" : " timing"));
      TempDir dir;
      const std::string json = dir.file("summary.json");
      const std::string path = kData + c.file;
      std::vector<std::string> args = {"replay", path, "--json", json};
      if (data) args.push_back("--data");
      const CliResult r = run_cli(args);
      if (!data && !c.timing_fails) {
        EXPECT_EQ(r.exit_code, 0) << r.err;
        continue;
      }
      EXPECT_EQ(r.exit_code, kExitRunFailed) << r.err;
      EXPECT_EQ(r.err, "kernbench: replay '" + path + "' failed: " + path + ":" +
                           std::to_string(c.line) + ": " + c.what + " (" + line_of(path, c.line) +
                           ")\n");
      EXPECT_EQ(r.out.find("E549"), std::string::npos) << r.out;
      EXPECT_EQ(r.out.find("In process"), std::string::npos) << r.out;
      EXPECT_FALSE(fs::exists(json));
    }
  }
}

}  // namespace
