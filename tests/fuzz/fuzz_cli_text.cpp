// libFuzzer harness: the sweep and trace-window text parsers, both fed
// untrusted text: a sweep point file for `kernbench sweep --collect`
// (kb::parse_sweep_point, tb/cli/sweep_jobs.h) and a `--trace-window
// START:END` value (kb::parse_trace_window, models/trace/chrome_trace.h).
// The first byte picks the parser, the rest is the text; an odd byte feeds
// the text to the `--max-memory SIZE` parser too (kb::parse_memory_size,
// tb/run/memory_limit.h). BenchError (a point file) and
// std::invalid_argument (a window, a size) are the expected answers to bad
// text. What a point file yields must write back to a point that parses to
// the same fields; a window must have START < END; a size is at least
// 1 MiB and reads back the same written in bytes. Anything
// else (a crash, a sanitizer report, another exception) is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "models/trace/chrome_trace.h"
#include "tb/benches/bench_registry.h"
#include "tb/cli/sweep_jobs.h"
#include "tb/run/memory_limit.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    kb::SweepPoint p;
    try {
      p = kb::parse_sweep_point(text, "point-0.json", 10000);
    } catch (const kb::BenchError&) {
      return 0;
    }
    const kb::SweepPoint q = kb::parse_sweep_point(kb::sweep_point_json(p).dump(), "again.json", 10000);
    if (q.index != p.index || q.points != p.points || q.bench != p.bench || q.sweep_id != p.sweep_id ||
        q.axes != p.axes || q.values != p.values || q.cells != p.cells || q.error != p.error) {
      std::abort();
    }
    return 0;
  }
  try {
    const kb::TraceWindow w = kb::parse_trace_window(text);
    if (!(w.start_ps < w.end_ps)) std::abort();
  } catch (const std::invalid_argument&) {
  }
  try {
    const uint64_t bytes = kb::parse_memory_size(text);
    if (bytes < (uint64_t(1) << 20)) std::abort();
    const std::string in_bytes = std::to_string(bytes);
    // Written in bytes it reads back the same, within the parser's 15 digits.
    if (in_bytes.size() <= 15 && kb::parse_memory_size(in_bytes + "B") != bytes) std::abort();
  } catch (const std::invalid_argument&) {
  }
  return 0;
}

// libsystemc.so references sc_main; nothing here elaborates a simulation.
extern "C" int sc_main(int, char**) { return 0; }
