#include "tb/run/result_codec.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <unordered_set>

#include "models/trace/stats.h"
#include "models/util/json_fields.h"

namespace kb {

namespace {

const char* intern(const std::string& s) {
  static std::unordered_set<std::string> pool;
  return pool.insert(s).first->c_str();
}

nlohmann::json record_json(const OpRecord& r) {
  return {{"component", to_string(r.component)},
          {"kind", to_string(r.kind)},
          {"cmd_id", r.cmd_id},
          {"cmd_type", r.cmd_type},
          {"op", r.op},
          {"tile", r.tile},
          {"start_ps", r.start_ps},
          {"end_ps", r.end_ps},
          {"bytes", r.bytes},
          {"elements", r.elements},
          {"logical_bytes", r.logical_bytes},
          {"dispatch_cycles_exact", r.dispatch_cycles_exact},
          {"dispatch_cycles_charged", r.dispatch_cycles_charged}};
}

OpRecord record_from_json(const nlohmann::json& j) {
  OpRecord r;
  const std::string comp = j.at("component"), kind = j.at("kind");
  for (int c = 0; c < kNumComponents; ++c)
    if (comp == to_string(Component(c))) r.component = Component(c);
  for (int k = 0; k < kNumRecordKinds; ++k)
    if (kind == to_string(RecordKind(k))) r.kind = RecordKind(k);
  r.cmd_id = j.at("cmd_id");
  r.cmd_type = intern(j.at("cmd_type"));
  r.op = intern(j.at("op"));
  r.tile = j.at("tile");
  r.start_ps = j.at("start_ps");
  r.end_ps = j.at("end_ps");
  r.bytes = j.at("bytes");
  r.elements = j.at("elements");
  r.logical_bytes = j.at("logical_bytes");
  r.dispatch_cycles_exact = j.at("dispatch_cycles_exact");
  r.dispatch_cycles_charged = j.at("dispatch_cycles_charged");
  return r;
}

nlohmann::json busy_json(const uint64_t (&busy)[kNumComponents]) {
  nlohmann::json j;
  for (int c = 0; c < kNumComponents; ++c) {
    if (is_optional(Component(c)) && busy[c] == 0) continue;  // component_table.h
    j[to_string(Component(c))] = busy[c];
  }
  return j;
}

nlohmann::json launch_json(const LaunchResult& l) {
  nlohmann::json by_type;
  for (int t = 0; t < kNumCommandTypes; ++t) {
    if (is_optional_command_type(t) && l.commands_by_type[t] == 0) continue;
    by_type[command_type_name(t)] = l.commands_by_type[t];
  }
  return {{"kernel", l.kernel},
          {"start_ps", l.start_ps},
          {"end_ps", l.end_ps},
          {"latency_ps", l.latency_ps()},
          {"commands", l.commands},
          {"commands_by_type", by_type},
          {"logical_bytes", l.logical_bytes},
          {"dispatch_cycles_exact", l.dispatch_cycles_exact},
          {"dispatch_cycles_charged", l.dispatch_cycles_charged},
          {"dispatch_ps", l.dispatch_ps},
          {"stall_ps", l.stall_ps},
          {"cpu_cycles_ps", l.cpu_cycles_ps},
          {"busy_ps", busy_json(l.busy_ps)},
          {"error", l.error},
          {"metrics", metrics_json(l.metrics)}};
}

LaunchResult launch_from_json(const nlohmann::json& jl) {
  LaunchResult l;
  l.kernel = jl.at("kernel");
  l.start_ps = jl.at("start_ps");
  l.end_ps = jl.at("end_ps");
  l.commands = jl.at("commands");
  for (int t = 0; t < kNumCommandTypes; ++t) {
    l.commands_by_type[t] = jl.at("commands_by_type").value(command_type_name(t), uint64_t(0));
  }
  l.logical_bytes = jl.at("logical_bytes");
  l.dispatch_cycles_exact = jl.at("dispatch_cycles_exact");
  l.dispatch_cycles_charged = jl.at("dispatch_cycles_charged");
  l.dispatch_ps = jl.at("dispatch_ps");
  l.stall_ps = jl.at("stall_ps");
  l.cpu_cycles_ps = jl.at("cpu_cycles_ps");
  for (int c = 0; c < kNumComponents; ++c) l.busy_ps[c] = jl.at("busy_ps").value(to_string(Component(c)), uint64_t(0));
  l.error = jl.at("error");
  l.metrics = metrics_from_json(jl.at("metrics"));
  return l;
}

nlohmann::json sample_json(const CounterSample& s) { return {s.time_ps, s.value}; }
CounterSample sample_from_json(const nlohmann::json& j) { return {j.at(0), j.at(1)}; }

// A launch across the fork ('L'): a flat array of its fields in order
// (tb/run/result_codec.h); its statistics window ('W') is the statistics'
// own compact form (window_fields, models/trace/stats.h).
nlohmann::json launch_fields(const LaunchResult& l) {
  nlohmann::json a = {l.kernel, l.start_ps, l.end_ps, l.commands};
  for (uint64_t n : l.commands_by_type) a.push_back(n);
  for (const nlohmann::json& v : {nlohmann::json(l.logical_bytes), nlohmann::json(l.dispatch_cycles_exact),
                                  nlohmann::json(l.dispatch_cycles_charged), nlohmann::json(l.dispatch_ps),
                                  nlohmann::json(l.stall_ps), nlohmann::json(l.cpu_cycles_ps)})
    a.push_back(v);
  for (uint64_t b : l.busy_ps) a.push_back(b);
  a.push_back(l.error);
  a.push_back(metrics_json(l.metrics));
  return a;
}

LaunchResult launch_from_fields(const nlohmann::json& j) {
  JsonFields f(j);
  LaunchResult l;
  l.kernel = f.next();
  l.start_ps = f.next();
  l.end_ps = f.next();
  l.commands = f.next();
  for (uint64_t& n : l.commands_by_type) n = f.next();
  l.logical_bytes = f.next();
  l.dispatch_cycles_exact = f.next();
  l.dispatch_cycles_charged = f.next();
  l.dispatch_ps = f.next();
  l.stall_ps = f.next();
  l.cpu_cycles_ps = f.next();
  for (uint64_t& b : l.busy_ps) b = f.next();
  l.error = f.next();
  l.metrics = metrics_from_json(f.next());
  f.end();
  return l;
}


// The run's figures but not its per-launch, per-record or per-sample lists.
nlohmann::json header_json(const RunResult& r) {
  nlohmann::json j;
  j["ok"] = r.ok;
  j["error"] = r.error;
  j["end_ps"] = r.end_ps;
  j["data_bytes"] = r.data_bytes;
  j["sim_wall_seconds"] = r.sim_wall_seconds;
  j["peak_rss_kb"] = r.peak_rss_kb;
  j["records_by_component"] = busy_json(r.records_by_component);
  j["latency_ps"] = r.latency_ps();
  j["busy_ps"] = busy_json(r.busy_ps);
  return j;
}

void header_from_json(const nlohmann::json& j, RunResult& r) {
  r.ok = j.at("ok");
  r.error = j.at("error");
  r.end_ps = j.at("end_ps");
  r.data_bytes = j.at("data_bytes");
  r.sim_wall_seconds = j.at("sim_wall_seconds");
  r.peak_rss_kb = j.at("peak_rss_kb");
  for (int c = 0; c < kNumComponents; ++c) {
    r.records_by_component[c] = j.at("records_by_component").value(to_string(Component(c)), uint64_t(0));
  }
  for (int c = 0; c < kNumComponents; ++c) r.busy_ps[c] = j.at("busy_ps").value(to_string(Component(c)), uint64_t(0));
}

}  // namespace

nlohmann::json metrics_json(const std::vector<std::pair<std::string, double>>& m) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& [name, value] : m) j.push_back({name, value});
  return j;
}

