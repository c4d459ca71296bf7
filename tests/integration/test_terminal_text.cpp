// Text from an input that reaches the terminal is escaped and bounded
// (tb/cli/cli_util.h terminal_safe): C0 and C1 controls, DEL and bytes that
// are not UTF-8 never reach stderr raw, and an error of any length prints
// as one line of at most about kTerminalSafeMax bytes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tb/cli/cli_util.h"
#include "tests/test_files.h"

namespace {

using kb::cli::terminal_safe;
using ::testing::HasSubstr;

// No byte a terminal acts on: well-formed UTF-8 (RFC 3629) without C0
// controls (but the final line end), DEL or C1 controls (U+0080..U+009F).
void expect_terminal_clean(const std::string& text) {
  const auto b = [&text](size_t k) { return static_cast<unsigned char>(text[k]); };
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = b(i);
    if (c < 0x80) {
      EXPECT_FALSE((c < 0x20 && c != '\n') || c == 0x7f) << "byte " << int(c) << " at " << i;
      ++i;
      continue;
    }
    const size_t n = c >= 0xc2 && c < 0xe0 ? 2 : c >= 0xe0 && c < 0xf0 ? 3 : c >= 0xf0 && c < 0xf5 ? 4 : 0;
    ASSERT_NE(n, 0u) << "byte " << int(c) << " at " << i << " starts no UTF-8 sequence";
    ASSERT_LE(i + n, text.size()) << "a sequence cut at the end";
    uint32_t cp = c & (0xff >> (n + 1));
    for (size_t k = 1; k < n; ++k) {
      ASSERT_EQ(b(i + k) & 0xc0, 0x80) << "not a continuation byte at " << i + k;
      cp = (cp << 6) | (b(i + k) & 0x3f);
    }
    EXPECT_FALSE(cp >= 0x80 && cp < 0xa0) << "C1 control at " << i;
    EXPECT_FALSE((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp < 0xe000))
        << "overlong, surrogate or beyond U+10FFFF at " << i;
    i += n;
  }
}

TEST(TerminalText, EscapesControlsAndKeepsText) {
  EXPECT_EQ(terminal_safe("plain, with UTF-8: \xc3\xa9\xe2\x82\xac"), "plain, with UTF-8: \xc3\xa9\xe2\x82\xac");
  EXPECT_EQ(terminal_safe("a\x1b[31mb\n\x7f"), "a\\x1b[31mb\\x0a\\x7f");
  EXPECT_EQ(terminal_safe("csi \xc2\x9b" "31m"), "csi \\u009b31m");        // U+009B as UTF-8
  EXPECT_EQ(terminal_safe("lone \x9b" "31m"), "lone \\x9b31m");             // 8-bit CSI, not UTF-8
  EXPECT_EQ(terminal_safe("nbsp \xc2\xa0ok"), "nbsp \xc2\xa0ok");           // U+00A0 is text
  EXPECT_EQ(terminal_safe("cut \xe2\x82"), "cut \\xe2\\x82");               // a truncated sequence
  EXPECT_EQ(terminal_safe("overlong \xc0\xaf \xe0\x80\xaf"), "overlong \\xc0\\xaf \\xe0\\x80\\xaf");
  EXPECT_EQ(terminal_safe("surrogate \xed\xa0\x80"), "surrogate \\xed\\xa0\\x80");
  EXPECT_EQ(terminal_safe("lead \xf8\x80\x80 \xff"), "lead \\xf8\\x80\\x80 \\xff");  // no such lead byte
  EXPECT_EQ(terminal_safe("beyond \xf4\x90\x80\x80"), "beyond \\xf4\\x90\\x80\\x80");
}

TEST(TerminalText, BoundsTheLength) {
  const std::string huge(100000, 'x');
  const std::string out = terminal_safe(huge);
  EXPECT_LT(out.size(), kb::cli::kTerminalSafeMax + 40);
  EXPECT_THAT(out, HasSubstr("... (100000 bytes)"));
  const std::string controls(5000, '\x1b');
  EXPECT_LT(terminal_safe(controls).size(), kb::cli::kTerminalSafeMax + 40);
  EXPECT_EQ(terminal_safe(std::string(kb::cli::kTerminalSafeMax, 'y')), std::string(kb::cli::kTerminalSafeMax, 'y'));
}

// A bench parameter's value, a --set value and a config key reach stderr
// only escaped.
TEST(TerminalText, BadInputMessagesAreEscaped) {
  kb::test::TempDir dir;
  const std::string config = dir.file("c.yaml");
  kb::test::write_file(config, "pe:\n  attrs:\n    clock_freq_ghz\x1b[2J: 1.0\n");
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"run", "gqa-decode", "--param", "dtype=\x1b]0;owned\x07"},
           {"run", "gqa-decode", "--param", "context=\xc2\x9b" "2J"},
           {"run", "gqa-decode", "--param", "kv_tile=" + std::string(20000, '\x1b')},
           {"run", "gqa-decode", "--param", "context=\xf8\x80\x80"},
           {"run", "gqa-decode", "--config", config},
       }) {
    const kb::test::CliResult r = kb::test::run_program(KERNBENCH_BIN, args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_LT(r.err.size(), kb::cli::kTerminalSafeMax + 200) << args.back().size();
    expect_terminal_clean(r.err);
  }
}

// CLI11's own messages quote an argument; a run's error names an output's
// path: both escaped.
TEST(TerminalText, ParseAndRunErrorsAreEscaped) {
  const kb::test::CliResult parse = kb::test::run_program(KERNBENCH_BIN, {"run", "gqa-decode", "\x1b[31mX"});
  EXPECT_EQ(parse.exit_code, 2) << parse.err;
  EXPECT_THAT(parse.err, HasSubstr("\\x1b[31mX"));
  expect_terminal_clean(parse.err);
  const kb::test::CliResult run =
      kb::test::run_program(KERNBENCH_BIN, {"run", "gemm-composite", "--trace", "/nonexistent\x1b[31m/x.json"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.err, HasSubstr("\\x1b[31m"));
  expect_terminal_clean(run.err);
}

}  // namespace
