// What one kernel launch cost: PE_CPU fills it in as the launch runs; the
// statistics, the report and the testbenches read it.
//
// A result, not part of the PE: it lives with the traces so that they need
// not include the PE. commands.h (the PE's command set, plain data) gives
// the number of command types.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "models/isa/command_table.h"
#include "models/trace/component_table.h"

namespace kb {

struct LaunchResult {
  std::string kernel;
  uint64_t start_ps = 0, end_ps = 0;
  uint64_t latency_ps() const { return end_ps - start_ps; }
  uint64_t commands = 0;  // written to the queue (CpuOverheadCmd excluded)
  uint64_t commands_by_type[kNumCommandTypes] = {};  // indexed like Command's alternatives
  uint64_t logical_bytes = 0;
  double dispatch_cycles_exact = 0;
  uint64_t dispatch_cycles_charged = 0;
  uint64_t dispatch_ps = 0;    // PE_CPU busy dispatching
  uint64_t stall_ps = 0;       // PE_CPU held back by a full queue
  uint64_t cpu_cycles_ps = 0;  // tl.cycles(n)
  uint64_t busy_ps[kNumComponents] = {};  // per component, within this launch
  std::string error;           // non-empty: the kernel failed here
  // Figures a kernel reports about itself (tl.metric), e.g. per-tile dispatch.
  std::vector<std::pair<std::string, double>> metrics;
};

}  // namespace kb