std::vector<std::pair<std::string, double>> metrics_from_json(const nlohmann::json& j) {
  std::vector<std::pair<std::string, double>> m;
  for (const auto& e : j) m.emplace_back(e.at(0), e.at(1));
  return m;
}

nlohmann::json to_json(const RunResult& r) {
  nlohmann::json j = header_json(r);
  j["launches"] = nlohmann::json::array();
  for (const LaunchResult& l : r.launches) j["launches"].push_back(launch_json(l));
  j["records"] = nlohmann::json::array();
  for (const OpRecord& rec : r.records) j["records"].push_back(record_json(rec));
  j["occupancy"] = nlohmann::json::array();
  for (const CounterSample& s : r.occupancy) j["occupancy"].push_back(sample_json(s));
  j["stats"] = to_json(r.stats);
  return j;
}

RunResult run_result_from_json(const nlohmann::json& j) {
  RunResult r;
  header_from_json(j, r);
  for (const auto& jl : j.at("launches")) r.launches.push_back(launch_from_json(jl));
  for (const auto& jr : j.at("records")) r.records.push_back(record_from_json(jr));
  for (const auto& js : j.at("occupancy")) r.occupancy.push_back(sample_from_json(js));
  if (j.contains("stats")) r.stats = run_stats_from_json(j.at("stats"));
  return r;
}

