// The GEMM benches on one PE: the tiled single-op kernel, the composite,
// and the composite against user-orchestrated async variants over K.
#include <algorithm>
#include <ostream>
#include <string>

#include "kernels/gemm/gemm_async.h"
#include "kernels/gemm/gemm_composite.h"
#include "kernels/gemm/gemm_tiled_single_op.h"
#include "tb/benches/builtin_benches.h"
#include "tb/benches/pe_bench_util.h"
#include "tb/run/report.h"

namespace kb {

namespace {

using namespace pe_bench;  // tb/benches/pe_bench_util.h

// Runs a GEMM kernel on fresh inputs and, in data mode, checks C.
template <class KernelFn>
void gemm_checked(Tl& tl, const GemmShape& s, KernelFn kernel) {
  const GemmTensors t = gemm_inputs(tl, s);
  kernel(tl, s, t);
  if (!tl.data_mode()) return;
  report_check(tl, tl.kernel_name() + " C",
               compare(tl.host_read(t.c), reference_matmul(tl.host_read(t.a), tl.host_read(t.b), s.m, s.n, s.k)));
}

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

const char* const kGemmVariants[] = {"composite", "async_full", "async_tiled"};

std::string gemm_launch_name(const char* variant, int64_t k) {
  return std::string(variant) + "_k" + std::to_string(k);
}

double tflops(int64_t m, int64_t n, int64_t k, uint64_t latency_ps) {
  return 2.0 * double(m) * double(n) * double(k) / (double(latency_ps) * 1e-12) / 1e12;
}

}  // namespace

Bench gemm_tiled_single_op_bench() {
  return Bench{
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
    }};
}

Bench gemm_composite_bench() {
  return Bench{
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
    }};
}

Bench gemm_async_vs_composite_bench() {
  return Bench{
    "gemm-async-vs-composite",
    "GEMM as one composite vs user-orchestrated async_full and async_tiled, over a K sweep",
    {{"m", "256", "rows of A and C"},
     {"n", "256", "columns of B and C"},
     {"ks", "512,1024,2048,3072", "K values (comma-separated)"},
     {"dtype", "bf16", "element type of A and B (C accumulates in fp32)"},
     {"tile_k", "64", "K chunk of async_tiled"}},
    [](const BenchParams& p, const PeConfig&) {
      Launches out;
      const std::vector<int64_t> ks = p.integers("ks");  // distinct: launches and figures are keyed by K
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
    {"*.tflops", "*.async_tiled.dispatch_ns"}};
}

}  // namespace kb
