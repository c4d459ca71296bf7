#include "models/trace/chrome_trace.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <stdexcept>
#include <utility>

#include "models/trace/schema_version.h"

namespace kb {

namespace {

// Trace Event Format times are microseconds; ours are integer picoseconds.
// The division is correctly rounded: the double nearest the exact value.
double us(uint64_t ps) { return double(ps) / 1e6; }

// Whole picoseconds below 1e15 (1000 s): the exact decimal ps / 1e6 has at
// most 15 significant digits, so no other decimal as short reads back as
// the same double us(ps) (DBL_DIG = 15), and it is the one std::to_chars
// picks for it.
constexpr uint64_t kExactPsBelow = 1000000000000000ull;

char* write_exact_us(char* p, uint64_t ps) {
  p = std::to_chars(p, p + 20, ps / 1000000).ptr;
  uint32_t frac = uint32_t(ps % 1000000);
  if (frac == 0) return p;
  int digits = 6;
  while (frac % 10 == 0) {
    frac /= 10;
    --digits;
  }
  *p++ = '.';
  for (int i = digits - 1; i >= 0; --i) {
    p[i] = char('0' + frac % 10);
    frac /= 10;
  }
  return p + digits;
}

// us(ps) as write_trace_time writes it.
char* write_ps_as_us(char* p, uint64_t ps) {
  if (ps < kExactPsBelow) return write_exact_us(p, ps);
  return std::to_chars(p, p + kTraceTimeChars, us(ps), std::chars_format::fixed).ptr;
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

// Room an event needs besides its strings (numbers, keys, a fallback
// double of up to 309 integer digits), and per byte of an escaped string
// ("\u00XX", "\ufffd").
constexpr size_t kEventRoom = 2048;
constexpr size_t kEscapedRoom = 6;

// Bytes a JSON string holds as they are: printable ASCII but '"' and '\\'.
struct PlainBytes {
  bool is[256] = {};
  constexpr PlainBytes() {
    for (int c = 0x20; c < 0x80; ++c) is[c] = c != '"' && c != '\\';
  }
  constexpr bool operator[](unsigned char c) const { return is[c]; }
};
constexpr PlainBytes kPlain;

// Whether 8 bytes are all kPlain (word-at-a-time byte tests).
constexpr bool plain8(uint64_t x) {
  constexpr uint64_t k01 = 0x0101010101010101ull, k80 = k01 * 0x80;
  auto has_below = [](uint64_t v, uint64_t b) { return (v - k01 * b) & ~v & k80; };  // a byte < b (b <= 0x80)
  return ((x & k80) | has_below(x, 0x20) | has_below(x ^ (k01 * '"'), 1) | has_below(x ^ (k01 * '\\'), 1)) == 0;
}
static_assert(plain8(0x4142434445464748ull) && !plain8(0x4142432245464748ull) && !plain8(0x41425c4445464748ull) &&
              !plain8(0x4142431f45464748ull) && !plain8(0x41428044454647ffull) && plain8(0x7e7e7e7e7e7e7e7eull));

// Writes into room reserved in ChromeTrace's buffer (no
// std::string appends, no strlen of literals, no temporaries).
struct Out {
  char* p;
  template <size_t N>
  void lit(const char (&s)[N]) {
    std::memcpy(p, s, N - 1);
    p += N - 1;
  }
  void ch(char c) { *p++ = c; }
  // Most numbers of a trace (pid, tid, tile, small counts) have one or two
  // digits: written without std::to_chars's length search.
  void u64(uint64_t v) {
    if (v < 10) {
      *p++ = char('0' + v);
    } else if (v < 100) {
      p[0] = char('0' + v / 10);
      p[1] = char('0' + v % 10);
      p += 2;
    } else {
      p = std::to_chars(p, p + 20, v).ptr;
    }
  }
  void i64(int64_t v) {
    if (v < 0) *p++ = '-';  // a record's tile -1: the short path too
    u64(v < 0 ? 0 - uint64_t(v) : uint64_t(v));
  }
  void time(double v) { p = write_trace_time(p, v); }
  void time_ps(uint64_t ps) { p = write_ps_as_us(p, ps); }  // us(ps), without a division
  // A slice's ts: us(start_ps) when `exact` (TraceTrackEnd::next_ts).
  void ts(double v, uint64_t start_ps, bool exact) { p = exact ? write_ps_as_us(p, start_ps) : write_trace_time(p, v); }
  // The inside of a JSON string: quotes, backslashes and control characters
  // escaped, bytes that are not UTF-8 replaced by U+FFFD (names come from
  // kernels and files).
  void str_body(const char* str, size_t n) {
    static const char kHex[] = "0123456789abcdef";
    const auto* s = reinterpret_cast<const unsigned char*>(str);
    // Names are short and plain: checked and copied 8 bytes at a time,
    // the rest in the pass that checks them.
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      uint64_t x;
      std::memcpy(&x, str + i, 8);
      if (!plain8(x)) break;
      std::memcpy(p + i, &x, 8);
    }
    while (i < n && kPlain[s[i]]) {
      p[i] = str[i];
      ++i;
    }
    p += i;
    while (i < n) {
      size_t run = i;  // plain ASCII, copied as is
      while (run < n && kPlain[s[run]]) ++run;
      std::memcpy(p, str + i, run - i);
      p += run - i;
      i = run;
      if (i == n) break;
      const unsigned char c = s[i];
      if (c == '"' || c == '\\') {
        *p++ = '\\';
        *p++ = char(c);
        ++i;
      } else if (c < 0x20) {
        lit("\\u00");
        *p++ = kHex[c >> 4];
        *p++ = kHex[c & 15];
        ++i;
      } else if (const size_t len = utf8_length(s + i, n - i)) {
        std::memcpy(p, str + i, len);
        p += len;
        i += len;
      } else {
        lit("\\ufffd");
        ++i;
      }
    }
  }
  // Text already written at [from, to), again (a name's parts in args).
  void again(const char* from, const char* to) {
    std::memcpy(p, from, size_t(to - from));
    p += to - from;
  }
  void str(const char* s, size_t n) {
    *p++ = '"';
    str_body(s, n);
    *p++ = '"';
  }
  // `"key":`
  template <size_t N>
  void key(const char (&k)[N]) {
    *p++ = '"';
    lit(k);
    lit("\":");
  }
};

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

// A v that is a whole number of millionths below 1e9 is written without
// to_chars's search: its exact decimal has at most 15 significant digits,
// so it is the shortest (see kExactPsBelow), written fixed unless
// scientific is shorter.
char* write_trace_double(char* p, double v) {
  if (v > 0 && v < 1e9) {
    const uint64_t m = uint64_t(v * 1e6 + 0.5);
    if (m < kExactPsBelow && us(m) == v) {
      char* const end = write_exact_us(p, m);
      // Significant digits: without the leading "0." and zeros of v < 1,
      // without the trailing zeros of a whole v.
      const char* first = p;
      while (*first == '0' || *first == '.') ++first;
      const char* last = end;
      if (std::memchr(p, '.', size_t(end - p)) == nullptr)
        while (last[-1] == '0') --last;
      const size_t digits = size_t(last - first) - (std::memchr(first, '.', size_t(last - first)) ? 1 : 0);
      const size_t scientific = digits + (digits > 1 ? 1 : 0) + 4;  // "d.ddde+XX": 1e-6 <= v < 1e9
      if (size_t(end - p) <= scientific) return end;
    }
  }
  return std::to_chars(p, p + 32, v).ptr;
}

char* write_trace_time(char* p, double v) {
  if (v >= 0 && !std::signbit(v) && v < 1e9) {
    const uint64_t ps = uint64_t(v * 1e6 + 0.5);
    if (ps < kExactPsBelow && us(ps) == v) return write_exact_us(p, ps);
  }
  return std::to_chars(p, p + kTraceTimeChars, v, std::chars_format::fixed).ptr;
}

namespace {

// "1.5us" -> 1500000; false for garbage or overflow.
bool parse_time_ps(const std::string& text, uint64_t& ps) {
  static const std::pair<const char*, uint64_t> kUnits[] = {
      {"ps", 1}, {"ns", 1000}, {"us", 1000000}, {"ms", 1000000000}, {"s", 1000000000000}};
  size_t digits_end = 0;
  while (digits_end < text.size() && (std::isdigit(static_cast<unsigned char>(text[digits_end])) || text[digits_end] == '.'))
    ++digits_end;
  const std::string number = text.substr(0, digits_end), unit = text.substr(digits_end);
  uint64_t scale = 0;
  if (unit.empty()) scale = 1;  // plain picoseconds
  for (const auto& [name, s] : kUnits)
    if (unit == name) scale = s;
  const size_t dot = number.find('.');
  const std::string whole = number.substr(0, dot);
  const std::string frac = dot == std::string::npos ? "" : number.substr(dot + 1);
  if (scale == 0 || whole.empty() || (dot != std::string::npos && frac.empty()) ||
      frac.find('.') != std::string::npos)
    return false;
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  uint64_t w = 0;
  for (char c : whole) {
    if (w > (kMax - uint64_t(c - '0')) / 10) return false;
    w = w * 10 + uint64_t(c - '0');
  }
  if (w > kMax / scale) return false;
  ps = w * scale;
  // The fraction must come to whole picoseconds.
  uint64_t place = scale;
  for (char c : frac) {
    const uint64_t d = uint64_t(c - '0');
    if (place % 10 != 0) {
      if (d != 0) return false;
      continue;
    }
    place /= 10;
    if (ps > kMax - d * place) return false;
    ps += d * place;
  }
  return true;
}

}  // namespace

TraceWindow parse_trace_window(const std::string& text) {
  const size_t colon = text.find(':');
  TraceWindow w;
  if (colon == std::string::npos || !parse_time_ps(text.substr(0, colon), w.start_ps) ||
      !parse_time_ps(text.substr(colon + 1), w.end_ps)) {
    throw std::invalid_argument(
        "expected START:END in simulated time, each a whole number of ps or a number with a unit "
        "ps, ns, us, ms or s that comes to whole picoseconds (e.g. 100us:250us), at most 2^64-1 ps");
  }
  if (w.start_ps >= w.end_ps) {
    throw std::invalid_argument("START (" + std::to_string(w.start_ps) + " ps) must be before END (" +
                                std::to_string(w.end_ps) + " ps)");
  }
  w.given = true;
  return w;
}

ChromeTrace::ChromeTrace(std::ostream& out, TraceWindow window) : out_(out), window_(window) {
  buf_.reset(new char[kBufferBytes]);
  cap_ = kBufferBytes;
  Out o{room(kEventRoom)};
  o.lit("{\"otherData\":{\"generator\":\"kernbench-sc\",\"schema_version\":");
  o.i64(kSchemaVersion);
  o.lit(",\"time_unit\":\"ts and dur in microseconds; args.start_ps / end_ps exact picoseconds\"");
  if (window_.given || !window_.whole()) {  // TraceWindow: a windowed trace says which span
    o.lit(",\"trace_window\":{\"start_ps\":");
    o.u64(window_.start_ps);
    o.lit(",\"end_ps\":");
    o.u64(window_.end_ps);
    o.ch('}');
  }
  o.lit("},\n\"traceEvents\":[");
  done(o.p);
}

void ChromeTrace::check_new_process_name(const std::string& name) const {
  // A viewer merges processes of one name.
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
  Out o{begin_event(kEventRoom + kEscapedRoom * (std::strlen(what) + std::strlen(key) + value.size()))};
  o.lit("{\"ph\":\"M\",\"pid\":");
  o.i64(pid);
  if (tid >= 0) {
    o.lit(",\"tid\":");
    o.i64(tid);
  }
  o.lit(",\"name\":");
  o.str(what, std::strlen(what));
  o.lit(",\"args\":{\"");
  o.str_body(key, std::strlen(key));
  o.lit("\":");
  if (sort >= 0) o.i64(sort);
  else o.str(value.data(), value.size());
  o.lit("}}");
  done(o.p);
}

TraceTrackProcess::TraceTrackProcess(ChromeTrace& file, int pid, std::string name,
                                     const std::vector<std::string>& tracks)
    : file_(file), pid_(pid), name_(std::move(name)), ends_(tracks.size()), held_(tracks.size()) {
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
  bool exact = false;
  const double ts = last.next_ts(start_ps, end_ps, &exact);  // outside the window too: ts as in the whole trace
  if (!file_.window_.keeps(start_ps, end_ps)) return;
  Out o{file_.begin_event(kEventRoom + kEscapedRoom * name.size())};
  o.lit("{\"ph\":\"X\",\"pid\":");
  o.i64(pid_);
  o.lit(",\"tid\":");
  o.i64(int64_t(track) + 1);
  o.lit(",\"cat\":\"link\",\"name\":");
  o.str(name.data(), name.size());
  o.lit(",\"ts\":");
  o.ts(ts, start_ps, exact);
  o.lit(",\"dur\":");
  o.time_ps(end_ps - start_ps);
  o.lit(",\"args\":{\"start_ps\":");
  o.u64(start_ps);
  o.lit(",\"end_ps\":");
  o.u64(end_ps);
  o.lit(",\"bytes\":");
  o.u64(bytes);
  o.lit("}}");
  file_.done(o.p);
  file_.flush_if_full();
}

void TraceTrackProcess::booked(size_t track, std::string name, uint64_t start_ps, uint64_t end_ps, uint64_t bytes,
                               uint64_t now_ps) {
  if (track >= held_.size()) {
    throw std::logic_error("ChromeTrace: '" + name_ + "' has no track " + std::to_string(track));
  }
  std::vector<Held>& h = held_[track];
  h.push_back({start_ps, end_ps, bytes, std::move(name)});
  std::push_heap(h.begin(), h.end(), std::greater<>());
  release(track, now_ps);
}

void TraceTrackProcess::release(size_t track, uint64_t before_ps) {
  std::vector<Held>& h = held_[track];
  while (!h.empty() && h.front().start_ps < before_ps) {
    std::pop_heap(h.begin(), h.end(), std::greater<>());
    const Held next = std::move(h.back());
    h.pop_back();
    slice(track, next.name, next.start_ps, next.end_ps, next.bytes);
  }
}

void TraceTrackProcess::finish() {
  for (size_t t = 0; t < held_.size(); ++t) release(t, std::numeric_limits<uint64_t>::max());
  for (size_t t = 0; t < held_.size(); ++t) {  // a slice at 2^64-1 ps
    for (const Held& x : held_[t]) slice(t, x.name, x.start_ps, x.end_ps, x.bytes);
    held_[t].clear();
  }
}

char* ChromeTrace::room(size_t n) {
  if (len_ + n > cap_) {
    write_out();
    if (n > cap_) {  // an event with very long names
      buf_.reset(new char[n]);
      cap_ = n;
    }
  }
  return buf_.get() + len_;
}

char* ChromeTrace::begin_event(size_t n) {
  if (finished_) throw std::logic_error("ChromeTrace: event after finish()");
  Out o{room(n + 2)};
  if (!first_event_) o.ch(',');
  o.ch('\n');
  first_event_ = false;
  return o.p;
}

void ChromeTrace::write_out() {
  out_.write(buf_.get(), std::streamsize(len_));
  written_ += len_;
  len_ = 0;
  if (warn_ && written_ > warn_bytes_) {
    const auto warn = std::move(warn_);
    warn_ = nullptr;
    warn(written_);
  }
}

void ChromeTrace::warn_past(uint64_t bytes, std::function<void(uint64_t)> warn) {
  warn_bytes_ = bytes;
  warn_ = std::move(warn);
}

void ChromeTrace::flush_if_full() {
  if (len_ >= kFlushBytes) write_out();
}

double TraceTrackEnd::next_ts(uint64_t start_ps, uint64_t end_ps, bool* exact) {
  const double start_us = kb::us(start_ps);
  double ts = start_us;
  // Only after the previous slice: an overlap in picoseconds stays one.
  if (start_ps >= ps) ts = std::max(ts, us);
  if (exact) *exact = ts == start_us;
  ps = end_ps;
  us = ts + kb::us(end_ps - start_ps);  // as a reader computes the end
  return ts;
}

// A command's entry; a node of a completed command is reused, so a long
// run allocates none per command (the nodes in use are bounded by the
// commands in flight).
TraceProcess::Dispatch& TraceProcess::dispatch_of(uint64_t cmd_id) {
  auto it = dispatch_ts_.find(cmd_id);
  if (it != dispatch_ts_.end()) return it->second;
  if (spare_.empty()) return dispatch_ts_.emplace(cmd_id, Dispatch{}).first->second;
  auto node = std::move(spare_.back());
  spare_.pop_back();
  node.key() = cmd_id;
  return dispatch_ts_.insert(std::move(node)).position->second;
}

void TraceProcess::command_done(uint64_t cmd_id) {
  auto node = dispatch_ts_.extract(cmd_id);
  if (!node.empty()) spare_.push_back(std::move(node));
}

void TraceProcess::record(const OpRecord& r) {
  const int tid = trace_tid(r.component);
  if (!named_[int(r.component)] && kComponents[int(r.component)].busy) name_track(r.component);
  // ts and flow ids are computed for every record, so that a window's
  // events are the whole trace's, byte for byte.
  bool exact = false;
  const double ts = track_end_[tid].next_ts(r.start_ps, r.end_ps, &exact);
  const bool kept = file_.window_.keeps(r.start_ps, r.end_ps);
  // Flows link a command's DISPATCH to each of its stages. The DevTools
  // engine binds a flow event to the slice with its ts, pid, tid and cat,
  // and keeps one slice per ts in a flow: so one flow per (DISPATCH, stage)
  // pair, whose two ts differ (the stage starts after the dispatch ends).
  // Zero-length slices are left out: they can share a ts with a neighbour.
  // In a window, a flow is written when both of its slices are.
  uint64_t flow_id = 0;
  const Dispatch* flow_from = nullptr;
  Dispatch* dispatch = nullptr;  // this record's, to keep its ts text
  if (r.cmd_id != 0 && r.end_ps > r.start_ps) {
    if (r.kind == RecordKind::kDispatch) {
      dispatch = &dispatch_of(r.cmd_id);  // a node: stays put while the map grows
      dispatch->ts = ts;
      dispatch->start_ps = r.start_ps;
      dispatch->exact = exact;
      dispatch->kept = kept;
      dispatch->text_len = 0;
    } else if (r.kind != RecordKind::kStall && r.kind != RecordKind::kCpuCycles) {
      const auto it = dispatch_ts_.find(r.cmd_id);
      if (it != dispatch_ts_.end()) {
        const uint64_t id = file_.next_flow_id_++;
        if (kept && it->second.kept) {
          flow_id = id;
          flow_from = &it->second;
        }
      }
    }
  }
  if (!kept) return;
  const char* cmd_type = *r.cmd_type ? r.cmd_type : "?";
  const size_t cmd_type_len = std::strlen(cmd_type), op_len = std::strlen(r.op);
  const char* kind = to_string(r.kind);
  const size_t kind_len = std::strlen(kind);
  Out o{file_.begin_event(3 * kEventRoom + kEscapedRoom * 2 * (cmd_type_len + op_len + kind_len))};
  o.lit("{\"ph\":\"X\",\"pid\":");
  o.i64(pid_);
  o.lit(",\"tid\":");
  o.i64(tid);
  switch (r.kind) {  // cat
    case RecordKind::kStall: o.lit(",\"cat\":\"stall"); break;
    case RecordKind::kCpuCycles: o.lit(",\"cat\":\"cpu_cycles"); break;
    default: o.lit(",\"cat\":\"cmd"); break;  // must equal the flows' category (flows bind by it)
  }
  o.lit("\",\"name\":\"");  // trace_slice_name(r), without a temporary string
  // Each part is escaped once; args copy it.
  const char* const cmd_type_text = o.p;
  o.str_body(cmd_type, cmd_type_len);
  const char* const kind_text = o.p;
  o.ch(' ');
  o.str_body(kind, kind_len);
  const char* const op_text = o.p;
  if (op_len) {
    o.ch(' ');
    o.str_body(r.op, op_len);
  }
  const char* const name_end = o.p;
  o.lit("\",\"ts\":");
  const char* const ts_text = o.p;
  o.ts(ts, r.start_ps, exact);
  const size_t ts_len = size_t(o.p - ts_text);
  if (dispatch && ts_len <= sizeof dispatch->text) {
    std::memcpy(dispatch->text, ts_text, ts_len);
    dispatch->text_len = uint8_t(ts_len);
  }
  o.lit(",\"dur\":");
  o.time_ps(r.end_ps - r.start_ps);
  if (r.kind == RecordKind::kStall) o.lit(",\"cname\":\"terrible\"");  // chrome://tracing colour
  o.lit(",\"args\":{\"cmd_id\":");
  const char* const cmd_id_text = o.p;
  o.u64(r.cmd_id);
  const char* const cmd_id_end = o.p;
  o.lit(",\"cmd_type\":\"");
  if (*r.cmd_type) o.again(cmd_type_text, kind_text);  // else "", not the name's "?"
  o.lit("\",\"kind\":\"");
  o.again(kind_text + 1, op_text);
  o.ch('"');
  o.lit(",\"tile\":");
  o.i64(r.tile);
  o.lit(",\"bytes\":");
  o.u64(r.bytes);
  o.lit(",\"start_ps\":");
  o.u64(r.start_ps);
  o.lit(",\"end_ps\":");
  o.u64(r.end_ps);
  if (op_len) {
    o.lit(",\"op\":\"");
    o.again(op_text + 1, name_end);
    o.ch('"');
  }
  if (r.elements) {
    o.lit(",\"elements\":");
    o.u64(r.elements);
  }
  if (r.kind == RecordKind::kDispatch || r.kind == RecordKind::kCpuCycles) {
    o.lit(",\"logical_bytes\":");
    o.u64(r.logical_bytes);
    o.lit(",\"dispatch_cycles_exact\":");
    if (std::isfinite(r.dispatch_cycles_exact)) {  // shortest round-trip, as the op log
      o.p = write_trace_double(o.p, r.dispatch_cycles_exact);
    } else {
      o.lit("null");
    }
    o.lit(",\"dispatch_cycles_charged\":");
    o.u64(r.dispatch_cycles_charged);
  }
  o.lit("}}");
  if (flow_id) {
    // The two flow events differ in ph, tid and ts: the rest is written
    // once and copied; cmd_id and ts are the slices' text.
    o.lit(",\n{\"ph\":\"s\",\"pid\":");
    o.i64(pid_);
    o.lit(",\"tid\":");
    o.i64(trace_tid(Component::kPeCpu));
    const char* const same = o.p;
    o.lit(",\"cat\":\"cmd\",\"name\":\"cmd ");
    o.again(cmd_id_text, cmd_id_end);
    o.lit("\",\"id\":");
    o.u64(flow_id);
    o.lit(",\"bp\":\"e\",\"ts\":");
    const char* const same_end = o.p;
    if (flow_from->text_len) o.again(flow_from->text, flow_from->text + flow_from->text_len);
    else o.ts(flow_from->ts, flow_from->start_ps, flow_from->exact);
    o.lit("},\n{\"ph\":\"f\",\"pid\":");
    o.i64(pid_);
    o.lit(",\"tid\":");
    o.i64(tid);
    o.again(same, same_end);
    o.again(ts_text, ts_text + ts_len);
    o.ch('}');
  }
  file_.done(o.p);
  file_.flush_if_full();
}

void TraceProcess::counter(const CounterSample& s) {
  // A sample holds until the next one: in a window, the last one before it
  // is written too (when the next is later than the window's start), so the
  // counter opens with its value.
  const TraceWindow& w = file_.window_;
  if (s.time_ps < w.start_ps) {
    pending_ = s;
    has_pending_ = true;
    return;
  }
  if (has_pending_ && s.time_ps > w.start_ps) write_counter(pending_);
  has_pending_ = false;
  if (s.time_ps < w.end_ps) write_counter(s);
}

void TraceProcess::finish() {
  if (has_pending_) write_counter(pending_);  // no sample in or after the window
  has_pending_ = false;
}

void TraceProcess::write_counter(const CounterSample& s) {
  Out o{file_.begin_event(kEventRoom)};
  o.lit("{\"ph\":\"C\",\"pid\":");
  o.i64(pid_);
  o.lit(",\"name\":\"pe_scheduler\",\"ts\":");
  o.time_ps(s.time_ps);
  o.lit(",\"args\":{\"queue_occupancy\":");
  o.u64(s.value);
  o.lit("}}");
  file_.done(o.p);
  file_.flush_if_full();
}

void TraceProcess::launch(const TraceSpan& l) {
  bool exact = false;
  const double ts = track_end_[kLaunchTid].next_ts(l.start_ps, l.end_ps, &exact);
  if (!file_.window_.keeps(l.start_ps, l.end_ps)) return;
  Out o{file_.begin_event(kEventRoom + kEscapedRoom * l.name.size())};
  o.lit("{\"ph\":\"X\",\"pid\":");
  o.i64(pid_);
  o.lit(",\"tid\":");
  o.i64(kLaunchTid);
  o.lit(",\"cat\":\"launch\",\"name\":");
  o.str(l.name.data(), l.name.size());
  o.lit(",\"ts\":");
  o.ts(ts, l.start_ps, exact);
  o.lit(",\"dur\":");
  o.time_ps(l.end_ps - l.start_ps);
  o.lit(",\"args\":{\"start_ps\":");
  o.u64(l.start_ps);
  o.lit(",\"end_ps\":");
  o.u64(l.end_ps);
  o.lit("}}");
  file_.done(o.p);
  file_.flush_if_full();
}

void ChromeTrace::finish() {
  if (finished_) return;
  for (auto& p : processes_) p->finish();
  for (auto& p : track_processes_) p->finish();
  Out o{room(8)};
  o.lit("\n]}\n");
  done(o.p);
  finished_ = true;
  write_out();
  out_.flush();
}

}  // namespace kb
