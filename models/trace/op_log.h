// The op log: one record per PE_CPU action (dispatch, stall, cycles(n)) and
// per engine stage. Deterministic: identical inputs give identical records,
// and the CSV form is byte-identical (times are integer picoseconds).
//
// Order: records arrive as they end, so end_ps never
// decreases (checked: a record ending earlier than one already added is a
// modelling error, std::logic_error). Records ending at the same ps are
// held until time moves on (or flush()) and then passed on in the canonical
// order of canonical_less():
//     end_ps, cmd_id, component, tile, kind, start_ps,
// then the remaining columns (op, bytes, elements, logical_bytes,
// dispatch_cycles_charged, dispatch_cycles_exact, cmd_type), so records
// equal in the key are identical rows. Same-time records thus do not depend
// on the order in which the SystemC kernel ran its processes. cmd_id 0 is
// PE_CPU's tl.cycles (CPU_CYCLES): those come first at their end time; a
// command's DISPATCH and STALL records are told apart by kind and, being
// PE_CPU's, come before its engine stages of the same end time. Every
// consumer (kept records, CSV, statistics, trace) sees this order. Memory:
// one instant's records.
//
// One record may be known before it ends: PE_CPU sends a descriptor write
// when its dispatch starts (pe_cpu.h), so it knows then when the DISPATCH
// record ends. It adds it ahead (add_ahead); the log takes it as added
// when time reaches its end, that is when a record ending then or later is
// added, or at flush(). So the record is there even if the write is never
// taken (a run that deadlocks), and never late.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/trace/component_table.h"
#include "models/util/output_file.h"

namespace kb {

struct OpRecord {
  Component component = Component::kPeCpu;
  RecordKind kind = RecordKind::kDispatch;
  uint64_t cmd_id = 0;
  const char* cmd_type = "";  // command_type_name(): static storage
  const char* op = "";        // math op or "" (static storage)
  int64_t tile = -1;          // hardware tile within a composite, -1 if none
  uint64_t start_ps = 0;
  uint64_t end_ps = 0;
  uint64_t bytes = 0;
  uint64_t elements = 0;
  uint32_t logical_bytes = 0;         // dispatch records
  double dispatch_cycles_exact = 0;   // dispatch records: FIXED + bytes x R
  uint64_t dispatch_cycles_charged = 0;
};

// The canonical order of records (see the top of this file); a total
// order on rows.
bool canonical_less(const OpRecord& a, const OpRecord& b);

// The CSV header; docs/cli.md ("The op log") documents each column.
const char* op_log_csv_header();
std::string op_log_csv_row(const OpRecord& r);

// A consumer of the op log (docs/conventions.md 19): it sees every record
// in canonical order, and, if it asks, each command as it completes. The
// kept records, the CSV file, the statistics and the Chrome trace are sinks;
// a new consumer is a new sink, not an edit of the log.
class OpLogSink {
 public:
  virtual ~OpLogSink() = default;
  virtual void record(const OpRecord& r) = 0;
  // Command `id` completed: told after its last record, to a sink whose
  // wants_command_done() was true when it was added.
  virtual void command_done(uint64_t id) { (void)id; }
  virtual bool wants_command_done() const { return false; }
};

class StreamingStats;  // stats.h
class TraceProcess;    // chrome_trace.h

class OpLog {
 public:
  // keep: hold records in memory; csv_path: also stream them to a file,
  // written through an OutputFile (throws OutputError if it cannot be).
  void configure(bool keep, const std::string& csv_path);
  OpLog();
  ~OpLog();
  OpLog(const OpLog&) = delete;
  OpLog& operator=(const OpLog&) = delete;
  // A record as it ends (its end_ps is now). Throws std::logic_error if it
  // ends before a record already added.
  void add(const OpRecord& r);
  // A record ending later than every record added so far: added when time
  // reaches its end (above), or when the next one is added ahead (its start,
  // by then, is past the previous one's end). cancel_ahead() drops it (the
  // PE stopped before it ended).
  void add_ahead(const OpRecord& r) {
    if (has_ahead_) {  // the previous one has ended by now
      has_ahead_ = false;
      add(ahead_);
    }
    ahead_ = r;
    has_ahead_ = true;
  }
  void cancel_ahead() { has_ahead_ = false; }
  // Passes the held records (those of the latest end time) on, in canonical
  // order. begin_launch() and close() flush; so does time moving on. Call
  // it at the end of a run, before reading records() or the statistics.
  void flush();
  // Passes on the held records of an instant before `now_ps` (time has
  // moved on: no record can join them). Returns the earliest end a record
  // passed on from now on can have: now_ps; the end of a record added ahead
  // (it may still be cancelled, so it stays held); or the held instant when
  // the log is passing it on already (settle() called from one of its
  // sinks). A reader merging several logs (a mesh's op log,
  // tb/run/mesh_op_log.h) takes every record ending before the least of
  // these as final.
  uint64_t settle(uint64_t now_ps) {
    if (emitting_) return instant_ps_;
    if (!instant_.empty() && instant_ps_ < now_ps) emit_instant();
    return has_ahead_ && ahead_.end_ps < now_ps ? ahead_.end_ps : now_ps;
  }
  // Whether records are kept or streamed; when not, producers call
  // account() instead of building a record (the per-command fast path).
  bool wants_records() const { return wants_records_; }
  // Statistics computed as records complete; PE_CPU and PE_SCHEDULER also
  // report their busy state and queue occupancy to it. Null: none.
  void set_stats(StreamingStats* s);
  StreamingStats* stats() const { return stats_; }
  // This PE's process in the Chrome trace, written as records are added.
  // Null: none.
  void set_trace(TraceProcess* t);
  // Any other consumer; it must outlive the log's last record (close()).
  void add_sink(OpLogSink* s);
  void remove_sink(OpLogSink* s);
  // PE_SCHEDULER: command `id` completed (the trace links no more to it),
  // after its last record: told to the sinks that want it after the held
  // records.
  void command_done(uint64_t id) {
    if (done_sinks_.empty()) return;
    if (instant_.empty()) tell_command_done(id);
    else done_.push_back(id);
  }
  void account(Component c, RecordKind kind, uint64_t start_ps, uint64_t end_ps) {
    // PE_CPU is busy while dispatching or spending tl.cycles, not while stalled.
    Totals& t = totals_[int(c)];
    if (kind != RecordKind::kStall) {
      t.busy_ps += end_ps - start_ps;
      t.launch_busy_ps += end_ps - start_ps;
    }
    ++count_;
    ++t.count;
  }
  // The kept records, up to the last flush().
  const std::vector<OpRecord>& records() const { return records_; }
  // Sum of record durations per component, kept whether or not records are.
  uint64_t busy_ps(Component c) const { return totals_[int(c)].busy_ps; }
  uint64_t count() const { return count_; }
  uint64_t count(Component c) const { return totals_[int(c)].count; }
  // Busy time since the last begin_launch(): kernel launches run back to
  // back and drain, so every record falls inside its launch. Flushes: the
  // previous launch's records reach the statistics before the new launch.
  void begin_launch();
  uint64_t launch_busy_ps(Component c) const { return totals_[int(c)].launch_busy_ps; }
  // Flushes, checks every write and moves the CSV file into place (throws
  // OutputError). Without it, nothing is written under the CSV's name.
  void close();

