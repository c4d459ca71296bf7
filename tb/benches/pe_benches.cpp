// The built-in benches.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <ostream>
#include <string>

#include "kernels/attention/gqa_decode.h"
#include "kernels/gemm/gemm_async.h"
#include "kernels/gemm/gemm_composite.h"
#include "kernels/gemm/gemm_tiled_single_op.h"
#include "kernels/recipes/softmax_merge.h"
#include "tb/benches/bench_registry.h"
#include "tb/benches/reference.h"
#include "tb/run/report.h"
#include "models/util/checked.h"

namespace kb {

void register_builtin_benches() {
  link_allreduce_bench();
  link_long_ctx_bench();
}

namespace {

using Launches = std::vector<std::pair<std::string, Kernel>>;

double metric(const LaunchResult& l, const std::string& name) {
  for (const auto& [n, v] : l.metrics)
    if (n == name) return v;
  return std::numeric_limits<double>::quiet_NaN();
}

const LaunchResult& launch(const RunResult& r, const std::string& kernel) {
  for (const LaunchResult& l : r.launches)
    if (l.kernel == kernel) return l;
  throw BenchError("run has no launch '" + kernel + "'");
}

// Data mode: report the output's error against the reference as metrics
// and fail the run beyond the tolerance (tb/benches/reference.h).
void report_check(Tl& tl, const std::string& what, const ErrorStats& e) {
  tl.metric("max_abs_err", e.max_abs);
  tl.metric("max_rel_err", e.max_rel);
  if (!e.ok()) throw KernelError("data check failed: " + what + " vs the C++ reference: " + e.describe());
}

// Runs a GEMM kernel on fresh inputs and, in data mode, checks C.
template <class KernelFn>
void gemm_checked(Tl& tl, const GemmShape& s, KernelFn kernel) {
  const GemmTensors t = gemm_inputs(tl, s);
  kernel(tl, s, t);
  if (!tl.data_mode()) return;
  report_check(tl, tl.kernel_name() + " C",
               compare(tl.host_read(t.c), reference_matmul(tl.host_read(t.a), tl.host_read(t.b), s.m, s.n, s.k)));
}

// The number of elements of a tensor a kernel declares from bench
// parameters, checked: a product beyond 2^63 - 1 is bad input naming the
// parameters, not a wrapped, negative shape. `factors` are
// parameter names with their values.
void check_elements(const BenchParams& p, const char* tensor,
                    std::initializer_list<std::pair<const char*, int64_t>> factors) {
  uint64_t product = 1;
  bool fits = true;
  std::string names, values;
  for (const auto& [name, value] : factors) {
    const std::optional<uint64_t> next = checked_mul(product, uint64_t(value));
    fits = fits && next && *next <= uint64_t(std::numeric_limits<int64_t>::max());
    if (fits) product = *next;
    names += std::string(names.empty() ? "" : " x ") + name;
    values += std::string(values.empty() ? "" : ", ") + name + "=" + std::to_string(value);
  }
  if (!fits) {
    throw BenchError("bench '" + p.bench() + "' parameters " + values + ": " + tensor + " would have " + names +
                     " elements; expected at most 2^63 - 1 (" +
                     std::to_string(std::numeric_limits<int64_t>::max()) + ")");
  }
}

// Loops step through `total` by `step` (tiles, KV tiles): total + step must
// not overflow int64, or the index wraps and the loop never ends.
void check_step(const BenchParams& p, const char* total_name, int64_t total, const char* step_name, int64_t step) {
  if (total > std::numeric_limits<int64_t>::max() - step) {
    throw BenchError("bench '" + p.bench() + "' parameters " + total_name + "=" + std::to_string(total) + ", " +
                     step_name + "=" + std::to_string(step) + ": expected " + total_name + " + " + step_name +
                     " at most 2^63 - 1");
  }
}

// --- GEMM benches

// A [m, k], B [k, n], C [m, n].
void check_gemm_elements(const BenchParams& p, int64_t m, int64_t n, int64_t k) {
  check_elements(p, "A", {{"m", m}, {"k", k}});
  check_elements(p, "B", {{"k", k}, {"n", n}});
  check_elements(p, "C", {{"m", m}, {"n", n}});
}

GemmShape gemm_shape(const BenchParams& p) {
  GemmShape s;
  s.m = p.integer("m");
  s.n = p.integer("n");
  s.k = p.integer("k");
  s.dtype = p.dtype("dtype");
  s.tile_m = p.integer("tile_m");
  s.tile_n = p.integer("tile_n");
  s.tile_k = p.integer("tile_k");
  check_gemm_elements(p, s.m, s.n, s.k);
  check_step(p, "m", s.m, "tile_m", s.tile_m);
  check_step(p, "n", s.n, "tile_n", s.tile_n);
  check_step(p, "k", s.k, "tile_k", s.tile_k);
  return s;
}

const std::vector<BenchParam> kGemmParams = {
    {"m", "256", "rows of A and C"},
    {"n", "256", "columns of B and C"},
    {"k", "256", "columns of A, rows of B"},
    {"dtype", "bf16", "element type of A and B (C accumulates in fp32): fp32, bf16, fp16, int8"},
    {"tile_m", "64", "kernel tile rows (single-op kernels)"},
    {"tile_n", "64", "kernel tile columns (single-op kernels)"},
    {"tile_k", "64", "kernel tile depth (single-op kernels)"},
};

KB_REGISTER_BENCH(Bench{
    "gemm-tiled-single-op",
    "tiled GEMM C = A @ B from HBM, single-op loads/dots/stores, double-buffered",
    kGemmParams,
    [](const BenchParams& p, const PeConfig&) {
      const GemmShape s = gemm_shape(p);
      return Launches{{"gemm_tiled_single_op", [s](Tl& tl) {
                         gemm_checked(tl, s, [](Tl& t, const GemmShape& sh, const GemmTensors& io) {
                           gemm_tiled_single_op(t, sh, io);
                         });
                       }}};
    }});

KB_REGISTER_BENCH(Bench{
    "gemm-composite",
    "GEMM C = A @ B from HBM as one CompositeCmd: the scheduler tiles and double-buffers",
    kGemmParams,
    [](const BenchParams& p, const PeConfig&) {
      const GemmShape s = gemm_shape(p);
      return Launches{{"gemm_composite", [s](Tl& tl) {
                         gemm_checked(tl, s, [](Tl& t, const GemmShape& sh, const GemmTensors& io) {
                           gemm_composite(t, sh, io);
                         });
                       }}};
    }});

const char* const kGemmVariants[] = {"composite", "async_full", "async_tiled"};

std::string gemm_launch_name(const char* variant, int64_t k) {
  return std::string(variant) + "_k" + std::to_string(k);
}

double tflops(int64_t m, int64_t n, int64_t k, uint64_t latency_ps) {
  return 2.0 * double(m) * double(n) * double(k) / (double(latency_ps) * 1e-12) / 1e12;
}

KB_REGISTER_BENCH(Bench{
    "gemm-async-vs-composite",
    "GEMM as one composite vs user-orchestrated async_full and async_tiled, over a K sweep",
    {{"m", "256", "rows of A and C"},
     {"n", "256", "columns of B and C"},
     {"ks", "512,1024,2048,3072", "K values (comma-separated)"},
     {"dtype", "bf16", "element type of A and B (C accumulates in fp32)"},
     {"tile_k", "64", "K chunk of async_tiled"}},
    [](const BenchParams& p, const PeConfig&) {
      Launches out;
      const std::vector<int64_t> ks = p.integers("ks");
      for (size_t i = 0; i < ks.size(); ++i) {
        // Launches and figures are keyed by K.
        if (std::find(ks.begin(), ks.begin() + std::ptrdiff_t(i), ks[i]) != ks.begin() + std::ptrdiff_t(i)) {
          throw BenchError("bench '" + p.bench() + "' parameter ks=" + p.text("ks") + ": K " +
                           std::to_string(ks[i]) + " is listed twice; expected distinct values");
        }
      }
      for (int64_t k : ks) {
        GemmShape s;
        s.m = p.integer("m");
        s.n = p.integer("n");
        s.k = k;
        s.dtype = p.dtype("dtype");
        s.tile_k = p.integer("tile_k");
        check_gemm_elements(p, s.m, s.n, s.k);
        check_step(p, "k", s.k, "tile_k", s.tile_k);
        using Fn = void (*)(Tl&, const GemmShape&, const GemmTensors&);
        const std::pair<const char*, Fn> variants[] = {
            {"composite", gemm_composite}, {"async_full", gemm_async_full}, {"async_tiled", gemm_async_tiled}};
        for (const auto& [variant, fn] : variants) {
          out.push_back({gemm_launch_name(variant, k), [s, fn = fn](Tl& tl) { gemm_checked(tl, s, fn); }});
        }
      }
      return out;
    },
    [](const BenchParams& p, const PeConfig& cfg, const RunResult& r) {
      nlohmann::json j;
      const int64_t m = p.integer("m"), n = p.integer("n");
      for (int64_t k : p.integers("ks")) {
        for (const char* v : kGemmVariants) {
          const LaunchResult& l = launch(r, gemm_launch_name(v, k));
          nlohmann::json f = launch_figures(l, cfg);
          f["tflops"] = tflops(m, n, k, l.latency_ps());
          j["k" + std::to_string(k)][v] = f;
        }
      }
      return j;
    },
    [](std::ostream& os, const BenchParams& p, const PeConfig& cfg, const RunResult& r) {
      const int64_t m = p.integer("m"), n = p.integer("n");
      os << "gemm-async-vs-composite: C [" << m << ", " << n << "] fp32 = A @ B (" << p.text("dtype")
         << "), hardware tile " << cfg.tile.m << "x" << cfg.tile.n << "x" << cfg.tile.k
         << ", async_tiled K chunk " << p.integer("tile_k") << "\n";
      os << "      K  variant        latency(us)   TFLOPS   dispatch(ns)  commands  GEMM util  bound"
         << (cfg.data_mode ? "                   max rel error" : "") << "\n";
      for (int64_t k : p.integers("ks")) {
        for (const char* v : kGemmVariants) {
          const LaunchResult& l = launch(r, gemm_launch_name(v, k));
          const double span = double(l.latency_ps());
          os << fmt("%7.0f", double(k)) << "  " << v << std::string(13 - std::string(v).size(), ' ')
             << fmt("%12.3f", span / 1e6) << fmt("%9.2f", tflops(m, n, k, l.latency_ps()))
             << fmt("%15.1f", double(l.dispatch_ps) / 1000.0) << fmt("%10.0f", double(l.commands))
             << fmt("%10.1f%%", 100.0 * double(l.busy_ps[int(Component::kPeGemm)]) / span) << "  "
             << bottleneck(l);
          if (cfg.data_mode) os << fmt("   %.3g", metric(l, "max_rel_err"));
          os << "\n";
        }
      }
      print_stats_table(os, r.stats);
    },
    {"*.tflops", "*.async_tiled.dispatch_ns"}});

// --- softmax_merge over a stream of KV tiles, scores already in TCM

void softmax_merge_stream(Tl& tl, int64_t g, int64_t d, int64_t kv_tile, int64_t tiles) {
  const Tensor v = tl.hbm("V", kv_tile * tiles, d, Dtype::kBf16);
  const Tensor s = tl.tcm("S", g, kv_tile, Dtype::kFp32);
  const Tensor m[2] = {tl.tcm("m0", g, 1, Dtype::kFp32), tl.tcm("m1", g, 1, Dtype::kFp32)};
  SoftmaxMergeState st{m[0], m[1], tl.tcm("l", g, 1, Dtype::kFp32), tl.tcm("O", g, d, Dtype::kFp32)};
  const SoftmaxMergeScratch scratch{tl.tcm("m_tile", g, 1, Dtype::kFp32),
                                    tl.tcm("corr", g, 1, Dtype::kFp32),
                                    tl.tcm("P", g, kv_tile, Dtype::kFp32),
                                    tl.tcm("row_sum", g, 1, Dtype::kFp32)};
  tl.host_random(v, 3);
  tl.fill(s, 0.0);
  tl.fill(m[0], -std::numeric_limits<double>::infinity());
  tl.fill(st.l, 0.0);
  tl.fill(st.o, 0.0);
  for (int64_t t = 0; t < tiles; ++t) {
    st.m_in = m[t % 2];
    st.m_out = m[(t + 1) % 2];
    softmax_merge(tl, s, tl.rows(v, t * kv_tile, kv_tile), st, scratch);
  }
}

KB_REGISTER_BENCH(Bench{
    "softmax-merge",
    "the softmax_merge recipe composite over a stream of KV tiles (V streamed from HBM)",
    {{"heads", "8", "query heads per KV group (rows of S, m, l, O)"},
     {"head_dim", "128", "head dimension d"},
     {"kv_tile", "128", "KV tile length T"},
     {"tiles", "8", "number of KV tiles"}},
    [](const BenchParams& p, const PeConfig&) {
      const int64_t g = p.integer("heads"), d = p.integer("head_dim");
      const int64_t t = p.integer("kv_tile"), n = p.integer("tiles");
      check_elements(p, "V", {{"kv_tile", t}, {"tiles", n}, {"head_dim", d}});
      check_elements(p, "S", {{"heads", g}, {"kv_tile", t}});
      check_elements(p, "O", {{"heads", g}, {"head_dim", d}});
      return Launches{{"softmax_merge_stream", [=](Tl& tl) { softmax_merge_stream(tl, g, d, t, n); }}};
    }});

// --- GQA attention decode, opt2 vs opt3

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

KB_REGISTER_BENCH(Bench{
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
      j["tile_dispatch_ratio_opt3_over_opt2"] =
          metric(launch(r, "opt3"), "tile_dispatch_ns") / metric(launch(r, "opt2"), "tile_dispatch_ns");
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
        os << "  " << label << std::string(34 - std::string(label).size(), ' ') << fmt(f, a)
           << fmt(f, b) << "\n";
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
        row(label.c_str(), 100.0 * double(o2.busy_ps[i]) / double(o2.latency_ps()),
            100.0 * double(o3.busy_ps[i]) / double(o3.latency_ps()), "%14.1f");
      }
      os << "  bound                             " << bottleneck(o2) << " | " << bottleneck(o3) << "\n";
      if (!std::isnan(metric(o2, "max_rel_err"))) {
        row("data check: max abs error", metric(o2, "max_abs_err"), metric(o3, "max_abs_err"), "%14.3g");
        row("data check: max rel error", metric(o2, "max_rel_err"), metric(o3, "max_rel_err"), "%14.3g");
      }
      os << "  opt3 / opt2 per-tile dispatch: "
         << fmt("%.3fx", metric(o3, "tile_dispatch_ns") / metric(o2, "tile_dispatch_ns")) << "\n";
      print_stats_table(os, r.stats);
    },
    {"opt2.tile_dispatch_ns", "opt3.tile_dispatch_ns", "tile_dispatch_ratio_opt3_over_opt2",
     "opt2.latency_ns", "opt3.latency_ns"}});

}  // namespace
}  // namespace kb
