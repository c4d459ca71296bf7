// Run statistics from the op log and the PE's busy and occupancy state
// (StreamingStats, below, as the run goes; compute_run_stats from kept
// records): busy time and utilisation per component (PE_CPU and the engines
// of component_table.h), op-log records by kind, command counts and logical
// bytes by type, dispatch totals, PE_CPU stall time, queue occupancy and a
// CPU- / engine-bound verdict, per kernel launch and for the whole run.
//
// The verdict (kVerdictRule): over a window (a launch or the run) of span S,
//   cpu_busy_fraction    = PE_CPU busy (DISPATCH + CPU_CYCLES, not STALL) / S
//   engine_fraction(e)   = busy time of engine e / S, e in kEngines (pe_dma,
//                          pe_gemm, pe_math, pe_tcm); the busiest engine has
//                          the largest (the first in that order on a tie)
//   CPU-bound            when cpu_busy_fraction >= the busiest engine's fraction
//   engine-bound (e)     otherwise, naming the busiest engine.
// Supporting fractions: exposed dispatch (PE_CPU busy, DISPATCH or
// CPU_CYCLES, while every engine is idle), stalled (PE_CPU held by a full
// queue), engines idle (no engine busy) and queue full (occupancy at or
// above queue_depth). kb::bottleneck() (tb/run/report.cpp) is this
// verdict's text.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/isa/command_table.h"
#include "models/trace/component_table.h"
#include "models/trace/counter_probe.h"
#include "models/trace/launch_result.h"
#include "models/trace/op_log.h"

namespace kb {

extern const std::string kVerdictRule;  // the rule above, as the stats JSON states it

struct Verdict {
  uint64_t span_ps = 0;
  bool any_busy = false;     // PE_CPU or an engine was busy
  bool engine_busy = false;  // an engine was busy: busiest_engine names one
  bool cpu_bound = true;
  Component busiest_engine = kEngines[0].component;
  double cpu_fraction = 0;     // PE_CPU busy / span
  double engine_fraction = 0;  // busiest engine busy / span
  // An empty span, or one over which nothing was busy, has no verdict: its
  // fractions would be 0/0 or say nothing (docs/observability.md, The verdict).
  bool applicable() const { return span_ps > 0 && any_busy; }
  std::string text() const;  // "CPU-bound", "engine-bound (pe_gemm)" or "n/a"
  // "PE_CPU busy 5.3% of the span, busiest engine pe_gemm 63.7%"
  std::string explanation() const;
};
// A fraction of a span as the JSON outputs give it: null over an empty span.
nlohmann::json fraction_json(uint64_t ps, uint64_t span_ps);
// The same as the tables print it: "12.5%", or "n/a" over an empty span.
std::string percent_of(uint64_t ps, uint64_t span_ps);
// The verdict from per-component busy times (indexed by Component).
Verdict make_verdict(const uint64_t (&busy_ps)[kNumComponents], uint64_t span_ps);
Verdict launch_verdict(const LaunchResult& l);

struct ComponentStats {
  uint64_t busy_ps = 0;  // PE_CPU: DISPATCH + CPU_CYCLES; engines: their stages
  double utilisation = 0;  // busy / span
  uint64_t records = 0;
};
struct KindStats {  // op-log records of one kind
  uint64_t count = 0, busy_ps = 0, bytes = 0, elements = 0;
};
struct TypeStats {  // commands of one type (CpuOverheadCmd: tl.cycles calls)
  uint64_t commands = 0, logical_bytes = 0;
};

struct WindowStats {
  std::string name;  // kernel name, or "run"
  uint64_t start_ps = 0, end_ps = 0;
  uint64_t span_ps() const { return end_ps - start_ps; }
  double fraction(uint64_t ps) const { return span_ps() ? double(ps) / double(span_ps()) : 0.0; }

