#include "models/trace/op_log.h"

#include "models/trace/chrome_trace.h"
#include "models/trace/stats.h"
#include "models/util/output_file.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <stdexcept>

namespace kb {

bool canonical_less(const OpRecord& a, const OpRecord& b) {
  if (a.end_ps != b.end_ps) return a.end_ps < b.end_ps;
  if (a.cmd_id != b.cmd_id) return a.cmd_id < b.cmd_id;
  if (a.component != b.component) return a.component < b.component;
  if (a.tile != b.tile) return a.tile < b.tile;
  if (a.kind != b.kind) return a.kind < b.kind;
  if (a.start_ps != b.start_ps) return a.start_ps < b.start_ps;
  // Ties on the key only between rows that differ in nothing else in real
  // logs; the other columns make the order total all the same.
  if (const int c = std::strcmp(a.op, b.op)) return c < 0;
  if (a.bytes != b.bytes) return a.bytes < b.bytes;
  if (a.elements != b.elements) return a.elements < b.elements;
  if (a.logical_bytes != b.logical_bytes) return a.logical_bytes < b.logical_bytes;
  if (a.dispatch_cycles_charged != b.dispatch_cycles_charged) {
    return a.dispatch_cycles_charged < b.dispatch_cycles_charged;
  }
  if (a.dispatch_cycles_exact != b.dispatch_cycles_exact) {
    return a.dispatch_cycles_exact < b.dispatch_cycles_exact;
  }
  return std::strcmp(a.cmd_type, b.cmd_type) < 0;
}

const char* op_log_csv_header() {
  return "component,kind,cmd_id,cmd_type,op,tile,start_ps,end_ps,bytes,"
         "elements,logical_bytes,dispatch_cycles_exact,dispatch_cycles_charged";
}

std::string op_log_csv_row(const OpRecord& r) {
  // Shortest round-trip form of the exact dispatch value: deterministic and
  // lossless.
  char exact[32];
  auto res = std::to_chars(exact, exact + sizeof exact, r.dispatch_cycles_exact);
  *res.ptr = '\0';
  std::string s;
  s.reserve(128);
  s += to_string(r.component); s += ',';
  s += to_string(r.kind); s += ',';
  s += std::to_string(r.cmd_id); s += ',';
  s += r.cmd_type; s += ',';
  s += r.op; s += ',';
  s += std::to_string(r.tile); s += ',';
  s += std::to_string(r.start_ps); s += ',';
  s += std::to_string(r.end_ps); s += ',';
  s += std::to_string(r.bytes); s += ',';
  s += std::to_string(r.elements); s += ',';
  s += std::to_string(r.logical_bytes); s += ',';
  s += exact; s += ',';
  s += std::to_string(r.dispatch_cycles_charged);
  return s;
}

// The kept records: records() reads them.
class OpLog::Keeper : public OpLogSink {
 public:
  explicit Keeper(std::vector<OpRecord>& records) : records_(records) {}
  void record(const OpRecord& r) override { records_.push_back(r); }

 private:
  std::vector<OpRecord>& records_;
};

// The CSV file, streamed through an OutputFile and moved into place at close().
class OpLog::CsvFile : public OpLogSink {
 public:
  explicit CsvFile(const std::string& path) : file_(path, "op log") { file_.stream() << op_log_csv_header() << '\n'; }
  void record(const OpRecord& r) override { file_.stream() << op_log_csv_row(r) << '\n'; }
  void commit() { file_.commit(); }

 private:
  OutputFile file_;
};

OpLog::OpLog() : keeper_(std::make_unique<Keeper>(records_)) { sinks_.push_back(keeper_.get()); }

void OpLog::configure(bool keep, const std::string& csv_path) {
  remove_sink(keeper_.get());
  if (keep) add_sink(keeper_.get());
  if (!csv_path.empty()) {
    if (csv_) remove_sink(csv_.get());
    csv_ = std::make_unique<CsvFile>(csv_path);
    add_sink(csv_.get());
  }
}

OpLog::~OpLog() = default;

void OpLog::add_sink(OpLogSink* s) {
  if (!s || std::find(sinks_.begin(), sinks_.end(), s) != sinks_.end()) return;
  sinks_.push_back(s);
  if (s->wants_command_done()) done_sinks_.push_back(s);
  update_wants();
}

void OpLog::remove_sink(OpLogSink* s) {
  sinks_.erase(std::remove(sinks_.begin(), sinks_.end(), s), sinks_.end());
  done_sinks_.erase(std::remove(done_sinks_.begin(), done_sinks_.end(), s), done_sinks_.end());
  update_wants();
}

void OpLog::set_stats(StreamingStats* s) {
  if (stats_) remove_sink(stats_);
  stats_ = s;
  add_sink(s);
}

void OpLog::set_trace(TraceProcess* t) {
  if (trace_) remove_sink(trace_);
  trace_ = t;
  add_sink(t);
}

void OpLog::add(const OpRecord& r) {
  if (has_ahead_ && ahead_.end_ps <= r.end_ps) {  // time has reached it
    has_ahead_ = false;
    add(ahead_);
  }
  if (r.end_ps != instant_ps_) {
    if (r.end_ps < instant_ps_) {
      throw std::logic_error("op log: a " + std::string(to_string(r.component)) + " " + to_string(r.kind) +
                             " record of command #" + std::to_string(r.cmd_id) + " ends at " +
                             std::to_string(r.end_ps) + " ps, after a record ending at " +
                             std::to_string(instant_ps_) + " ps was added (records are added as they end)");
    }
    emit_instant();  // time moved on: the earlier instant is complete
    instant_ps_ = r.end_ps;
  }
  account(r.component, r.kind, r.start_ps, r.end_ps);
  instant_.push_back(r);
}

void OpLog::emit(const OpRecord& r) {
  for (OpLogSink* s : sinks_) s->record(r);
}

void OpLog::flush() {
  if (has_ahead_) {  // the run is over: its end has come (a write never taken, PE_CPU stalled)
    has_ahead_ = false;
    add(ahead_);
  }
  emit_instant();
}

void OpLog::emit_instant() {
  if (instant_.size() > 1) std::sort(instant_.begin(), instant_.end(), canonical_less);
  emitting_ = true;
  try {
    for (const OpRecord& r : instant_) emit(r);
  } catch (...) {
    emitting_ = false;
    throw;
  }
  emitting_ = false;
  instant_.clear();
  for (uint64_t id : done_) tell_command_done(id);
  done_.clear();
}

void OpLog::tell_command_done(uint64_t id) {
  for (OpLogSink* s : done_sinks_) s->command_done(id);
}

void OpLog::begin_launch() {
  flush();
  for (Totals& t : totals_) t.launch_busy_ps = 0;
}

void OpLog::close() {
  flush();
  if (!csv_) return;
  remove_sink(csv_.get());
  csv_->commit();
  csv_.reset();
}

}  // namespace kb
