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

// No byte a terminal acts on: C0 (but the final line end), DEL, and no C1
// control as UTF-8 (0xc2 0x80..0x9f) or as a lone byte (0x80..0x9f).
void expect_terminal_clean(const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    EXPECT_FALSE((c < 0x20 && c != '\n') || c == 0x7f) << "byte " << int(c) << " at " << i;
    EXPECT_FALSE(c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) < 0xa0)
        << "C1 control at " << i;
    const bool continuation = i > 0 && static_cast<unsigned char>(text[i - 1]) >= 0xc2;
    EXPECT_FALSE(c >= 0x80 && c < 0xa0 && !continuation) << "lone byte " << int(c) << " at " << i;
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

}  // namespace
