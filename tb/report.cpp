#include "tb/report.h"

#include <cstdio>

namespace kb {

namespace {
double ns(uint64_t ps) { return double(ps) / 1000.0; }
const Component kEngines[] = {Component::kPeCpu, Component::kPeDma, Component::kPeGemm,
                              Component::kPeMath, Component::kPeTcm};

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}
}  // namespace

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
  }
  os << "  component        busy (ns)   utilisation\n";
  for (Component c : kEngines) {
    const uint64_t busy = r.busy_ps[int(c)];
    os << "    " << to_string(c) << std::string(12 - std::string(to_string(c)).size(), ' ')
       << fmt("%12.3f", ns(busy)) << fmt("%12.1f%%", span ? 100.0 * double(busy) / double(span) : 0.0)
       << "\n";
  }
}

nlohmann::json run_summary_json(const std::string& bench, const PeConfig& cfg, const RunResult& r) {
  nlohmann::json j;
  j["bench"] = bench;
  j["clock_freq_ghz"] = cfg.clock_freq_ghz;
  j["latency_ns"] = ns(r.latency_ps());
  j["launches"] = nlohmann::json::array();
  for (const LaunchResult& l : r.launches) {
    j["launches"].push_back({{"kernel", l.kernel},
                             {"latency_ns", ns(l.latency_ps())},
                             {"commands", l.commands},
                             {"logical_bytes", l.logical_bytes},
                             {"dispatch_ns", ns(l.dispatch_ps)},
                             {"dispatch_cycles_charged", l.dispatch_cycles_charged},
                             {"dispatch_cycles_exact", l.dispatch_cycles_exact},
                             {"stall_ns", ns(l.stall_ps)}});
  }
  for (Component c : kEngines) {
    const uint64_t span = r.latency_ps();
    j["components"][to_string(c)] = {
        {"busy_ns", ns(r.busy_ps[int(c)])},
        {"utilisation", span ? double(r.busy_ps[int(c)]) / double(span) : 0.0}};
  }
  return j;
}

}  // namespace kb