void RunResultReader::line(char tag, std::string_view text) {
  const nlohmann::json j = nlohmann::json::parse(text);
  if (tag != 'H' && !header_) throw std::runtime_error("a result line before its header");
  switch (tag) {
    case 'H':
      header_from_json(j, r_);
      expected_[0] = j.at("launches");
      expected_[1] = j.at("records");
      expected_[2] = j.at("occupancy");
      expected_[3] = j.at("windows");
      // Room for exactly what is announced (no growth by doubling), within reason.
      r_.launches.reserve(std::min<size_t>(expected_[0], 1u << 24));
      r_.records.reserve(std::min<size_t>(expected_[1], 1u << 24));
      r_.occupancy.reserve(std::min<size_t>(expected_[2], 1u << 24));
      r_.stats.launches.reserve(std::min<size_t>(expected_[3], 1u << 24));
      header_ = true;
      break;
    case 'L':
      r_.launches.push_back(launch_from_fields(j));
      break;
    case 'O':
      r_.records.push_back(record_from_json(j));
      break;
    case 'C':
      r_.occupancy.push_back(sample_from_json(j));
      break;
    case 'S': {
      // Sent with no launches (write_run_result); the 'W' lines carry them.
      std::vector<WindowStats> windows = std::move(r_.stats.launches);
      r_.stats = run_stats_from_json(j);
      r_.stats.launches = std::move(windows);
      break;
    }
    case 'W':
      r_.stats.launches.push_back(window_from_fields(j));
      break;
    default:
      throw std::runtime_error(std::string("unknown line tag '") + tag + "'");
  }
}

void RunResultReader::end() {
  if (!header_) throw std::runtime_error("no header");
  const size_t got[] = {r_.launches.size(), r_.records.size(), r_.occupancy.size(),
                        r_.stats.launches.size()};
  const char* what[] = {"launches", "records", "occupancy samples", "statistics windows"};
  for (size_t i = 0; i < 4; ++i) {
    if (got[i] != expected_[i]) {
      throw std::runtime_error(std::to_string(got[i]) + " " + what[i] + " where the header announced " +
                               std::to_string(expected_[i]));
    }
  }
}

void write_run_result(ResultWriter& out, const RunResult& r) {
  nlohmann::json h = header_json(r);
  h["launches"] = r.launches.size();
  h["records"] = r.records.size();
  h["occupancy"] = r.occupancy.size();
  h["windows"] = r.stats.launches.size();
  out.line('H', h);
  for (const LaunchResult& l : r.launches) out.line('L', launch_fields(l));
  for (const OpRecord& rec : r.records) out.line('O', record_json(rec));
  for (const CounterSample& s : r.occupancy) out.line('C', sample_json(s));
  nlohmann::json stats = to_json(RunStats{r.stats.queue_depth, r.stats.run, {}});
  out.line('S', stats);
  for (const WindowStats& w : r.stats.launches) out.line('W', window_fields(w));
}

}  // namespace kb
