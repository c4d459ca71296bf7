#include "tb/run/report.h"

#include "models/trace/schema_version.h"
#include "models/trace/stats.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace kb {

std::string fmt(const char* printf_format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, printf_format, v);
  return buf;
}

nlohmann::json launch_figures(const LaunchResult& l, const PeConfig& cfg) {
  (void)cfg;
  nlohmann::json j;
  j["latency_ns"] = double(l.latency_ps()) / 1000.0;
  j["commands"] = l.commands;
  j["logical_bytes"] = l.logical_bytes;
  j["dispatch_ns"] = double(l.dispatch_ps) / 1000.0;
  j["dispatch_cycles_charged"] = l.dispatch_cycles_charged;
  j["dispatch_cycles_exact"] = l.dispatch_cycles_exact;
  j["stall_ns"] = double(l.stall_ps) / 1000.0;
  for (const ComponentInfo& c : kComponents) {
    if (!c.busy || (c.optional && l.busy_ps[int(c.component)] == 0)) continue;  // component_table.h
    j["utilisation"][c.name] = fraction_json(l.busy_ps[int(c.component)], l.latency_ps());
  }
  const Verdict v = launch_verdict(l);
  j["bottleneck"] = v.applicable() ? nlohmann::json(v.text()) : nlohmann::json();  // stats.h Verdict
  for (const auto& [name, value] : l.metrics) j[name] = value;
  return j;
}

std::string bottleneck(const LaunchResult& l) { return launch_verdict(l).text(); }

