// A command stream parsed (tb/replay/command_stream.h, the format): one
// step per item line, one section per `kernel`, commands holding the
// stream's tensor IDs until a kernel replays them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "models/isa/commands.h"
#include "models/isa/tensor_table.h"

namespace kb::cmdstream {

struct TensorLine {
  Handle id = 0;
  std::string name;
  MemSpace space = MemSpace::kHbm;
  Dtype dtype = Dtype::kFp32;
  int64_t rows = 0, cols = 0, row_stride = 0;
  uint64_t address = 0;
};

struct HostRandomLine {
  Handle id = 0;
  uint64_t seed = 0;
  double lo = -1.0, hi = 1.0;  // tl.host_random's defaults
};

struct WaitLine {};

// One replay step; commands hold stream IDs until the kernel runs. The
// line's text is not copied: messages cut it from the stream's text.
struct Step {
  std::variant<Command, TensorLine, HostRandomLine, WaitLine> item;
  int line = 0;
  uint32_t text_len = 0;
  size_t text_begin = 0;
};

// A `kernel` section: steps [begin, end) of the stream.
struct Section {
  std::string name;
  size_t begin = 0, end = 0;
};

// The file's ID -> live handle map, shared by its kernels (IDs are
// file-wide, like handles in the run's descriptor table).
using IdMap = std::unordered_map<Handle, Handle>;

// A parsed stream, shared by the kernels made from it. Memory is linear in
// the file: its text once, one Step per item line, one Section per kernel.
struct Stream {
  std::string source;
  std::string text;
  std::vector<Step> steps;
  std::vector<Section> sections;
  IdMap ids;
  std::string_view line_text(const Step& s) const {
    return std::string_view(text).substr(s.text_begin, s.text_len);
  }
};

// Parses st.text into st.steps and st.sections, checking syntax and IDs
// only. Throws StreamError "SOURCE:LINE: what (the line)".
void parse(Stream& st);

}  // namespace kb::cmdstream
