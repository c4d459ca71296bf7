// Bad input through the real CLI: replayed tensors the descriptor table
// rejects fail the run (exit status 1) at FILE:LINE; unreadable streams and
// bench parameters whose products overflow are bad input (exit status 2);
// nothing is written under the requested output name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/test_files.h"

namespace {

namespace fs = std::filesystem;
using kb::test::CliResult;
using kb::test::TempDir;
using ::testing::HasSubstr;

constexpr int kExitRunFailed = 1;
constexpr int kExitBadInput = 2;
const std::string kData = "tests/data/replay/";

CliResult run_cli(const std::vector<std::string>& args) { return kb::test::run_program(KERNBENCH_BIN, args); }

// The misaligned fp32 tensor whose first element straddled a 64 KiB page:
// data mode wrote past the page (heap overflow) and the run exited 0.
TEST(ReplayValidation, MisalignedTensorInDataModeFailsTheRun) {
  TempDir dir;
  const std::string json = dir.file("summary.json");
  const std::string path = kData + "misaligned_fp32_straddles_page.stream";
  const CliResult r = run_cli({"replay", path, "--data", "--json", json});
  EXPECT_EQ(r.exit_code, kExitRunFailed) << r.err;
  EXPECT_EQ(r.err, "kernbench: replay '" + path + "' failed: " + path +
                       ":6: kernel 'misaligned': tensor 'x' [4, 4] fp32 hbm at 0x1000000fffe: address must be "
                       "a multiple of 4 bytes (fp32 alignment) (tensor 1 x hbm fp32 4x4 @0x1000000fffe)\n");
  EXPECT_FALSE(fs::exists(json));
}

TEST(ReplayValidation, TcmBeyondCapacityFailsTheRun) {
  TempDir dir;
  const std::string json = dir.file("summary.json");
  const std::string path = kData + "tcm_beyond_capacity.stream";
  const CliResult r = run_cli({"replay", path, "--json", json});
  EXPECT_EQ(r.exit_code, kExitRunFailed) << r.err;
  EXPECT_THAT(r.err, HasSubstr(path + ":4: kernel 'tcm_high': tensor 'a' [64, 64] bf16 tcm at 0xffff0000: bytes "
                                      "[0xffff0000, 0xffff2000) must lie inside TCM [0x0, 0x400000)"));
  EXPECT_FALSE(fs::exists(json));
}

// /dev/zero was read until memory ran out.
TEST(ReplayValidation, DeviceIsBadInput) {
  const CliResult r = run_cli({"replay", "/dev/zero"});
  EXPECT_EQ(r.exit_code, kExitBadInput);
  EXPECT_EQ(r.err, "kernbench: command stream '/dev/zero': not a regular file (a character device)\n");
  EXPECT_EQ(r.out, "");
}

// tiles = 2^63 - 1 said "shape [-128, 128] must be positive" (exit 1).
TEST(BenchParameters, ProductBeyond2To63IsBadInputNamingTheParameters) {
  TempDir dir;
  const std::string json = dir.file("summary.json");
  const CliResult r = run_cli({"run", "softmax-merge", "--param", "tiles=9223372036854775807", "--json", json});
  EXPECT_EQ(r.exit_code, kExitBadInput);
  EXPECT_EQ(r.err,
            "kernbench: bench 'softmax-merge' parameters kv_tile=128, tiles=9223372036854775807, head_dim=128: V "
            "would have kv_tile x tiles x head_dim elements; expected at most 2^63 - 1 (9223372036854775807)\n");
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(fs::exists(json));
}

TEST(BenchParameters, GemmAndGqaProductsAreChecked) {
  const CliResult gemm = run_cli({"run", "gemm-composite", "--param", "m=4294967296", "--param", "k=4294967296"});
  EXPECT_EQ(gemm.exit_code, kExitBadInput);
  EXPECT_THAT(gemm.err, HasSubstr("bench 'gemm-composite' parameters m=4294967296, k=4294967296: A would have m x k "
                                  "elements; expected at most 2^63 - 1"));
  const CliResult gqa = run_cli({"run", "gqa-decode", "--param", "context=4611686018427387904"});
  EXPECT_EQ(gqa.exit_code, kExitBadInput);
  EXPECT_THAT(gqa.err, HasSubstr("bench 'gqa-decode' parameters kv_heads=8, context=4611686018427387904, "
                                 "head_dim=128: K would have kv_heads x context x head_dim elements"));
}

}  // namespace
