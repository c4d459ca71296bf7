// The gqa-decode bench: GQA attention decode on one PE, opt2 (two
// composites per KV tile) against opt3 (single-op primitives).
#include <cmath>
#include <ostream>
#include <string>

#include "kernels/attention/gqa_decode.h"
#include "tb/benches/builtin_benches.h"
#include "tb/benches/pe_bench_util.h"
#include "tb/run/report.h"

namespace kb {

namespace {

using namespace pe_bench;  // tb/benches/pe_bench_util.h

GqaShape gqa_shape(const BenchParams& p) {
  GqaShape s;
  s.q_heads = p.integer("q_heads");
  s.kv_heads = p.integer("kv_heads");
  s.head_dim = p.integer("head_dim");
  s.context = p.integer("context");
  s.kv_tile = p.integer("kv_tile");
  s.dtype = p.dtype("dtype");
  s.input_range = double(p.integer("input_range"));
  check_elements(p, "Q", {{"q_heads", s.q_heads}, {"head_dim", s.head_dim}});
  check_elements(p, "K", {{"kv_heads", s.kv_heads}, {"context", s.context}, {"head_dim", s.head_dim}});
  check_elements(p, "S", {{"q_heads", s.q_heads}, {"kv_tile", s.kv_tile}});
  // The kernel steps through the context by kv_tile.
  check_step(p, "context", s.context, "kv_tile", s.kv_tile);
  // Checked here, before any run, as bad input (exit 2); gqa_inputs checks
  // it again for kernels called directly.
  if (s.q_heads % s.kv_heads != 0) {
    throw BenchError("bench '" + p.bench() + "' parameters q_heads=" + std::to_string(s.q_heads) +
                     ", kv_heads=" + std::to_string(s.kv_heads) + ": expected q_heads a multiple of kv_heads");
  }
  return s;
}

const char* const kGqaVariants[] = {"opt2", "opt3"};

// Runs a GQA decode variant on fresh inputs and, in data mode, checks O.
void gqa_checked(Tl& tl, const GqaShape& s, void (*kernel)(Tl&, const GqaShape&, const GqaTensors&)) {
  const GqaTensors t = gqa_inputs(tl, s);
  kernel(tl, s, t);
  if (!tl.data_mode()) return;
  report_check(tl, tl.kernel_name() + " O",
               compare(tl.host_read(t.out),
                       reference_gqa_decode(tl.host_read(t.q), tl.host_read(t.k), tl.host_read(t.v),
                                            s.q_heads, s.kv_heads, s.head_dim, s.context)));
}

}  // namespace

Bench gqa_decode_bench() {
  return Bench{
    "gqa-decode",
    "GQA attention decode, opt2 (two composites per KV tile) vs opt3 (single-op primitives)",
    {{"q_heads", "32", "query heads"},
     {"kv_heads", "8", "KV heads (q_heads / kv_heads query heads share one)"},
     {"head_dim", "128", "head dimension d"},
     {"context", "4096", "KV cache length in tokens"},
     {"kv_tile", "128", "KV tile length (the last tile is shorter if context is not a multiple)"},
     {"dtype", "bf16", "element type of Q, K, V"},
     {"input_range", "1", "inputs uniform in [-r, r) (scores spread about r^2 x sqrt(d) / 3 x 3)"}},
    [](const BenchParams& p, const PeConfig&) {
      const GqaShape s = gqa_shape(p);
      return Launches{{"opt2", [s](Tl& tl) { gqa_checked(tl, s, gqa_decode_opt2); }},
                      {"opt3", [s](Tl& tl) { gqa_checked(tl, s, gqa_decode_opt3); }}};
    },
    [](const BenchParams&, const PeConfig& cfg, const RunResult& r) {
      nlohmann::json j;
      for (const char* v : kGqaVariants) j[v] = launch_figures(launch(r, v), cfg);
      // n/a (null) when dispatch is free: no opt2 per-tile cost to compare with.
      j["tile_dispatch_ratio_opt3_over_opt2"] = ratio_json(
          ratio(metric(launch(r, "opt3"), "tile_dispatch_ns"), metric(launch(r, "opt2"), "tile_dispatch_ns")));
      return j;
    },
    [](std::ostream& os, const BenchParams& p, const PeConfig& cfg, const RunResult& r) {
      const GqaShape s = gqa_shape(p);
      const LaunchResult& o2 = launch(r, "opt2");
      const LaunchResult& o3 = launch(r, "opt3");
      os << "gqa-decode: " << s.q_heads << " query heads, " << s.kv_heads << " KV heads, d = "
         << s.head_dim << ", context " << s.context << ", KV tile " << s.kv_tile << " ("
         << metric(o2, "tiles") << " tiles), " << p.text("dtype") << ", " << cfg.clock_freq_ghz
         << " GHz\n";
      os << "                                        opt2          opt3\n";
      auto row = [&](const char* label, double a, double b, const char* f) {
        // A figure that does not apply (NaN) prints as n/a, right-aligned.
        const auto cell = [f](double v) { return std::isnan(v) ? std::string(11, ' ') + "n/a" : fmt(f, v); };
        os << "  " << label << std::string(34 - std::string(label).size(), ' ') << cell(a) << cell(b) << "\n";
      };
      row("per-tile dispatch (ns)", metric(o2, "tile_dispatch_ns"), metric(o3, "tile_dispatch_ns"), "%14.2f");
      row("per-tile dispatch (cycles charged)", metric(o2, "tile_dispatch_cycles_charged"),
          metric(o3, "tile_dispatch_cycles_charged"), "%14.2f");
      row("per-tile dispatch (cycles exact)", metric(o2, "tile_dispatch_cycles_exact"),
          metric(o3, "tile_dispatch_cycles_exact"), "%14.3f");
      row("commands per tile", metric(o2, "tile_commands"), metric(o3, "tile_commands"), "%14.2f");
      row("logical bytes per tile", metric(o2, "tile_logical_bytes"), metric(o3, "tile_logical_bytes"), "%14.2f");
      row("commands (total)", double(o2.commands), double(o3.commands), "%14.0f");
      row("latency (us)", double(o2.latency_ps()) / 1e6, double(o3.latency_ps()) / 1e6, "%14.3f");
      row("PE_CPU dispatch (us)", double(o2.dispatch_ps) / 1e6, double(o3.dispatch_ps) / 1e6, "%14.3f");
      row("PE_CPU stalled on full queue (us)", double(o2.stall_ps) / 1e6, double(o3.stall_ps) / 1e6, "%14.3f");
      for (const ComponentInfo& c : kComponents) {
        if (!c.busy || (c.optional && !o2.busy_ps[int(c.component)] && !o3.busy_ps[int(c.component)])) continue;
        const std::string label = std::string("utilisation ") + c.name + " (%)";
        const int i = int(c.component);
        row(label.c_str(), 100.0 * ratio(double(o2.busy_ps[i]), double(o2.latency_ps())),
            100.0 * ratio(double(o3.busy_ps[i]), double(o3.latency_ps())), "%14.1f");
      }
      os << "  bound                             " << bottleneck(o2) << " | " << bottleneck(o3) << "\n";
      if (!std::isnan(metric(o2, "max_rel_err"))) {
        row("data check: max abs error", metric(o2, "max_abs_err"), metric(o3, "max_abs_err"), "%14.3g");
        row("data check: max rel error", metric(o2, "max_rel_err"), metric(o3, "max_rel_err"), "%14.3g");
      }
      os << "  opt3 / opt2 per-tile dispatch: "
         << ratio_text("%.3fx", ratio(metric(o3, "tile_dispatch_ns"), metric(o2, "tile_dispatch_ns"))) << "\n";
      print_stats_table(os, r.stats);
    },
    {"opt2.tile_dispatch_ns", "opt3.tile_dispatch_ns", "tile_dispatch_ratio_opt3_over_opt2",
     "opt2.latency_ns", "opt3.latency_ns"}};
}

}  // namespace kb
