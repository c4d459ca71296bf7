#include "models/trace/stats.h"

#include <algorithm>
#include <cstdio>

#include "models/util/json_fields.h"

namespace kb {

namespace {

std::string verdict_rule() {
  std::string engines;
  for (const EngineInfo& e : kEngines) {
    if (is_optional(e.engine)) continue;  // the rule's text stays the single-PE one
    engines += (engines.empty() ? "" : ", ") + std::string(to_string(e.component));
  }
  return "CPU-bound when PE_CPU's busy fraction of the span (DISPATCH + CPU_CYCLES) is at least the "
         "busiest engine's (" + engines + "); otherwise engine-bound, naming that engine";
}

}  // namespace

const std::string kVerdictRule = verdict_rule();

namespace {

bool is_cpu_busy(const OpRecord& r) {
  return r.component == Component::kPeCpu && r.kind != RecordKind::kStall;
}

std::string percent(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * f);
  return buf;
}

struct Interval {
  uint64_t start, end;
};

// Length of the part of `cpu` (disjoint) not covered by `busy` (any).
uint64_t uncovered(std::vector<Interval> cpu, std::vector<Interval> busy, uint64_t* busy_union) {
  std::sort(busy.begin(), busy.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
  std::vector<Interval> merged;
  for (const Interval& i : busy) {
    if (i.end == i.start) continue;
    if (!merged.empty() && i.start <= merged.back().end) merged.back().end = std::max(merged.back().end, i.end);
    else merged.push_back(i);
  }
  *busy_union = 0;
  for (const Interval& m : merged) *busy_union += m.end - m.start;
  std::sort(cpu.begin(), cpu.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
  uint64_t total = 0;
  size_t k = 0;
  for (const Interval& c : cpu) {
    uint64_t covered = 0;
    while (k < merged.size() && merged[k].end <= c.start) ++k;
    for (size_t m = k; m < merged.size() && merged[m].start < c.end; ++m) {
      covered += std::min(c.end, merged[m].end) - std::max(c.start, merged[m].start);
    }
    total += (c.end - c.start) - covered;
  }
  return total;
}

// The sums a record adds to its window (shared by the record-based and the
// streaming statistics).
void add_sums(WindowStats& w, const OpRecord& r) {
  const uint64_t d = r.end_ps - r.start_ps;
  KindStats& k = w.kinds[int(r.kind)];
  ++k.count;
  k.busy_ps += d;
  k.bytes += r.bytes;
  k.elements += r.elements;
  ComponentStats& c = w.components[int(r.component)];
  ++c.records;
  if (r.kind != RecordKind::kStall) c.busy_ps += d;
  switch (r.kind) {
    case RecordKind::kDispatch: {
      ++w.commands;
      w.logical_bytes += r.logical_bytes;
      w.dispatch_cycles_exact += r.dispatch_cycles_exact;
      w.dispatch_cycles_charged += r.dispatch_cycles_charged;
      w.dispatch_ps += d;
      const int type = command_type_index(r.cmd_type);  // PE_CPU records only: not per stage
      if (type >= 0) {
        ++w.by_type[type].commands;
        w.by_type[type].logical_bytes += r.logical_bytes;
      }
      break;
    }
    case RecordKind::kCpuCycles: {
      w.cpu_cycles_ps += d;
      const int type = command_type_index(r.cmd_type);
      if (type >= 0) ++w.by_type[type].commands;
      break;
    }
    case RecordKind::kStall:
      w.stall_ps += d;
      ++w.stalls;
      break;
    default:
      break;
  }
}

// Utilisation and verdict, once the window's busy times are complete.
void finish_window(WindowStats& w) {
  for (ComponentStats& c : w.components) c.utilisation = w.fraction(c.busy_ps);
  uint64_t busy[kNumComponents];
  for (int c = 0; c < kNumComponents; ++c) busy[c] = w.components[c].busy_ps;
  w.verdict = make_verdict(busy, w.span_ps());
}

// Accumulates one window's records; finish() derives the rest.
class Window {
 public:
  Window(std::string name, uint64_t start, uint64_t end) {
    w_.name = std::move(name);
    w_.start_ps = start;
    w_.end_ps = end;
  }
  void add(const OpRecord& r) {
    add_sums(w_, r);
    if (is_cpu_busy(r)) cpu_.push_back({r.start_ps, r.end_ps});
    if (is_engine(r.component)) engines_.push_back({r.start_ps, r.end_ps});
  }
  WindowStats finish(const std::vector<CounterSample>& occupancy, uint32_t queue_depth) {
    uint64_t engine_union = 0;
    w_.exposed_dispatch_ps = uncovered(cpu_, engines_, &engine_union);
    w_.engines_idle_ps = w_.span_ps() > engine_union ? w_.span_ps() - engine_union : 0;
    // The occupancy step function over [start, end).
    double area = 0;
    w_.occupancy_max = counter_value_at(occupancy, w_.start_ps);
    for (size_t i = 0; i < occupancy.size(); ++i) {
      const uint64_t from = std::max(occupancy[i].time_ps, w_.start_ps);
      const uint64_t to = std::min(i + 1 < occupancy.size() ? occupancy[i + 1].time_ps : w_.end_ps, w_.end_ps);
      if (to <= from) continue;
      area += double(occupancy[i].value) * double(to - from);
      w_.occupancy_max = std::max(w_.occupancy_max, occupancy[i].value);
      if (queue_depth && occupancy[i].value >= queue_depth) w_.queue_full_ps += to - from;
    }
    w_.occupancy_mean = w_.span_ps() ? area / double(w_.span_ps()) : 0.0;
    finish_window(w_);
    return w_;
  }

 private:
  WindowStats w_;
  std::vector<Interval> cpu_, engines_;
};

}  // namespace

std::string Verdict::text() const {
  if (!applicable()) return "n/a";
  return cpu_bound ? "CPU-bound" : std::string("engine-bound (") + to_string(busiest_engine) + ")";
}

std::string Verdict::explanation() const {
  if (span_ps == 0) return "the span is 0: nothing ran";
  if (!any_busy) return "neither PE_CPU nor an engine was busy over the span";
  return "PE_CPU busy " + percent(cpu_fraction) + " of the span, busiest engine " +
         (engine_busy ? std::string(to_string(busiest_engine)) + " " + percent(engine_fraction)
                      : std::string("none"));
}

nlohmann::json fraction_json(uint64_t ps, uint64_t span_ps) {
  if (span_ps == 0) return nullptr;
  return double(ps) / double(span_ps);
}

std::string percent_of(uint64_t ps, uint64_t span_ps) {
  return span_ps ? percent(double(ps) / double(span_ps)) : std::string("n/a");
}

Verdict make_verdict(const uint64_t (&busy_ps)[kNumComponents], uint64_t span_ps) {
  Verdict v;
  v.span_ps = span_ps;
  for (const EngineInfo& e : kEngines)
    if (busy_ps[int(e.component)] > busy_ps[int(v.busiest_engine)]) v.busiest_engine = e.component;
  const uint64_t cpu = busy_ps[int(Component::kPeCpu)], engine = busy_ps[int(v.busiest_engine)];
  v.engine_busy = engine > 0;
  v.any_busy = cpu > 0 || engine > 0;
  v.cpu_bound = cpu >= engine;
  v.cpu_fraction = span_ps ? double(cpu) / double(span_ps) : 0.0;
  v.engine_fraction = span_ps ? double(engine) / double(span_ps) : 0.0;
  return v;
}

Verdict launch_verdict(const LaunchResult& l) { return make_verdict(l.busy_ps, l.latency_ps()); }

RunStats compute_run_stats(const std::vector<OpRecord>& records,
                           const std::vector<LaunchResult>& launches,
                           const std::vector<CounterSample>& occupancy, uint32_t queue_depth) {
  RunStats s;
  s.queue_depth = queue_depth;
  uint64_t run_end = launches.empty() ? 0 : launches.back().end_ps;
  for (const OpRecord& r : records) run_end = std::max(run_end, r.end_ps);
  Window run("run", launches.empty() ? 0 : launches.front().start_ps, run_end);
  std::vector<Window> windows;
  std::vector<uint64_t> last_id;  // the last command id of each launch
  uint64_t id = 0;
  for (const LaunchResult& l : launches) {
    windows.emplace_back(l.kernel, l.start_ps, l.end_ps);
    id += l.commands;
    last_id.push_back(id);
  }
  // Launches run back to back and drain, so their records are contiguous in
  // the op log; command ids run on across launches.
  size_t li = 0;
  for (const OpRecord& r : records) {
    run.add(r);
    if (windows.empty()) continue;
    while (li + 1 < windows.size() &&
           (r.end_ps > launches[li].end_ps || (r.cmd_id != 0 && r.cmd_id > last_id[li])))
      ++li;
    windows[li].add(r);
  }
  s.run = run.finish(occupancy, queue_depth);
  for (Window& w : windows) s.launches.push_back(w.finish(occupancy, queue_depth));
  return s;
}

// ---- Streaming

StreamingStats::StreamingStats(uint32_t queue_depth) : queue_depth_(queue_depth) {
  run_.name = "run";
}

void StreamingStats::advance(uint64_t now_ps) {
  if (cpu_idle_at_ < now_ps) {  // the dispatch ended on the way
    const uint64_t end = cpu_idle_at_;
    cpu_idle_at_ = UINT64_MAX;
    advance(end);
    cpu_busy_ = false;
  }
  if (now_ps <= last_ps_) return;
  const uint64_t dt = now_ps - last_ps_;
  auto integrate = [&](WindowStats& w, double& area) {
    if (engines_busy_ == 0) {
      w.engines_idle_ps += dt;
      if (cpu_busy_) w.exposed_dispatch_ps += dt;
    }
    area += double(occupancy_) * double(dt);
    w.occupancy_max = std::max(w.occupancy_max, occupancy_);
    if (queue_depth_ && occupancy_ >= queue_depth_) w.queue_full_ps += dt;
  };
  integrate(run_, run_area_);
  if (!launches_.empty()) integrate(launches_.back(), launch_area_);
  last_ps_ = now_ps;
}

void StreamingStats::begin_launch(const std::string& kernel, uint64_t now_ps) {
  advance(now_ps);
  if (launches_.empty()) last_ps_ = now_ps;
  // The finished launch keeps its area as its mean; finish() divides once
  // the span is known.
  if (!launches_.empty()) launches_.back().occupancy_mean = launch_area_;
  launch_area_ = 0;
  launches_.emplace_back();
  launches_.back().name = kernel;
}

void StreamingStats::add(const OpRecord& r) {
  add_sums(run_, r);
  if (!launches_.empty()) add_sums(launches_.back(), r);
  last_record_end_ = std::max(last_record_end_, r.end_ps);
}

void StreamingStats::cpu_busy(uint64_t now_ps, bool busy) {
  advance(now_ps);
  if (cpu_idle_at_ <= now_ps) cpu_idle_at_ = UINT64_MAX;  // ends now: this call says what follows
  cpu_busy_ = busy;
}

void StreamingStats::engine_busy(uint64_t now_ps, int engine, bool busy) {
  advance(now_ps);
  if (busy) engines_busy_ |= 1u << engine;
  else engines_busy_ &= ~(1u << engine);
}

void StreamingStats::occupancy(uint64_t now_ps, uint32_t n) {
  advance(now_ps);
  occupancy_ = n;
}

RunStats StreamingStats::finish(const std::vector<LaunchResult>& launches) {
  RunStats s;
  s.queue_depth = queue_depth_;
  const uint64_t end = std::max(launches.empty() ? 0 : launches.back().end_ps, last_record_end_);
  advance(end);
  if (!launches_.empty()) launches_.back().occupancy_mean = launch_area_;
  auto close = [](WindowStats& w, double area, uint64_t start, uint64_t stop) {
    w.start_ps = start;
    w.end_ps = stop;
    w.occupancy_mean = w.span_ps() ? area / double(w.span_ps()) : 0.0;
    finish_window(w);
  };
  close(run_, run_area_, launches.empty() ? 0 : launches.front().start_ps, end);
  s.run = run_;
  if (launches_.size() > launches.size()) launches_.resize(launches.size());
  for (size_t i = 0; i < launches_.size(); ++i) {
    close(launches_[i], launches_[i].occupancy_mean, launches[i].start_ps, launches[i].end_ps);
  }
  s.launches = std::move(launches_);
  launches_.clear();
  return s;
}

// ---- JSON

nlohmann::json to_json(const WindowStats& w) {
  nlohmann::json j;
  j["name"] = w.name;
  j["start_ps"] = w.start_ps;
  j["end_ps"] = w.end_ps;
  j["span_ps"] = w.span_ps();
  for (const ComponentInfo& c : kComponents) {
    if (!c.busy) continue;
    const ComponentStats& cs = w.components[int(c.component)];
    if (c.optional && cs.records == 0) continue;  // component_table.h
    j["components"][c.name] = {
        {"busy_ps", cs.busy_ps}, {"utilisation", fraction_json(cs.busy_ps, w.span_ps())}, {"records", cs.records}};
  }
  for (int k = 0; k < kNumRecordKinds; ++k) {
    const KindStats& ks = w.kinds[k];
    if (is_optional(RecordKind(k)) && ks.count == 0) continue;
    j["records_by_kind"][to_string(RecordKind(k))] = {
        {"count", ks.count}, {"busy_ps", ks.busy_ps}, {"bytes", ks.bytes}, {"elements", ks.elements}};
  }
  j["commands"]["total"] = w.commands;
  j["commands"]["logical_bytes"] = w.logical_bytes;
  for (int t = 0; t < kNumCommandTypes; ++t) {
    if (is_optional_command_type(t) && w.by_type[t].commands == 0) continue;
    j["commands"]["by_type"][command_type_name(t)] = {{"count", w.by_type[t].commands},
                                                   {"logical_bytes", w.by_type[t].logical_bytes}};
  }
  j["dispatch"] = {{"ps", w.dispatch_ps},
                   {"cycles_exact", w.dispatch_cycles_exact},
                   {"cycles_charged", w.dispatch_cycles_charged}};
  j["pe_cpu"] = {{"dispatch_ps", w.dispatch_ps},
                 {"cpu_cycles_ps", w.cpu_cycles_ps},
                 {"stall_ps", w.stall_ps},
                 {"stalls", w.stalls},
                 {"stall_fraction", fraction_json(w.stall_ps, w.span_ps())},
                 {"exposed_dispatch_ps", w.exposed_dispatch_ps},
                 {"exposed_dispatch_fraction", fraction_json(w.exposed_dispatch_ps, w.span_ps())}};
  j["engines_idle_ps"] = w.engines_idle_ps;
  j["engines_idle_fraction"] = fraction_json(w.engines_idle_ps, w.span_ps());
  j["queue"] = {{"occupancy_mean", w.span_ps() ? nlohmann::json(w.occupancy_mean) : nlohmann::json()},
                {"occupancy_max", w.occupancy_max},
                {"full_ps", w.queue_full_ps},
                {"full_fraction", fraction_json(w.queue_full_ps, w.span_ps())}};
  // Null where there is no verdict or no busy engine (Verdict::applicable).
  const Verdict& v = w.verdict;
  const auto if_applicable = [&v](nlohmann::json x) { return v.applicable() ? x : nlohmann::json(); };
  j["verdict"] = {{"bound", if_applicable(v.text())},
                  {"cpu_bound", if_applicable(v.cpu_bound)},
                  {"cpu_busy_fraction", if_applicable(v.cpu_fraction)},
                  {"busiest_engine", v.engine_busy ? nlohmann::json(to_string(v.busiest_engine)) : nlohmann::json()},
                  {"busiest_engine_fraction", if_applicable(v.engine_fraction)}};
  return j;
}

nlohmann::json to_json(const RunStats& s) {
  nlohmann::json j;
  j["verdict_rule"] = kVerdictRule;
  j["queue_depth"] = s.queue_depth;
  j["run"] = to_json(s.run);
  j["launches"] = nlohmann::json::array();
  for (const WindowStats& w : s.launches) j["launches"].push_back(to_json(w));
  return j;
}

WindowStats window_from_json(const nlohmann::json& j) {
  WindowStats w;
  w.name = j.at("name");
  w.start_ps = j.at("start_ps");
  w.end_ps = j.at("end_ps");
  for (const ComponentInfo& c : kComponents) {
    if (!c.busy) continue;
    if (c.optional && !j.at("components").contains(c.name)) continue;
    const auto& jc = j.at("components").at(c.name);
    w.components[int(c.component)] = {jc.at("busy_ps"), 0.0, jc.at("records")};
    w.components[int(c.component)].utilisation = w.fraction(w.components[int(c.component)].busy_ps);
  }
  for (int k = 0; k < kNumRecordKinds; ++k) {
    if (is_optional(RecordKind(k)) && !j.at("records_by_kind").contains(to_string(RecordKind(k)))) continue;
    const auto& jk = j.at("records_by_kind").at(to_string(RecordKind(k)));
    w.kinds[k] = {jk.at("count"), jk.at("busy_ps"), jk.at("bytes"), jk.at("elements")};
  }
  w.commands = j.at("commands").at("total");
  w.logical_bytes = j.at("commands").at("logical_bytes");
  for (int t = 0; t < kNumCommandTypes; ++t) {
    if (is_optional_command_type(t) && !j.at("commands").at("by_type").contains(command_type_name(t))) continue;
    const auto& jt = j.at("commands").at("by_type").at(command_type_name(t));
    w.by_type[t] = {jt.at("count"), jt.at("logical_bytes")};
  }
  w.dispatch_cycles_exact = j.at("dispatch").at("cycles_exact");
  w.dispatch_cycles_charged = j.at("dispatch").at("cycles_charged");
  const auto& cpu = j.at("pe_cpu");
  w.dispatch_ps = cpu.at("dispatch_ps");
  w.cpu_cycles_ps = cpu.at("cpu_cycles_ps");
  w.stall_ps = cpu.at("stall_ps");
  w.stalls = cpu.at("stalls");
  w.exposed_dispatch_ps = cpu.at("exposed_dispatch_ps");
  w.engines_idle_ps = j.at("engines_idle_ps");
  const auto& mean = j.at("queue").at("occupancy_mean");
  w.occupancy_mean = mean.is_null() ? 0.0 : mean.get<double>();
  w.occupancy_max = j.at("queue").at("occupancy_max");
  w.queue_full_ps = j.at("queue").at("full_ps");
  uint64_t busy[kNumComponents];
  for (int c = 0; c < kNumComponents; ++c) busy[c] = w.components[c].busy_ps;
  w.verdict = make_verdict(busy, w.span_ps());
  return w;
}

// The compact form: the fields in order (stats.h).
nlohmann::json window_fields(const WindowStats& w) {
  nlohmann::json a = {w.name, w.start_ps, w.end_ps};
  for (const ComponentStats& c : w.components) {
    a.push_back(c.busy_ps);
    a.push_back(c.utilisation);
    a.push_back(c.records);
  }
  for (const KindStats& k : w.kinds) {
    for (uint64_t v : {k.count, k.busy_ps, k.bytes, k.elements}) a.push_back(v);
  }
  for (const TypeStats& t : w.by_type) {
    a.push_back(t.commands);
    a.push_back(t.logical_bytes);
  }
  a.push_back(w.commands);
  a.push_back(w.logical_bytes);
  a.push_back(w.dispatch_cycles_exact);
  for (uint64_t v : {w.dispatch_cycles_charged, w.dispatch_ps, w.cpu_cycles_ps, w.stall_ps, w.stalls,
                     w.exposed_dispatch_ps, w.engines_idle_ps})
    a.push_back(v);
  a.push_back(w.occupancy_mean);
  a.push_back(w.occupancy_max);
  a.push_back(w.queue_full_ps);
  return a;
}

WindowStats window_from_fields(const nlohmann::json& j) {
  JsonFields f(j);
  WindowStats w;
  w.name = f.next();
  w.start_ps = f.next();
  w.end_ps = f.next();
  for (ComponentStats& c : w.components) {
    c.busy_ps = f.next();
    c.utilisation = f.next();
    c.records = f.next();
  }
  for (KindStats& k : w.kinds) {
    k.count = f.next();
    k.busy_ps = f.next();
    k.bytes = f.next();
    k.elements = f.next();
  }
  for (TypeStats& t : w.by_type) {
    t.commands = f.next();
    t.logical_bytes = f.next();
  }
  w.commands = f.next();
  w.logical_bytes = f.next();
  w.dispatch_cycles_exact = f.next();
  w.dispatch_cycles_charged = f.next();
  w.dispatch_ps = f.next();
  w.cpu_cycles_ps = f.next();
  w.stall_ps = f.next();
  w.stalls = f.next();
  w.exposed_dispatch_ps = f.next();
  w.engines_idle_ps = f.next();
  w.occupancy_mean = f.next();
  w.occupancy_max = f.next();
  w.queue_full_ps = f.next();
  f.end();
  uint64_t busy[kNumComponents];
  for (int c = 0; c < kNumComponents; ++c) busy[c] = w.components[c].busy_ps;
  w.verdict = make_verdict(busy, w.span_ps());  // as finish_window (models/trace/stats.cpp)
  return w;
}

nlohmann::json to_json_without_launches(const RunStats& s) {
  nlohmann::json j;
  j["verdict_rule"] = kVerdictRule;
  j["queue_depth"] = s.queue_depth;
  j["run"] = to_json(s.run);
  j["launches"] = nullptr;
  return j;
}

StreamedArray launches_json(const RunStats& s) {
  return {s.launches.size(), [&s](size_t i) { return to_json(s.launches[i]); }};
}

namespace {

std::string dump2(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

// `text` (a value dumped at indent 0) as nested `indent` spaces deep: the
// lines after its first indented. Strings hold no raw line break.
void write_indented(std::ostream& os, const std::string& text, size_t indent) {
  const std::string pad(indent, ' ');
  size_t from = 0;
  for (size_t nl; (nl = text.find('\n', from)) != std::string::npos; from = nl + 1) {
    os.write(text.data() + from, std::streamsize(nl + 1 - from));
    os << pad;
  }
  os.write(text.data() + from, std::streamsize(text.size() - from));
}

// nlohmann's pretty printer, for the objects on the way to a streamed array.
void write_value(std::ostream& os, const nlohmann::json& j,
                 const std::map<std::string, StreamedArray>& streamed, const std::string& path,
                 size_t indent) {
  if (const auto it = streamed.find(path); it != streamed.end()) {
    const StreamedArray& a = it->second;
    if (a.size == 0) {
      os << "[]";
      return;
    }
    os << "[\n";
    for (size_t i = 0; i < a.size; ++i) {
      os << std::string(indent + 2, ' ');
      write_indented(os, dump2(a.element(i)), indent + 2);
      os << (i + 1 < a.size ? ",\n" : "\n");
    }
    os << std::string(indent, ' ') << "]";
    return;
  }
  bool on_path = false;
  for (const auto& [pointer, array] : streamed) on_path |= pointer.rfind(path + "/", 0) == 0;
  if (!on_path || !j.is_object() || j.empty()) {
    write_indented(os, dump2(j), indent);
    return;
  }
  os << "{\n";
  size_t k = 0;
  for (const auto& [key, value] : j.items()) {
    os << std::string(indent + 2, ' ') << nlohmann::json(key).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << ": ";
    write_value(os, value, streamed, path + "/" + key, indent + 2);
    os << (++k < j.size() ? ",\n" : "\n");
  }
  os << std::string(indent, ' ') << "}";
}

}  // namespace

void write_json(std::ostream& os, const nlohmann::json& j,
                const std::map<std::string, StreamedArray>& streamed) {
  write_value(os, j, streamed, "", 0);
}

RunStats run_stats_from_json(const nlohmann::json& j) {
  RunStats s;
  s.queue_depth = j.at("queue_depth");
  s.run = window_from_json(j.at("run"));
  for (const auto& w : j.at("launches")) s.launches.push_back(window_from_json(w));
  return s;
}

}  // namespace kb
