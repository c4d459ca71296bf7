#include "tb/run/mesh_op_log.h"

#include <algorithm>
#include <stdexcept>
#include <tuple>

#include "models/util/sim_time.h"

namespace kb {

namespace {
// PE records between two settles (each visits every PE): the op log's
// memory is about the rows of this many records and of the links' transfers
// meanwhile, plus those not final yet.
constexpr uint64_t kSettleRecords = uint64_t(1) << 15;
}  // namespace

// One PE's records into the merge.
class MeshOpLog::PeSink : public OpLogSink {
 public:
  PeSink(MeshOpLog& log, uint32_t source) : log_(log), source_(source) {}
  void record(const OpRecord& r) override { log_.pe_record(source_, r); }

 private:
  MeshOpLog& log_;
  uint32_t source_;
};

MeshOpLog::MeshOpLog(std::ostream* out, std::vector<OpLog*> pe_logs, std::vector<std::string> pe_names,
                     std::vector<std::string> link_names)
    : out_(out), pe_logs_(std::move(pe_logs)), names_(std::move(pe_names)), pending_(Later{this}) {
  if (names_.size() != pe_logs_.size()) throw std::logic_error("MeshOpLog: a name per PE log");
  for (std::string& n : link_names) names_.push_back(std::move(n));
  for (size_t i = 0; i < pe_logs_.size(); ++i) {
    sinks_.push_back(std::make_unique<PeSink>(*this, uint32_t(i)));
    pe_logs_[i]->add_sink(sinks_.back().get());
  }
  if (out_) *out_ << op_log_csv_header() << '\n';
}

MeshOpLog::~MeshOpLog() {
  for (size_t i = 0; i < pe_logs_.size(); ++i) pe_logs_[i]->remove_sink(sinks_[i].get());
}

bool MeshOpLog::before(const Row& a, const Row& b) const {
  if (a.r.end_ps != b.r.end_ps) return a.r.end_ps < b.r.end_ps;
  if (a.source != b.source) {
    if (const int c = names_[a.source].compare(names_[b.source])) return c < 0;
  }
  if (a.link != b.link) return b.link;
  if (a.link) return std::tie(a.r.start_ps, a.r.bytes) < std::tie(b.r.start_ps, b.r.bytes);
  return canonical_less(a.r, b.r);
}

void MeshOpLog::link_transfer(size_t i, uint64_t start_ps, uint64_t end_ps, uint64_t bytes) {
  if (!out_) return;
  Row row{uint32_t(pe_logs_.size() + i), true, {}};
  row.r.start_ps = start_ps;
  row.r.end_ps = end_ps;
  row.r.bytes = bytes;
  add(row);
}

void MeshOpLog::add(Row row) {
  if (row.r.end_ps < written_before_ps_) {  // a source broke the promise above
    throw std::logic_error("mesh op log: a record of " + names_[row.source] + " ending at " +
                           std::to_string(row.r.end_ps) + " ps arrived after every row ending before " +
                           std::to_string(written_before_ps_) + " ps was written");
  }
  pending_.push(std::move(row));
}

void MeshOpLog::pe_record(uint32_t source, const OpRecord& r) {
  if (out_) add({source, false, r});
  // Counted with or without an output, so that logs settle at the same
  // records either way (the file comment).
  if (++records_since_settle_ >= kSettleRecords && !settling_ && !finished_) settle();
}

void MeshOpLog::settle() {
  records_since_settle_ = 0;
  const uint64_t now = now_ps();
  uint64_t final_before = now;
  struct Guard {  // a settle that throws leaves later ones possible
    bool& flag;
    ~Guard() { flag = false; }
  };
  settling_ = true;
  const Guard guard{settling_};
  for (OpLog* l : pe_logs_) final_before = std::min(final_before, l->settle(now));
  if (out_) drain(final_before);
}

void MeshOpLog::drain(uint64_t before_ps) {
  while (!pending_.empty() && pending_.top().r.end_ps < before_ps) {
    write(pending_.top());
    pending_.pop();
  }
  if (before_ps > written_before_ps_) written_before_ps_ = before_ps;
}

void MeshOpLog::write(const Row& row) {
  const std::string& name = names_[row.source];
  std::ostream& out = *out_;
  if (row.link) {  // kind LINK, no command
    out << name << ",LINK,0,,,-1," << row.r.start_ps << ',' << row.r.end_ps << ',' << row.r.bytes << ",0,0,0,0\n";
  } else {  // op_log_csv_row starts with the component's own name
    out << name << '.' << op_log_csv_row(row.r) << '\n';
  }
}

void MeshOpLog::finish() {
  if (finished_) return;
  finished_ = true;
  for (OpLog* l : pe_logs_) l->flush();
  if (out_) drain(UINT64_MAX);
}

}  // namespace kb
