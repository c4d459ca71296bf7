// Shared by the replay harnesses (fuzz_replay, fuzz_ipc_replay): a mutated
// stream made parseable, so that the fuzzer reaches the simulation instead
// of stopping at the parser's first complaint.
#pragma once

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "tb/replay/command_stream.h"

namespace kb::fuzz {

inline constexpr const char* kHeader = "# kernbench command stream v1";

// Parses `text`, dropping lines the parser rejects (at most kMaxRepairs);
// throws the last StreamError when it cannot repair.
inline std::vector<std::pair<std::string, Kernel>> parse_repairing(std::string text, const std::string& source) {
  constexpr int kMaxRepairs = 64;
  for (int repair = 0;; ++repair) {
    try {
      return parse_command_stream(text, source);
    } catch (const StreamError& e) {
      const std::string m = e.what();
      if (repair == kMaxRepairs || m.compare(0, source.size() + 1, source + ":") != 0) throw;
      const size_t line = std::strtoull(m.c_str() + source.size() + 1, nullptr, 10);
      if (line == 0) throw;
      size_t begin = 0;
      for (size_t l = 1; l < line && begin != std::string::npos; ++l) {
        begin = text.find('\n', begin);
        if (begin != std::string::npos) ++begin;
      }
      if (begin == std::string::npos || begin > text.size()) throw;
      const size_t end = text.find('\n', begin);
      const size_t len = end == std::string::npos ? std::string::npos : end - begin + 1;
      if (line == 1) {
        if (text.compare(0, std::string(kHeader).size() + 1, std::string(kHeader) + "\n") == 0) throw;
        text.replace(begin, len, std::string(kHeader) + "\n");
      } else {
        text.erase(begin, len);
      }
    }
  }
}

}  // namespace kb::fuzz
