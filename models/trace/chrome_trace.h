// The op log as a Chrome / Perfetto trace (the JSON "Trace Event Format"),
// written to a stream as the run goes: memory does not grow with the run.
//
// - One process per PE: add_process() gives pid 1, 2, ...
//   in call order, with a process_name metadata event carrying the PE's
//   hierarchical name (a single-PE run: pid 1, "pe"). Several PEs of one
//   simulation trace into one file this way. Each process has one thread
//   track per component with busy time (component_table.h: pe_cpu, pe_dma,
//   pe_gemm, pe_math, pe_tcm), plus "launches" (one slice per kernel
//   launch). Thread ids: component index + 1 (kb::Component order);
//   launches: 7; pe_ipc (only when it ran a stage, named at its first
//   slice): 8.
// - "otherData" carries "schema_version" (schema_version.h).
// - Every op-log record is one complete event ("ph":"X") on its component's
//   track, named "<cmd_type> <kind>" plus the math op ("MathCmd MATH exp",
//   "CompositeCmd DMA_READ", "GemmCmd DISPATCH", "DmaReadCmd STALL",
//   "CpuOverheadCmd CPU_CYCLES"); cat "cmd" (a command's DISPATCH and its
//   engine stages), "stall" or "cpu_cycles". args carry every op-log field,
//   with the exact start_ps / end_ps.
// - Times: ts and dur are microseconds (the format's unit), written as the
//   shortest decimals that read back as the intended doubles. dur is
//   (end_ps - start_ps) / 1e6, exactly. ts is start_ps / 1e6, except where a
//   reader's floating-point ts + dur of the previous slice on the track lands
//   past it (back to back: 0.085 + 0.06 = 0.14500000000000002 > 0.145): then
//   ts is that sum (about 1e-18 s later), so slices never overlap once parsed.
//   No "displayTimeUnit": Perfetto would read every ts as nanoseconds.
// - Track processes: add_track_process(name, tracks)
//   gives a process of caller-named thread tracks (tid = track index + 1,
//   sorted in that order), e.g. a mesh run's "links" process after its PEs'
//   processes, one track per link direction ("link.c0-c1"). Its slices are
//   "ph":"X" with cat "link", a name from the caller ("LINK 4096 B") and
//   args start_ps, end_ps, bytes; the ts rule below holds for them too.
//   Slices of one track come in time order without overlap, or slice()
//   throws std::logic_error; a link books its bursts ahead, into gaps
//   (ucie_link.h), and passes them to booked(), which holds each until
//   simulated time passes its start.
// - pe_scheduler's queue occupancy is a counter ("ph":"C", name
//   "pe_scheduler", series "queue_occupancy"), one event per change.
// - Flows: one flow from a command's DISPATCH slice to each of its engine
//   stages ("ph":"s" on the DISPATCH, "ph":"f" with "bp":"e" on the stage;
//   cat "cmd", name "cmd <cmd_id>", id counting the flows). Each flow event
//   has the ts, pid, tid and cat of the slice it binds to, as the Chrome
//   DevTools trace engine binds flows. Zero-length slices are not linked.
//   Flow ids count over the whole file, so no two processes share one.
// - A window (TraceWindow): only the events overlapping
//   [start_ps, end_ps) of simulated time are written, kept whole (not
//   clipped: args keep the exact start_ps / end_ps, and each event is the
//   whole trace's, byte for byte: same ts, same flow ids). A slice [s, e)
//   is written when s < end_ps and e > start_ps, a zero-length one when
//   start_ps <= s < end_ps; a flow when both of its slices are; a counter
//   sample holds until the next one, so the last one before start_ps is
//   written too when the next is later than start_ps. Metadata (process
//   and thread names) is always written. otherData carries "trace_window".
// Deterministic: the same inputs give the same bytes.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/trace/counter_probe.h"
#include "models/trace/op_log.h"

