// A mesh run's op log (tb/run/mesh_run.h): every PE's records and every
// link's transfers as one CSV, streamed as the run goes, so its memory is
// that of the records not yet final, not of the whole run.
//
// Order: by end time, then component name (the hierarchy, "cube6.pe3"),
// then a PE's record before a link's, then the PE's canonical order
// (models/trace/op_log.h) or a link's start and bytes. A row is final once
// nothing can still arrive before it: every source adds records that end
// at the model's time or later (a PE's op log holds an instant until time
// moves on, settle() passes it on; a link books a transfer when it is
// asked, ending then or later). So the rows ending before now are written
// once every PE's log has settled; that happens every kSettleRecords PE
// records, and at finish().
//
// Settling passes a PE's held instant on to all of its log's sinks, a
// trace among them, earlier than time moving on would. So that a trace is
// the same with or without the op log, a mesh run with a trace makes a
// MeshOpLog without an output too: it only settles the logs, at the same
// records.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <queue>
#include <string>
#include <vector>

#include "models/trace/op_log.h"

namespace kb {

class MeshOpLog {
 public:
  // pe_names[i] names pe_logs[i]; link_names the links, in their order.
  // `out` null: no op log, the logs are only settled (above).
  MeshOpLog(std::ostream* out, std::vector<OpLog*> pe_logs, std::vector<std::string> pe_names,
            std::vector<std::string> link_names);
  ~MeshOpLog();
  MeshOpLog(const MeshOpLog&) = delete;
  MeshOpLog& operator=(const MeshOpLog&) = delete;
  // Link `i` booked a transfer (now or later).
  void link_transfer(size_t i, uint64_t start_ps, uint64_t end_ps, uint64_t bytes);
  // The run is over: every log is flushed and every row written.
  void finish();

 private:
  struct Row {
    uint32_t source;  // index into names_: PEs first, then links
    bool link;
    OpRecord r;
  };
  struct Later {  // the priority queue's order: the greatest row on top is the earliest
    const MeshOpLog* log;
    bool operator()(const Row& a, const Row& b) const { return log->before(b, a); }
  };
  class PeSink;
  bool before(const Row& a, const Row& b) const;
  void add(Row row);
  void pe_record(uint32_t source, const OpRecord& r);
  void settle();
  void drain(uint64_t before_ps);  // writes every row ending before before_ps
  void write(const Row& row);

  std::ostream* out_;
  std::vector<OpLog*> pe_logs_;
  std::vector<std::string> names_;
  std::vector<std::unique_ptr<PeSink>> sinks_;
  std::priority_queue<Row, std::vector<Row>, Later> pending_;
  uint64_t records_since_settle_ = 0;
  uint64_t written_before_ps_ = 0;  // every row ending before this is written
  bool settling_ = false;
  bool finished_ = false;
};

}  // namespace kb