namespace {
double ns(uint64_t ps) { return double(ps) / 1000.0; }


std::string pct(double fraction) { return fmt("%.1f%%", 100.0 * fraction); }

std::string pad(const std::string& s, size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

std::string lpad(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}
}  // namespace

void print_stats_table(std::ostream& os, const RunStats& s) {
  if (s.launches.empty()) return;  // no summary was computed (--no-summary)
  size_t name_w = 8;
  for (const WindowStats& w : s.launches) name_w = std::max(name_w, w.name.size());
  os << "  " << pad("kernel", name_w) << "    span(us)  PE_CPU busy  stalled  exposed  "
     << pad("busiest engine", 17) << "queue full  verdict\n";
  for (const WindowStats& w : s.launches) {
    const Verdict& v = w.verdict;
    os << "  " << pad(w.name, name_w) << fmt("%12.3f", double(w.span_ps()) / 1e6)
       << lpad(percent_of(w.components[int(Component::kPeCpu)].busy_ps, w.span_ps()), 13)
       << lpad(percent_of(w.stall_ps, w.span_ps()), 9) << lpad(percent_of(w.exposed_dispatch_ps, w.span_ps()), 9)
       << "  "
       << pad(v.engine_busy ? std::string(to_string(v.busiest_engine)) + " " + pct(v.engine_fraction) : "none", 17)
       << lpad(percent_of(w.queue_full_ps, w.span_ps()), 10) << "  " << v.text() << "\n";
  }
}

void print_stats_summary(std::ostream& os, const RunStats& s) {
  if (s.launches.empty()) return;  // no summary was computed (--no-summary)
  os << "statistics (CPU-bound when PE_CPU is busy at least as long as the busiest engine)\n";
  print_stats_table(os, s);
  for (const WindowStats& w : s.launches) {
    os << "  kernel " << w.name << ": " << w.verdict.text() << " -- " << w.verdict.explanation()
       << "\n";
    os << "    utilisation  ";
    const char* gap = "";
    for (const ComponentInfo& c : kComponents) {
      if (!c.busy || (c.optional && w.components[int(c.component)].records == 0)) continue;
      os << gap << c.name << " " << percent_of(w.components[int(c.component)].busy_ps, w.span_ps());
      gap = "  ";
    }
    os << "\n";
    os << "    dispatch     " << fmt("%.3f", double(w.dispatch_ps) / 1000.0) << " ns, "
       << w.dispatch_cycles_charged << " cycles charged (" << fmt("%.3f", w.dispatch_cycles_exact)
       << " exact); exposed with every engine idle " << percent_of(w.exposed_dispatch_ps, w.span_ps())
       << " of the span\n";
    os << "    stalled      " << fmt("%.3f", double(w.stall_ps) / 1000.0) << " ns ("
       << percent_of(w.stall_ps, w.span_ps()) << " of the span) in " << w.stalls
       << " descriptor writes held by a full queue\n";
    os << "    queue        mean occupancy " << (w.span_ps() ? fmt("%.2f", w.occupancy_mean) : std::string("n/a")) << " of "
       << s.queue_depth << ", max " << w.occupancy_max << ", full "
       << percent_of(w.queue_full_ps, w.span_ps()) << " of the span\n";
    os << "    commands     " << w.commands << " (" << w.logical_bytes << " logical bytes)";
    const char* sep = ": ";
    for (int t = 0; t < kNumCommandTypes; ++t) {
      if (!w.by_type[t].commands) continue;
      os << sep << command_type_name(t) << " " << w.by_type[t].commands;
      if (w.by_type[t].logical_bytes) os << " (" << w.by_type[t].logical_bytes << " B)";
      sep = ", ";
    }
    os << "\n";
  }
}

void print_run_report(std::ostream& os, const std::string& title, const PeConfig& cfg,
                      const RunResult& r) {
  os << title << "\n";
  const uint64_t span = r.latency_ps();
  for (const LaunchResult& l : r.launches) {
    os << "  kernel " << l.kernel << "\n";
    os << "    latency             " << fmt("%12.3f", ns(l.latency_ps())) << " ns\n";
    os << "    commands            " << fmt("%12.0f", double(l.commands)) << "  ("
       << l.logical_bytes << " logical bytes)\n";
    os << "    dispatch            " << fmt("%12.3f", ns(l.dispatch_ps)) << " ns  ("
       << l.dispatch_cycles_charged << " cycles charged, " << fmt("%.3f", l.dispatch_cycles_exact)
       << " exact, at " << cfg.clock_freq_ghz << " GHz)\n";
    os << "    stalled (queue full)" << fmt("%12.3f", ns(l.stall_ps)) << " ns\n";
    if (l.cpu_cycles_ps) os << "    tl.cycles           " << fmt("%12.3f", ns(l.cpu_cycles_ps)) << " ns\n";
    for (const auto& [name, value] : l.metrics) {
      os << "    " << name << std::string(name.size() < 20 ? 20 - name.size() : 1, ' ') << fmt("%12.6g", value) << "\n";
    }
  }
  os << "  component        busy (ns)   utilisation\n";
  for (const ComponentInfo& c : kComponents) {
    if (!c.busy || (c.optional && r.busy_ps[int(c.component)] == 0)) continue;
    const uint64_t busy = r.busy_ps[int(c.component)];
    os << "    " << c.name << std::string(12 - std::string(c.name).size(), ' ')
       << fmt("%12.3f", ns(busy)) << lpad(percent_of(busy, span), 13) << "\n";
  }
  print_stats_summary(os, r.stats);
}

namespace {

nlohmann::json launch_summary_json(const LaunchResult& l, const PeConfig& cfg) {
  nlohmann::json f = launch_figures(l, cfg);
  f["kernel"] = l.kernel;
  return f;
}

// run_summary_json without its per-launch arrays ("launches" and
// "stats/launches" are null placeholders).
nlohmann::json summary_skeleton(const std::string& bench, const PeConfig& cfg, const RunResult& r) {
  nlohmann::json j;
  j["schema_version"] = kSchemaVersion;  // models/trace/schema_version.h
  j["bench"] = bench;
  j["clock_freq_ghz"] = cfg.clock_freq_ghz;
  j["latency_ns"] = ns(r.latency_ps());
  j["launches"] = nullptr;
  for (const ComponentInfo& c : kComponents) {
    if (!c.busy || (c.optional && r.busy_ps[int(c.component)] == 0)) continue;
    const uint64_t span = r.latency_ps();
    const uint64_t busy = r.busy_ps[int(c.component)];
    j["components"][c.name] = {{"busy_ns", ns(busy)},
                               {"utilisation", fraction_json(busy, span)}};
  }
  j["stats"] = to_json_without_launches(r.stats);
  return j;
}

}  // namespace

nlohmann::json run_summary_json(const std::string& bench, const PeConfig& cfg, const RunResult& r) {
  nlohmann::json j = summary_skeleton(bench, cfg, r);
  j["launches"] = nlohmann::json::array();
  for (const LaunchResult& l : r.launches) j["launches"].push_back(launch_summary_json(l, cfg));
  j["stats"]["launches"] = nlohmann::json::array();
  for (const WindowStats& w : r.stats.launches) j["stats"]["launches"].push_back(to_json(w));
  return j;
}

void write_run_summary_json(std::ostream& os, const std::string& bench, const PeConfig& cfg,
                            const RunResult& r, const nlohmann::json& figures) {
  nlohmann::json j = summary_skeleton(bench, cfg, r);
  if (!figures.is_null()) j["figures"] = figures;
  const StreamedArray launches{r.launches.size(),
                               [&](size_t i) { return launch_summary_json(r.launches[i], cfg); }};
  write_json(os, j, {{"/launches", launches}, {"/stats/launches", launches_json(r.stats)}});
}

}  // namespace kb