namespace kb {

struct TraceSpan {
  std::string name;
  uint64_t start_ps = 0, end_ps = 0;
};

// The span of simulated time a trace keeps; the default
// keeps everything.
struct TraceWindow {
  uint64_t start_ps = 0;
  uint64_t end_ps = std::numeric_limits<uint64_t>::max();
  bool given = false;  // --trace-window was given: otherData says so, even for all of time
  bool whole() const { return start_ps == 0 && end_ps == std::numeric_limits<uint64_t>::max(); }
  // Whether a slice [s, e) overlaps the window (see the file comment).
  bool keeps(uint64_t s, uint64_t e) const {
    return whole() || (s < end_ps && (e > start_ps || (s == e && s >= start_ps)));
  }
};

// "START:END", each a whole number of picoseconds or a decimal with a unit
// (ps, ns, us, ms, s) that comes to whole picoseconds: "100us:250us",
// "1.5ms:2ms", "0:5000000". Throws std::invalid_argument with a message
// for garbage, a value above 2^64-1 ps, or START >= END.
TraceWindow parse_trace_window(const std::string& text);

// Writes the text of a time in microseconds as the trace does: the shortest
// decimal that reads back as v, fixed notation (std::to_chars), computed
// without std::to_chars's search for v = a whole number of ps below 1000 s.
// p needs room for kTraceTimeChars.
constexpr size_t kTraceTimeChars = 400;
char* write_trace_time(char* p, double v);

// Writes std::to_chars(p, p + 32, v)'s text (the shortest decimal that
// reads back as v, fixed or scientific, whichever is shorter), faster for
// a whole number of millionths (dispatch_cycles_exact: FIXED + bytes x R).
// p needs room for 32 chars.
char* write_trace_double(char* p, double v);

constexpr int kTracePid = 1;  // the first process's (a single PE's) pid
// Thread ids from the component table: the components that are always
// listed first, in table order (1, 2, ...), then the launches' track, then
// the optional components (component_table.h). A single-PE trace's tids
// so stay what they are when an optional component is added.
constexpr int count_components(bool optional) {
  int n = 0;
  for (const ComponentInfo& c : kComponents) n += c.optional == optional ? 1 : 0;
  return n;
}
constexpr int kLaunchTid = 1 + count_components(false);
constexpr int trace_tid(Component c) {
  int before = 0;  // components of the same kind (optional or not) ahead of c in the table
  for (int i = 0; i < int(c); ++i) before += kComponents[i].optional == is_optional(c) ? 1 : 0;
  return is_optional(c) ? kLaunchTid + 1 + before : 1 + before;
}
constexpr int kNumTraceTids = kLaunchTid + 1 + count_components(true);

// The trace's slice name of a record: "<cmd_type> <kind>[ <op>]".
std::string trace_slice_name(const OpRecord& r);

class ChromeTrace;

// Where the last slice of a track ended, exactly and as a reader sums it:
// gives the ts to write so that slices never overlap once parsed.
struct TraceTrackEnd {
  uint64_t ps = 0;
  double us = 0;
  // The ts to write for a slice [start_ps, end_ps) on this track; *exact
  // (when given) tells whether it is us(start_ps).
  double next_ts(uint64_t start_ps, uint64_t end_ps, bool* exact = nullptr);
};

// One PE's tracks in a trace file: what its op log, occupancy history and
// launch results write to.
class TraceProcess : public OpLogSink {
 public:
  TraceProcess(const TraceProcess&) = delete;
  TraceProcess& operator=(const TraceProcess&) = delete;

  int pid() const { return pid_; }
  const std::string& name() const { return name_; }
  // An op-log record, as it completes: its slice, and for an engine stage
  // the flow from its command's DISPATCH.
  void record(const OpRecord& r) override;
  // The command completed: no more stages will link to its DISPATCH.
  void command_done(uint64_t cmd_id) override;
  bool wants_command_done() const override { return true; }
  void counter(const CounterSample& s);  // queue occupancy
  void launch(const TraceSpan& l);       // launches in order, at the end

 private:
  friend class ChromeTrace;
  // Writes the process's and its threads' names.
  TraceProcess(ChromeTrace& file, int pid, std::string name);
  void write_counter(const CounterSample& s);
  void finish();  // a window's held counter sample
  CounterSample pending_;  // the last sample before a window's start
  bool has_pending_ = false;
  ChromeTrace& file_;
  const int pid_;
  const std::string name_;
  TraceTrackEnd track_end_[kNumTraceTids];  // per tid
  // Names a component's thread track (metadata events).
  void name_track(Component c);
  bool named_[kNumComponents] = {};  // optional tracks are named at their first slice
  // The DISPATCH slice of every command accepted but not completed: its
  // ts, and whether a window kept it.
  struct Dispatch {
    double ts;
    uint64_t start_ps;
    bool exact;  // ts == us(start_ps)
    bool kept;
    // The ts as written in the slice, for its flows (not formatted
    // twice); 0: not kept, or longer than text.
    uint8_t text_len;
    char text[31];
  };
  using DispatchMap = std::unordered_map<uint64_t, Dispatch>;
  Dispatch& dispatch_of(uint64_t cmd_id);
  DispatchMap dispatch_ts_;
  std::vector<DispatchMap::node_type> spare_;  // nodes of completed commands
};

// A process of caller-named thread tracks (a mesh's links).
class TraceTrackProcess {
 public:
  TraceTrackProcess(const TraceTrackProcess&) = delete;
  TraceTrackProcess& operator=(const TraceTrackProcess&) = delete;

