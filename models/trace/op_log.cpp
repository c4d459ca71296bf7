#include "models/trace/op_log.h"

#include "models/trace/chrome_trace.h"
#include "models/trace/stats.h"
#include "models/util/output_file.h"

#include <charconv>
#include <stdexcept>

namespace kb {

const char* to_string(RecordKind k) {
  switch (k) {
    case RecordKind::kDispatch: return "DISPATCH";
    case RecordKind::kStall: return "STALL";
    case RecordKind::kCpuCycles: return "CPU_CYCLES";
    case RecordKind::kDmaRead: return "DMA_READ";
    case RecordKind::kDmaWrite: return "DMA_WRITE";
    case RecordKind::kCopy: return "COPY";
    case RecordKind::kFetch: return "FETCH";
    case RecordKind::kStore: return "STORE";
    case RecordKind::kGemm: return "GEMM";
    case RecordKind::kMath: return "MATH";
  }
  return "?";
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

void OpLog::configure(bool keep, const std::string& csv_path) {
  keep_ = keep;
  if (!csv_path.empty()) {
    csv_ = std::make_unique<OutputFile>(csv_path, "op log");
    csv_->stream() << op_log_csv_header() << '\n';
  }
}

OpLog::~OpLog() = default;

void OpLog::add(const OpRecord& r) {
  account(r.component, r.kind, r.start_ps, r.end_ps);
  if (stats_) stats_->add(r);
  if (keep_) records_.push_back(r);
  if (trace_) trace_->record(r);
  if (csv_) csv_->stream() << op_log_csv_row(r) << '\n';
}

void OpLog::trace_command_done(uint64_t id) { trace_->command_done(id); }

void OpLog::begin_launch() {
  for (uint64_t& b : launch_busy_ps_) b = 0;
}

void OpLog::close() {
  if (!csv_) return;
  csv_->commit();
  csv_.reset();
}

}  // namespace kb
