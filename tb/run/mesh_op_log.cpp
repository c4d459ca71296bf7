#include "tb/run/mesh_op_log.h"

#include <algorithm>
#include <stdexcept>
#include <tuple>

#include "models/util/sim_time.h"

namespace kb {

namespace {
// Rows pending before the PE logs are settled and the final ones written;
// after a settle, at least twice what is still pending (rows ending at or
// after now), so settling, which visits every PE, stays rare.
constexpr size_t kSettleRows = size_t(1) << 15;
}  // namespace

// One PE's records into the merge.
class MeshOpLog::PeSink : public OpLogSink {
 public:
  PeSink(MeshOpLog& log, uint32_t source) : log_(log), source_(source) {}
  void record(const OpRecord& r) override { log_.add({source_, false, r}); }

 private:
  MeshOpLog& log_;
  uint32_t source_;
};

MeshOpLog::MeshOpLog(std::ostream& out, std::vector<OpLog*> pe_logs, std::vector<std::string> pe_names,
                     std::vector<std::string> link_names)
    : out_(out), pe_logs_(std::move(pe_logs)), names_(std::move(pe_names)), pending_(Later{this}),
      settle_at_(kSettleRows) {
  if (names_.size() != pe_logs_.size()) throw std::logic_error("MeshOpLog: a name per PE log");
  for (std::string& n : link_names) names_.push_back(std::move(n));
  for (size_t i = 0; i < pe_logs_.size(); ++i) {
    sinks_.push_back(std::make_unique<PeSink>(*this, uint32_t(i)));
    pe_logs_[i]->add_sink(sinks_.back().get());
  }
  out_ << op_log_csv_header() << '\n';
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
  if (pending_.size() > peak_pending_) peak_pending_ = pending_.size();
  if (pending_.size() < settle_at_ || settling_ || finished_) return;
  const uint64_t now = now_ps();
  uint64_t final_before = now;
  settling_ = true;
  for (OpLog* l : pe_logs_) final_before = std::min(final_before, l->settle(now));
  settling_ = false;
  drain(final_before);
  settle_at_ = std::max(kSettleRows, 2 * pending_.size());
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
  if (row.link) {  // kind LINK, no command
    out_ << name << ",LINK,0,,,-1," << row.r.start_ps << ',' << row.r.end_ps << ',' << row.r.bytes << ",0,0,0,0\n";
  } else {  // op_log_csv_row starts with the component's own name
    out_ << name << '.' << op_log_csv_row(row.r) << '\n';
  }
}

void MeshOpLog::finish() {
  if (finished_) return;
  finished_ = true;
  for (OpLog* l : pe_logs_) l->flush();
  drain(UINT64_MAX);
}

}  // namespace kb