  int pid() const { return pid_; }
  const std::string& name() const { return name_; }
  size_t tracks() const { return ends_.size(); }
  // A slice [start_ps, end_ps) on track `track` (tid track + 1), cat "link".
  // Throws std::logic_error for a track out of range, end < start, or a
  // slice starting before the track's previous one ended.
  void slice(size_t track, const std::string& name, uint64_t start_ps, uint64_t end_ps, uint64_t bytes);
  // A slice booked at simulated time now_ps, possibly ahead of slices
  // booked later (a link books each burst in the first idle gap at or after
  // its arrival: busy_calendar.h), where every later booking starts at or
  // after its own now_ps. Held until now_ps passes its start, then written
  // by slice() in start order; finish() writes the rest.
  void booked(size_t track, std::string name, uint64_t start_ps, uint64_t end_ps, uint64_t bytes,
              uint64_t now_ps);

 private:
  friend class ChromeTrace;
  TraceTrackProcess(ChromeTrace& file, int pid, std::string name, const std::vector<std::string>& tracks);
  struct Held {
    uint64_t start_ps, end_ps, bytes;
    std::string name;
    bool operator>(const Held& o) const { return start_ps > o.start_ps; }
  };
  // Writes the held slices of `track` that start before `before_ps`.
  void release(size_t track, uint64_t before_ps);
  void finish();

  ChromeTrace& file_;
  const int pid_;
  const std::string name_;
  std::vector<TraceTrackEnd> ends_;  // per track
  std::vector<std::vector<Held>> held_;  // per track, a min-heap on start_ps
};

// A trace past this size is more than a browser's viewer opens (V8 caps a
// string at about 512 MB); a run warns once when its trace passes it
// (docs/observability.md, Trace windows for long runs).
inline constexpr uint64_t kTraceWarnBytes = uint64_t(512) << 20;

// The trace file: its opening, the processes' events, its closing.
class ChromeTrace {
 public:
  // Writes the opening of the file (with "otherData") to `out`. Write
  // errors are the stream's (OutputFile reports them at commit()). Only
  // the events overlapping `window` are written.
  explicit ChromeTrace(std::ostream& out, TraceWindow window = {});
  ChromeTrace(const ChromeTrace&) = delete;
  ChromeTrace& operator=(const ChromeTrace&) = delete;

  // A process for the PE named `name` (its hierarchical name, pe.name()),
  // pid = the number of processes before it + 1. Throws std::logic_error
  // for an empty name or one already added (two PEs would merge in a
  // viewer). The reference lives as long as this trace.
  TraceProcess& add_process(const std::string& name);
  // A process of thread tracks named `tracks` (in that order), pid as
  // add_process's. Throws std::logic_error for an empty or taken process
  // name, or an empty or repeated track name.
  TraceTrackProcess& add_track_process(const std::string& name, const std::vector<std::string>& tracks);
  // Processes of both kinds.
  size_t processes() const { return processes_.size() + track_processes_.size(); }
  // Closes the JSON document. Nothing may be added after.
  void finish();
  // Bytes handed to the stream so far.
  uint64_t bytes_written() const { return written_; }
  // Calls `warn` once, with bytes_written(), when the bytes handed to the
  // stream first pass `bytes` (kTraceWarnBytes).
  void warn_past(uint64_t bytes, std::function<void(uint64_t written)> warn);

 private:
  friend class TraceProcess;
  friend class TraceTrackProcess;
  // Events are written in place into buf_ (for the trace's speed):
  // room(n) gives n free bytes, done() takes what was written.
  char* room(size_t n);
  void done(char* end) { len_ = size_t(end - buf_.get()); }
  // The separator before an event, and room for n more bytes.
  char* begin_event(size_t n);
  void write_out();
  void flush_if_full();
  // A metadata event ("ph":"M"): args {key: sort} when sort >= 0, else
  // {key: value}; no tid when tid < 0.
  void metadata(int pid, const char* what, int tid, const char* key, const std::string& value, int sort);
  void check_new_process_name(const std::string& name) const;
  int next_pid() const { return int(processes()) + 1; }

  std::ostream& out_;
  const TraceWindow window_;
  static constexpr size_t kBufferBytes = 1 << 17, kFlushBytes = 1 << 16;
  std::unique_ptr<char[]> buf_;  // events not yet handed to out_
  size_t cap_ = 0, len_ = 0;
  bool first_event_ = true;
  bool finished_ = false;
  std::vector<std::unique_ptr<TraceProcess>> processes_;
  std::vector<std::unique_ptr<TraceTrackProcess>> track_processes_;
  uint64_t next_flow_id_ = 1;
  uint64_t written_ = 0;
  uint64_t warn_bytes_ = 0;
  std::function<void(uint64_t)> warn_;
};

}  // namespace kb
