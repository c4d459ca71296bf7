// libFuzzer harness: the configuration loader, kb::load_pe_config
// (models/config/pe_config.h).
//
// Each input is loaded twice: as a YAML config file, and as `--set`
// overrides (every line of the input holding '=' is one KEY=VALUE, applied
// over the defaults, as `kernbench --set` does). ConfigError and
// InputFileError are the expected answers to bad input. A finding is
// anything else: a crash, a sanitizer report, another exception, a hang
// (-timeout), unbounded memory (-rss_limit_mb), or a configuration that
// loads but whose dump (kernbench config) does not load back to itself, as
// docs/cli.md promises.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "models/config/pe_config.h"
#include "models/util/input_file.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

kb::fuzz::ScratchFile* g_input = nullptr;
kb::fuzz::ScratchFile* g_dump = nullptr;

void check_round_trip(const kb::PeConfig& cfg) {
  const std::string once = kb::dump_pe_config_yaml(cfg);
  g_dump->write(once);
  std::string twice;
  try {
    twice = kb::dump_pe_config_yaml(kb::load_pe_config(g_dump->path()));
  } catch (const std::exception& e) {
    kb::fuzz::finding(std::string("the dumped configuration does not load: ") + e.what() +
                      "\n--- dump:\n" + once);
  }
  if (twice != once)
    kb::fuzz::finding("dump, load, dump differs\n--- first:\n" + once + "--- second:\n" + twice);
}

std::vector<std::string> set_lines(const std::string& text) {
  constexpr size_t kMaxSets = 8;
  std::vector<std::string> sets;
  std::istringstream in(text);
  std::string line;
  while (sets.size() < kMaxSets && std::getline(in, line))
    if (line.find('=') != std::string::npos) sets.push_back(line);
  return sets;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_input = new kb::fuzz::ScratchFile(".yaml");
  g_dump = new kb::fuzz::ScratchFile(".yaml");
  std::atexit([] {
    delete g_input;
    delete g_dump;
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  g_input->write(text);
  try {
    check_round_trip(kb::load_pe_config(g_input->path()));
  } catch (const kb::ConfigError&) {
  } catch (const kb::InputFileError&) {
  }
  const std::vector<std::string> sets = set_lines(text);
  if (!sets.empty()) {
    try {
      check_round_trip(kb::load_pe_config("", sets));
    } catch (const kb::ConfigError&) {
    }
  }
  return 0;
}

// libsystemc.so references sc_main; nothing here elaborates a simulation.
extern "C" int sc_main(int, char**) { return 0; }
