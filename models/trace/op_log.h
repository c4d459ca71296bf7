// The op log: one record per PE_CPU action (dispatch, stall, cycles(n)) and
// per engine stage. Deterministic: identical inputs give identical records,
// and the CSV form is byte-identical (times are integer picoseconds).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/trace/component_table.h"
#include "models/util/output_file.h"

namespace kb {

enum class RecordKind : uint8_t {
  kDispatch,   // PE_CPU: dispatch_cycles charged before a descriptor write
  kStall,      // PE_CPU: descriptor write held back by a full queue
  kCpuCycles,  // PE_CPU: tl.cycles(n)
  kDmaRead,    // HBM -> TCM
  kDmaWrite,   // TCM -> HBM
  kCopy,       // TCM -> TCM
  kFetch,      // TCM -> engine (composite tile plan)
  kStore,      // engine -> TCM (composite tile plan)
  kGemm,
  kMath,
};
const char* to_string(RecordKind k);

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

// The CSV header; README documents each column.
const char* op_log_csv_header();
std::string op_log_csv_row(const OpRecord& r);

class StreamingStats;  // stats.h
class ChromeTrace;     // chrome_trace.h

class OpLog {
 public:
  // keep: hold records in memory; csv_path: also stream them to a file,
  // written through an OutputFile (throws OutputError if it cannot be).
  void configure(bool keep, const std::string& csv_path);
  ~OpLog();
  void add(const OpRecord& r);
  // Whether records are kept or streamed; when not, producers call
  // account() instead of building a record (the per-command fast path).
  bool wants_records() const {
    return keep_ || csv_ != nullptr || stats_ != nullptr || trace_ != nullptr;
  }
  // Statistics computed as records complete; PE_CPU and PE_SCHEDULER also
  // report their busy state and queue occupancy to it. Null: none.
  void set_stats(StreamingStats* s) { stats_ = s; }
  StreamingStats* stats() const { return stats_; }
  // The Chrome trace, written as records are added. Null: none.
  void set_trace(ChromeTrace* t) { trace_ = t; }
  // PE_SCHEDULER: command `id` completed (the trace links no more to it).
  void command_done(uint64_t id) {
    if (trace_) trace_command_done(id);
  }
  void account(Component c, RecordKind kind, uint64_t start_ps, uint64_t end_ps) {
    // PE_CPU is busy while dispatching or spending tl.cycles, not while stalled.
    if (kind != RecordKind::kStall) {
      busy_ps_[int(c)] += end_ps - start_ps;
      launch_busy_ps_[int(c)] += end_ps - start_ps;
    }
    ++count_;
    ++count_by_component_[int(c)];
  }
  const std::vector<OpRecord>& records() const { return records_; }
  // Sum of record durations per component, kept whether or not records are.
  uint64_t busy_ps(Component c) const { return busy_ps_[int(c)]; }
  uint64_t count() const { return count_; }
  uint64_t count(Component c) const { return count_by_component_[int(c)]; }
  // Busy time since the last begin_launch(): kernel launches run back to
  // back and drain, so every record falls inside its launch.
  void begin_launch();
  uint64_t launch_busy_ps(Component c) const { return launch_busy_ps_[int(c)]; }
  // Checks every write and moves the CSV file into place (throws
  // OutputError). Without it, nothing is written under the CSV's name.
  void close();

 private:
  bool keep_ = true;
  std::unique_ptr<OutputFile> csv_;
  StreamingStats* stats_ = nullptr;
  ChromeTrace* trace_ = nullptr;
  void trace_command_done(uint64_t id);
  std::vector<OpRecord> records_;
  uint64_t busy_ps_[kNumComponents] = {};
  uint64_t launch_busy_ps_[kNumComponents] = {};
  uint64_t count_ = 0;
  uint64_t count_by_component_[kNumComponents] = {};
};

}  // namespace kb
