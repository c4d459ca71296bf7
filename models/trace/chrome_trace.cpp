#include "models/trace/chrome_trace.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <stdexcept>

namespace kb {

namespace {

// Trace Event Format times are microseconds; ours are integer picoseconds.
double us(uint64_t ps) { return double(ps) / 1e6; }

const char* category(const OpRecord& r) {
  switch (r.kind) {
    case RecordKind::kDispatch:
    case RecordKind::kCpuCycles: return "dispatch";
    case RecordKind::kStall: return "stall";
    default: return "stage";
  }
}

nlohmann::json metadata(const char* what, int tid, const nlohmann::json& args) {
  nlohmann::json e = {{"ph", "M"}, {"pid", kTracePid}, {"name", what}, {"args", args}};
  if (tid >= 0) e["tid"] = tid;
  return e;
}

nlohmann::json record_args(const OpRecord& r) {
  nlohmann::json a = {{"cmd_id", r.cmd_id},
                      {"cmd_type", r.cmd_type},
                      {"kind", to_string(r.kind)},
                      {"tile", r.tile},
                      {"bytes", r.bytes},
                      {"start_ps", r.start_ps},
                      {"end_ps", r.end_ps}};
  if (*r.op) a["op"] = r.op;
  if (r.elements) a["elements"] = r.elements;
  if (r.kind == RecordKind::kDispatch || r.kind == RecordKind::kCpuCycles) {
    a["logical_bytes"] = r.logical_bytes;
    a["dispatch_cycles_exact"] = r.dispatch_cycles_exact;
    a["dispatch_cycles_charged"] = r.dispatch_cycles_charged;
  }
  return a;
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

nlohmann::json chrome_trace_json(const std::vector<OpRecord>& records,
                                 const std::vector<CounterSample>& occupancy,
                                 const std::vector<TraceSpan>& launches) {
  nlohmann::json events = nlohmann::json::array();
  events.push_back(metadata("process_name", -1, {{"name", "pe"}}));
  events.push_back(metadata("thread_name", kLaunchTid, {{"name", "launches"}}));
  events.push_back(metadata("thread_sort_index", kLaunchTid, {{"sort_index", 0}}));
  for (int c = 0; c < kNumComponents; ++c) {
    if (Component(c) == Component::kPeScheduler) continue;  // a counter, not a thread
    events.push_back(metadata("thread_name", trace_tid(Component(c)), {{"name", to_string(Component(c))}}));
    events.push_back(metadata("thread_sort_index", trace_tid(Component(c)), {{"sort_index", c + 1}}));
  }

  for (const TraceSpan& l : launches) {
    events.push_back({{"ph", "X"},
                      {"pid", kTracePid},
                      {"tid", kLaunchTid},
                      {"cat", "launch"},
                      {"name", l.name},
                      {"ts", us(l.start_ps)},
                      {"dur", us(l.end_ps - l.start_ps)},
                      {"args", {{"start_ps", l.start_ps}, {"end_ps", l.end_ps}}}});
  }

  for (const OpRecord& r : records) {
    nlohmann::json e = {{"ph", "X"},
                        {"pid", kTracePid},
                        {"tid", trace_tid(r.component)},
                        {"cat", category(r)},
                        {"name", trace_slice_name(r)},
                        {"ts", us(r.start_ps)},
                        {"dur", us(r.end_ps - r.start_ps)},
                        {"args", record_args(r)}};
    if (r.kind == RecordKind::kStall) e["cname"] = "terrible";  // chrome://tracing colour
    events.push_back(std::move(e));
  }

  // Flows: per command, its DISPATCH then its engine stages in start order.
  // Each flow point sits mid-slice and binds to the enclosing slice, so it
  // attaches to the right slice in both viewers.
  std::map<uint64_t, std::vector<const OpRecord*>> by_cmd;
  for (const OpRecord& r : records) {
    if (r.cmd_id == 0 || r.kind == RecordKind::kStall || r.end_ps == r.start_ps) continue;
    by_cmd[r.cmd_id].push_back(&r);
  }
  for (auto& [id, recs] : by_cmd) {
    if (recs.size() < 2) continue;
    std::stable_sort(recs.begin(), recs.end(), [](const OpRecord* a, const OpRecord* b) {
      return a->start_ps != b->start_ps ? a->start_ps < b->start_ps
                                        : (a->component == Component::kPeCpu) > (b->component == Component::kPeCpu);
    });
    for (size_t i = 0; i < recs.size(); ++i) {
      const OpRecord& r = *recs[i];
      const char* ph = i == 0 ? "s" : i + 1 == recs.size() ? "f" : "t";
      events.push_back({{"ph", ph},
                        {"pid", kTracePid},
                        {"tid", trace_tid(r.component)},
                        {"cat", "cmd"},
                        {"name", "cmd " + std::to_string(id)},
                        {"id", id},
                        {"bp", "e"},
                        {"ts", us(r.start_ps + (r.end_ps - r.start_ps) / 2)}});
    }
  }

  for (const CounterSample& s : occupancy) {
    events.push_back({{"ph", "C"},
                      {"pid", kTracePid},
                      {"name", "pe_scheduler"},
                      {"ts", us(s.time_ps)},
                      {"args", {{"queue_occupancy", s.value}}}});
  }

  return {{"traceEvents", std::move(events)},
          {"displayTimeUnit", "ns"},
          {"otherData",
           {{"generator", "kernbench-sc"},
            {"time_unit", "ts and dur in microseconds; args.start_ps / end_ps exact picoseconds"}}}};
}

void write_chrome_trace(const std::string& path, const std::vector<OpRecord>& records,
                        const std::vector<CounterSample>& occupancy,
                        const std::vector<TraceSpan>& launches) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error("cannot write trace '" + path + "'");
  out << chrome_trace_json(records, occupancy, launches).dump() << "\n";
  if (!out) throw std::runtime_error("cannot write trace '" + path + "'");
}

}  // namespace kb