 private:
  // Hot first: account() runs per stage on every PE of a
  // mesh, whose PEs evict each other's lines; the flag and the total count
  // sit together and a component's totals are one 32-byte block, so an
  // account() touches about two lines, not five.
  struct Totals {
    uint64_t busy_ps = 0;         // sum of record durations
    uint64_t launch_busy_ps = 0;  // the same since the last begin_launch()
    uint64_t count = 0;           // records
  };
  bool wants_records_ = true;  // a sink is there
  uint64_t count_ = 0;
  Totals totals_[kNumComponents];
  void update_wants() { wants_records_ = !sinks_.empty(); }
  // The log's own sinks: the kept records (records()) and the CSV file.
  class Keeper;
  class CsvFile;
  std::unique_ptr<Keeper> keeper_;
  std::unique_ptr<CsvFile> csv_;
  StreamingStats* stats_ = nullptr;
  TraceProcess* trace_ = nullptr;
  std::vector<OpLogSink*> sinks_;       // in the order they were added
  std::vector<OpLogSink*> done_sinks_;  // those that want command_done
  void tell_command_done(uint64_t id);
  void emit(const OpRecord& r);  // to every sink
  void emit_instant();           // the held records, in canonical order
  std::vector<OpRecord> records_;  // the Keeper's
  std::vector<OpRecord> instant_;  // held records, all ending at instant_ps_
  std::vector<uint64_t> done_;     // commands completed while records were held
  uint64_t instant_ps_ = 0;        // the latest end time added
  OpRecord ahead_;                 // add_ahead()'s record
  bool has_ahead_ = false;
  bool emitting_ = false;          // emit_instant() is passing records on
};

}  // namespace kb
