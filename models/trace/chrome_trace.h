// The op log as a Chrome / Perfetto trace (the JSON "Trace Event Format"):
// opens in ui.perfetto.dev and chrome://tracing.
//
// - One process "pe" (pid 1) and one thread track per component: pe_cpu,
//   pe_dma, pe_gemm, pe_math, pe_tcm, plus "launches" (one slice per kernel
//   launch). Thread ids: component index + 1 (kb::Component order);
//   launches: 7.
// - Every op-log record is one complete event ("ph":"X") on its component's
//   track, named "<cmd_type> <kind>" plus the math op ("MathCmd MATH exp",
//   "CompositeCmd DMA_READ", "GemmCmd DISPATCH", "DmaReadCmd STALL",
//   "CpuOverheadCmd CPU_CYCLES"); cat "dispatch" (DISPATCH, CPU_CYCLES),
//   "stall" or "stage". ts / dur are microseconds (ps / 1e6); args carry
//   every op-log field, with the exact start_ps / end_ps.
// - pe_scheduler's queue occupancy is a counter ("ph":"C", name
//   "pe_scheduler", series "queue_occupancy"), one event per change.
// - The records of one command (its DISPATCH and every engine stage, e.g. a
//   composite's tile plan) are linked by flow events ("ph":"s"/"t"/"f",
//   id = cmd_id, cat "cmd", name "cmd <id>") and share args.cmd_id.
// Deterministic: the same inputs give the same bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/trace/counter_probe.h"
#include "models/trace/op_log.h"

namespace kb {

struct TraceSpan {
  std::string name;
  uint64_t start_ps = 0, end_ps = 0;
};

constexpr int kTracePid = 1;
constexpr int kLaunchTid = 7;
inline int trace_tid(Component c) { return int(c) + 1; }

// The trace's slice name of a record: "<cmd_type> <kind>[ <op>]".
std::string trace_slice_name(const OpRecord& r);

nlohmann::json chrome_trace_json(const std::vector<OpRecord>& records,
                                 const std::vector<CounterSample>& occupancy,
                                 const std::vector<TraceSpan>& launches);
// Writes chrome_trace_json() to `path`; throws std::runtime_error on failure.
void write_chrome_trace(const std::string& path, const std::vector<OpRecord>& records,
                        const std::vector<CounterSample>& occupancy,
                        const std::vector<TraceSpan>& launches);

}  // namespace kb