  ComponentStats components[kNumComponents];  // pe_scheduler stays empty
  KindStats kinds[kNumRecordKinds];
  TypeStats by_type[kNumCommandTypes];
  uint64_t commands = 0;  // written to the queue (DISPATCH records)
  uint64_t logical_bytes = 0;
  double dispatch_cycles_exact = 0;
  uint64_t dispatch_cycles_charged = 0;
  uint64_t dispatch_ps = 0, cpu_cycles_ps = 0, stall_ps = 0, stalls = 0;
  uint64_t exposed_dispatch_ps = 0;  // PE_CPU busy while no engine is
  uint64_t engines_idle_ps = 0;      // no engine busy
  double occupancy_mean = 0;         // time-weighted
  uint32_t occupancy_max = 0;
  uint64_t queue_full_ps = 0;        // occupancy >= queue_depth
  Verdict verdict;
};

struct RunStats {
  uint32_t queue_depth = 0;
  // First launch's start .. the last launch's end, or the last record's
  // end if later.
  WindowStats run;
  std::vector<WindowStats> launches;  // one per launch, in order
};

// `records` in op-log (completion) order; launches back to back, as PE_CPU
// runs them; `occupancy`: PE_SCHEDULER's occupancy history (CounterHistory).
RunStats compute_run_stats(const std::vector<OpRecord>& records,
                           const std::vector<LaunchResult>& launches,
                           const std::vector<CounterSample>& occupancy, uint32_t queue_depth);

// The same statistics in constant memory, as the run goes: record sums from
// the op log's records as they complete (OpLog::set_stats), and the
// time-based figures (exposed dispatch, engines idle, queue occupancy) by
// integrating PE_CPU's and the engines' busy state and the queue occupancy
// between their changes, which PE_CPU and PE_SCHEDULER report.
// occupancy_max is the largest occupancy held for some time (a value that
// lasts zero time, within one instant, does not count). A launch that fails
// stops with stages still running: they have no op-log record, but count as
// busy until the stop in engines_idle and exposed_dispatch.
class StreamingStats : public OpLogSink {
 public:
  explicit StreamingStats(uint32_t queue_depth);
  void begin_launch(const std::string& kernel, uint64_t now_ps);
  void add(const OpRecord& r);
  void record(const OpRecord& r) override { add(r); }  // as the op log's sink
  void cpu_busy(uint64_t now_ps, bool busy);  // dispatching or tl.cycles
  // The dispatch under way ends at `end_ps` (PE_CPU knows it when it
  // starts: pe_cpu.h): PE_CPU is idle from then unless cpu_busy() says
  // otherwise first.
  void cpu_idle_at(uint64_t end_ps) { cpu_idle_at_ = end_ps; }
  void engine_busy(uint64_t now_ps, int engine, bool busy);  // engine: int(kb::Engine)
  void occupancy(uint64_t now_ps, uint32_t n);
  // Windows named by begin_launch() and bounded by `launches` (PE_CPU's
  // results); the run's ends at the last launch's end or the last record's,
  // whichever is later. Moves the per-launch windows out (no second copy of
  // them): call once.
  RunStats finish(const std::vector<LaunchResult>& launches);

 private:
  void advance(uint64_t now_ps);  // integrate the current state up to now
  uint32_t queue_depth_;
  WindowStats run_;
  double run_area_ = 0;  // occupancy x time, for occupancy_mean
  // The launches' windows, handed over whole by finish().
  std::vector<WindowStats> launches_;
  double launch_area_ = 0;  // of the current launch
  uint64_t last_ps_ = 0, last_record_end_ = 0;
  bool cpu_busy_ = false;
  uint64_t cpu_idle_at_ = UINT64_MAX;  // cpu_idle_at(): none
  uint32_t engines_busy_ = 0;  // bit per engine
  uint32_t occupancy_ = 0;
};

nlohmann::json to_json(const WindowStats& w);
nlohmann::json to_json(const RunStats& s);
RunStats run_stats_from_json(const nlohmann::json& j);
WindowStats window_from_json(const nlohmann::json& j);
// A window as a flat array of its fields in order, and back (the verdict
// made again from the figures): the compact form that crosses a fork
// (tb/run/result_codec.h), where a keyed object per launch costs several
// times as long.
nlohmann::json window_fields(const WindowStats& w);
WindowStats window_from_fields(const nlohmann::json& j);

// Writing a JSON document with an element per launch without holding it in
// memory (100 k launches make documents of gigabytes).
// An array written element by element: element(i) for i < size.
struct StreamedArray {
  size_t size = 0;
  std::function<nlohmann::json(size_t)> element;
};
// Writes `j` exactly as j.dump(2) would (invalid UTF-8 replaced), except
// that the value at each JSON pointer in `streamed` (e.g. "/stats/launches";
// `j` holds a placeholder there, which fixes the key's place) is the
// streamed array.
void write_json(std::ostream& os, const nlohmann::json& j,
                const std::map<std::string, StreamedArray>& streamed);
// to_json(s) with a null placeholder for "launches", and the array to
// stream in its place.
nlohmann::json to_json_without_launches(const RunStats& s);
StreamedArray launches_json(const RunStats& s);

}  // namespace kb
