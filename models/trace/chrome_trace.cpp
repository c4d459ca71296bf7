#include "models/trace/chrome_trace.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "models/trace/schema_version.h"

namespace kb {

namespace {

// Trace Event Format times are microseconds; ours are integer picoseconds.
// The division is correctly rounded: the double nearest the exact value.
double us(uint64_t ps) { return double(ps) / 1e6; }

const char* category(const OpRecord& r) {
  switch (r.kind) {
    case RecordKind::kStall: return "stall";
    case RecordKind::kCpuCycles: return "cpu_cycles";
    default: return "cmd";  // must equal the flows' category (flows bind by it)
  }
}

void put_u64(std::string& s, uint64_t v) {
  char b[24];
  s.append(b, size_t(std::to_chars(b, b + sizeof b, v).ptr - b));
}

void put_i64(std::string& s, int64_t v) {
  char b[24];
  s.append(b, size_t(std::to_chars(b, b + sizeof b, v).ptr - b));
}

// The shortest decimal that reads back as `v` (fixed notation), so that a
// reader gets exactly the double this writer computed with.
void put_double(std::string& s, double v) {
  char b[400];
  s.append(b, size_t(std::to_chars(b, b + sizeof b, v, std::chars_format::fixed).ptr - b));
}

// The length of the well-formed UTF-8 sequence at p (at most n bytes), or 0.
size_t utf8_length(const unsigned char* p, size_t n) {
  const unsigned char c = p[0];
  size_t len;
  unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
  if (c >= 0xC2 && c <= 0xDF) len = 2;
  else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (n < len || p[1] < lo || p[1] > hi) return 0;
  for (size_t i = 2; i < len; ++i)
    if (p[i] < 0x80 || p[i] > 0xBF) return 0;
  return len;
}

// The inside of a JSON string: quotes, backslashes and control characters
// escaped, bytes that are not UTF-8 replaced by U+FFFD (names come from
// kernels and files).
void put_string_body(std::string& s, const char* str, size_t n) {
  static const char kHex[] = "0123456789abcdef";
  const auto* p = reinterpret_cast<const unsigned char*>(str);
  for (size_t i = 0; i < n;) {
    size_t run = i;  // plain ASCII, copied as is
    while (run < n && p[run] >= 0x20 && p[run] < 0x80 && p[run] != '"' && p[run] != '\\') ++run;
    s.append(str + i, run - i);
    i = run;
    if (i == n) break;
    const unsigned char c = p[i];
    if (c == '"' || c == '\\') {
      s += '\\';
      s += char(c);
      ++i;
    } else if (c < 0x20) {
      s += "\\u00";
      s += kHex[c >> 4];
      s += kHex[c & 15];
      ++i;
    } else if (c < 0x80) {
      s += char(c);
      ++i;
    } else if (const size_t len = utf8_length(p + i, n - i)) {
      s.append(str + i, len);
      i += len;
    } else {
      s += "\\ufffd";
      ++i;
    }
  }
}

void put_string(std::string& s, const char* str, size_t n) {
  s += '"';
  put_string_body(s, str, n);
  s += '"';
}

void put_string(std::string& s, const std::string& str) { put_string(s, str.data(), str.size()); }
void put_string(std::string& s, const char* str) { put_string(s, str, std::char_traits<char>::length(str)); }
void put_string_body(std::string& s, const char* str) {
  put_string_body(s, str, std::char_traits<char>::length(str));
}

// Appends `"key":` to s.
void put_key(std::string& s, const char* key) {
  s += '"';
  s += key;
  s += "\":";
}

}  // namespace

std::string trace_slice_name(const OpRecord& r) {
  std::string s = *r.cmd_type ? r.cmd_type : "?";
  s += ' ';
  s += to_string(r.kind);
  if (*r.op) {
    s += ' ';
    s += r.op;
  }
  return s;
}

ChromeTrace::ChromeTrace(std::ostream& out) : out_(out) {
  buf_.reserve(1 << 17);
  buf_ += "{\"otherData\":{\"generator\":\"kernbench-sc\",\"schema_version\":";
  put_i64(buf_, kSchemaVersion);
  buf_ +=
      ",\"time_unit\":\"ts and dur in microseconds; "
      "args.start_ps / end_ps exact picoseconds\"},\n\"traceEvents\":[";
}

void ChromeTrace::check_new_process_name(const std::string& name) const {
  // issue 13 item 7: a viewer merges processes of one name.
  if (name.empty()) throw std::logic_error("ChromeTrace: a process needs a name (the PE's name())");
  for (const auto& p : processes_) {
    if (p->name() == name) throw std::logic_error("ChromeTrace: two processes named '" + name + "'");
  }
  for (const auto& p : track_processes_) {
    if (p->name() == name) throw std::logic_error("ChromeTrace: two processes named '" + name + "'");
  }
}

TraceProcess& ChromeTrace::add_process(const std::string& name) {
  check_new_process_name(name);
  std::unique_ptr<TraceProcess> added(new TraceProcess(*this, next_pid(), name));
  processes_.push_back(std::move(added));
  return *processes_.back();
}

TraceTrackProcess& ChromeTrace::add_track_process(const std::string& name, const std::vector<std::string>& tracks) {
  check_new_process_name(name);
  for (size_t i = 0; i < tracks.size(); ++i) {
    if (tracks[i].empty()) throw std::logic_error("ChromeTrace: a track of '" + name + "' has no name");
    for (size_t j = 0; j < i; ++j) {
      if (tracks[j] == tracks[i]) throw std::logic_error("ChromeTrace: two tracks named '" + tracks[i] + "'");
    }
  }
  std::unique_ptr<TraceTrackProcess> added(new TraceTrackProcess(*this, next_pid(), name, tracks));
  track_processes_.push_back(std::move(added));
  return *track_processes_.back();
}

TraceProcess::TraceProcess(ChromeTrace& file, int pid, std::string name)
    : file_(file), pid_(pid), name_(std::move(name)) {
  file_.metadata(pid_, "process_name", -1, "name", name_, -1);
  file_.metadata(pid_, "thread_name", kLaunchTid, "name", "launches", -1);
  file_.metadata(pid_, "thread_sort_index", kLaunchTid, "sort_index", "", 0);
  for (const ComponentInfo& c : kComponents) {
    if (!c.busy || c.optional) continue;  // PE_SCHEDULER: a counter, not a thread
    name_track(c.component);
  }
  file_.flush_if_full();
}

void TraceProcess::name_track(Component c) {
  named_[int(c)] = true;
  file_.metadata(pid_, "thread_name", trace_tid(c), "name", to_string(c), -1);
  file_.metadata(pid_, "thread_sort_index", trace_tid(c), "sort_index", "", int(c) + 1);
}

void ChromeTrace::metadata(int pid, const char* what, int tid, const char* key, const std::string& value,
                           int sort) {
  begin_event();
  buf_ += "{\"ph\":\"M\",\"pid\":";
  put_i64(buf_, pid);
  if (tid >= 0) {
    buf_ += ",\"tid\":";
    put_i64(buf_, tid);
  }
  buf_ += ",\"name\":";
  put_string(buf_, what);
  buf_ += ",\"args\":{";
  put_key(buf_, key);
  if (sort >= 0) put_i64(buf_, sort);
  else put_string(buf_, value);
  buf_ += "}}";
}

TraceTrackProcess::TraceTrackProcess(ChromeTrace& file, int pid, std::string name,
                                     const std::vector<std::string>& tracks)
    : file_(file), pid_(pid), name_(std::move(name)), ends_(tracks.size()) {
  file_.metadata(pid_, "process_name", -1, "name", name_, -1);
  for (size_t i = 0; i < tracks.size(); ++i) {
    const int tid = int(i) + 1;
    file_.metadata(pid_, "thread_name", tid, "name", tracks[i], -1);
    file_.metadata(pid_, "thread_sort_index", tid, "sort_index", "", tid);
    file_.flush_if_full();
  }
  file_.flush_if_full();
}

void TraceTrackProcess::slice(size_t track, const std::string& name, uint64_t start_ps, uint64_t end_ps,
                              uint64_t bytes) {
  if (track >= ends_.size()) {
    throw std::logic_error("ChromeTrace: '" + name_ + "' has no track " + std::to_string(track));
  }
  TraceTrackEnd& last = ends_[track];
  if (end_ps < start_ps || start_ps < last.ps) {
    throw std::logic_error("ChromeTrace: slice [" + std::to_string(start_ps) + ", " + std::to_string(end_ps) +
                           ") ps on track " + std::to_string(track) + " of '" + name_ +
                           "' is reversed or starts before the previous one ended (" + std::to_string(last.ps) +
                           " ps)");
  }
  const double ts = last.next_ts(start_ps, end_ps);
  std::string& buf = file_.buf_;
  file_.begin_event();
  buf += "{\"ph\":\"X\",\"pid\":";
  put_i64(buf, pid_);
  buf += ",\"tid\":";
  put_i64(buf, int64_t(track) + 1);
  buf += ",\"cat\":\"link\",\"name\":";
  put_string(buf, name);
  buf += ",\"ts\":";
  put_double(buf, ts);
  buf += ",\"dur\":";
  put_double(buf, us(end_ps - start_ps));
  buf += ",\"args\":{\"start_ps\":";
  put_u64(buf, start_ps);
  buf += ",\"end_ps\":";
  put_u64(buf, end_ps);
  buf += ",\"bytes\":";
  put_u64(buf, bytes);
  buf += "}}";
  file_.flush_if_full();
}

void ChromeTrace::begin_event() {
  if (finished_) throw std::logic_error("ChromeTrace: event after finish()");
  buf_ += first_event_ ? "\n" : ",\n";
  first_event_ = false;
}

void ChromeTrace::flush_if_full() {
  if (buf_.size() < (1 << 16)) return;
  out_.write(buf_.data(), std::streamsize(buf_.size()));
  buf_.clear();
}

double TraceTrackEnd::next_ts(uint64_t start_ps, uint64_t end_ps) {
  double ts = kb::us(start_ps);
  // Only after the previous slice: an overlap in picoseconds stays one.
  if (start_ps >= ps) ts = std::max(ts, us);
  ps = end_ps;
  us = ts + kb::us(end_ps - start_ps);  // as a reader computes the end
  return ts;
}

void TraceProcess::record(const OpRecord& r) {
  std::string& buf = file_.buf_;
  const int tid = trace_tid(r.component);
  if (!named_[int(r.component)] && kComponents[int(r.component)].busy) name_track(r.component);
  const double ts = track_end_[tid].next_ts(r.start_ps, r.end_ps);
  const char* cat = category(r);
  file_.begin_event();
  buf += "{\"ph\":\"X\",\"pid\":";
  put_i64(buf, pid_);
  buf += ",\"tid\":";
  put_i64(buf, tid);
  buf += ",\"cat\":";
  put_string(buf, cat);
  buf += ",\"name\":\"";  // trace_slice_name(r), without a temporary string
  put_string_body(buf, *r.cmd_type ? r.cmd_type : "?");
  buf += ' ';
  put_string_body(buf, to_string(r.kind));
  if (*r.op) {
    buf += ' ';
    put_string_body(buf, r.op);
  }
  buf += "\",\"ts\":";
  put_double(buf, ts);
  buf += ",\"dur\":";
  put_double(buf, us(r.end_ps - r.start_ps));
  if (r.kind == RecordKind::kStall) buf += ",\"cname\":\"terrible\"";  // chrome://tracing colour
  buf += ",\"args\":{\"cmd_id\":";
  put_u64(buf, r.cmd_id);
  buf += ",\"cmd_type\":";
  put_string(buf, r.cmd_type);
  buf += ",\"kind\":";
  put_string(buf, to_string(r.kind));
  buf += ",\"tile\":";
  put_i64(buf, r.tile);
  buf += ",\"bytes\":";
  put_u64(buf, r.bytes);
  buf += ",\"start_ps\":";
  put_u64(buf, r.start_ps);
  buf += ",\"end_ps\":";
  put_u64(buf, r.end_ps);
  if (*r.op) {
    buf += ",\"op\":";
    put_string(buf, r.op);
  }
  if (r.elements) {
    buf += ",\"elements\":";
    put_u64(buf, r.elements);
  }
  if (r.kind == RecordKind::kDispatch || r.kind == RecordKind::kCpuCycles) {
    buf += ",\"logical_bytes\":";
    put_u64(buf, r.logical_bytes);
    buf += ",\"dispatch_cycles_exact\":";
    if (std::isfinite(r.dispatch_cycles_exact)) {  // shortest round-trip, as the op log
      char b[32];
      buf.append(b, size_t(std::to_chars(b, b + sizeof b, r.dispatch_cycles_exact).ptr - b));
    } else {
      buf += "null";
    }
    buf += ",\"dispatch_cycles_charged\":";
    put_u64(buf, r.dispatch_cycles_charged);
  }
  buf += "}}";

  // Flows link a command's DISPATCH to each of its stages. The DevTools
  // engine binds a flow event to the slice with its ts, pid, tid and cat,
  // and keeps one slice per ts in a flow: so one flow per (DISPATCH, stage)
  // pair, whose two ts differ (the stage starts after the dispatch ends).
  // Zero-length slices are left out: they can share a ts with a neighbour.
  if (r.cmd_id != 0 && r.end_ps > r.start_ps) {
    if (r.kind == RecordKind::kDispatch) {
      dispatch_ts_[r.cmd_id] = ts;
    } else if (r.kind != RecordKind::kStall && r.kind != RecordKind::kCpuCycles) {
      const auto it = dispatch_ts_.find(r.cmd_id);
      if (it != dispatch_ts_.end()) {
        const uint64_t id = file_.next_flow_id_++;
        auto flow_point = [&](const char* ph, int point_tid, double point_ts) {
          file_.begin_event();
          buf += "{\"ph\":\"";
          buf += ph;
          buf += "\",\"pid\":";
          put_i64(buf, pid_);
          buf += ",\"tid\":";
          put_i64(buf, point_tid);
          buf += ",\"cat\":\"cmd\",\"name\":\"cmd ";
          put_u64(buf, r.cmd_id);
          buf += "\",\"id\":";
          put_u64(buf, id);
          buf += ",\"bp\":\"e\",\"ts\":";
          put_double(buf, point_ts);
          buf += '}';
        };
        flow_point("s", trace_tid(Component::kPeCpu), it->second);
        flow_point("f", tid, ts);
      }
    }
  }
  file_.flush_if_full();
}

void TraceProcess::counter(const CounterSample& s) {
  std::string& buf = file_.buf_;
  file_.begin_event();
  buf += "{\"ph\":\"C\",\"pid\":";
  put_i64(buf, pid_);
  buf += ",\"name\":\"pe_scheduler\",\"ts\":";
  put_double(buf, us(s.time_ps));
  buf += ",\"args\":{\"queue_occupancy\":";
  put_u64(buf, s.value);
  buf += "}}";
  file_.flush_if_full();
}

void TraceProcess::launch(const TraceSpan& l) {
  std::string& buf = file_.buf_;
  const double ts = track_end_[kLaunchTid].next_ts(l.start_ps, l.end_ps);
  file_.begin_event();
  buf += "{\"ph\":\"X\",\"pid\":";
  put_i64(buf, pid_);
  buf += ",\"tid\":";
  put_i64(buf, kLaunchTid);
  buf += ",\"cat\":\"launch\",\"name\":";
  put_string(buf, l.name);
  buf += ",\"ts\":";
  put_double(buf, ts);
  buf += ",\"dur\":";
  put_double(buf, us(l.end_ps - l.start_ps));
  buf += ",\"args\":{\"start_ps\":";
  put_u64(buf, l.start_ps);
  buf += ",\"end_ps\":";
  put_u64(buf, l.end_ps);
  buf += "}}";
  file_.flush_if_full();
}

void ChromeTrace::finish() {
  if (finished_) return;
  buf_ += "\n]}\n";
  finished_ = true;
  out_.write(buf_.data(), std::streamsize(buf_.size()));
  buf_.clear();
  out_.flush();
}

}  // namespace kb
