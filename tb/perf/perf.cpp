#include "tb/perf/perf.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <unistd.h>

#include "kernels/attention/gqa_decode.h"
#include "kernels/attention/long_ctx/long_ctx.h"
#include "kernels/ccl/all_reduce.h"
#include "kernels/gemm/gemm_composite.h"
#include "models/trace/component_table.h"
#include "tb/benches/bench_registry.h"
#include "tb/perf/measure.h"
#include "tb/run/mesh_run.h"
#include "tb/run/runner.h"

namespace kb {

namespace {

using perf_detail::measure;
using perf_detail::Measured;
using perf_detail::Row;

uint64_t work_of(const RunResult& r, uint64_t* commands) {
  *commands = 0;
  for (const LaunchResult& l : r.launches) *commands += l.commands;
  uint64_t stages = 0;
  for (const EngineInfo& e : kEngines) stages += r.records_by_component[int(e.component)];
  return stages;
}

// A single-PE workload: run_isolated in timing mode.
Row workload(const std::string& name, const Kernel& k, const PerfOptions& o, double* best_ceiling) {
  RunSpec spec;
  spec.launches = {{name, k}};
  spec.summary = false;  // the model alone: statistics cost a little time per record
  return measure(
      name,
      [&spec] {
        const RunResult r = run_isolated(spec);
        Measured m;
        if (!r.ok) {
          m.error = r.error;
          return m;
        }
        m.stages = work_of(r, &m.commands);
        m.seconds = r.sim_wall_seconds;
        m.rss_kb = r.peak_rss_kb;
        return m;
      },
      o, best_ceiling);
}

GqaShape gqa(int64_t context) {
  GqaShape s;
  s.context = context;
  return s;
}


// ---- Mesh workloads ----
// A 2 x 4 mesh of 8-PE cubes runs the four long-context decode cases
// (kernels/attention/long_ctx) at the mesh context and at twice it, and the
// all-reduce bench's LRAB and ring. Each run follows its own ceiling run,
// as a single-PE workload's. "of 1-PE opt2" compares like with like: the
// long-context PEs run opt2's per-tile composites, so it is the mesh row's
// stages per wall-second over the single-PE opt2 row's, each taken as the
// median ratio to the adjacent ceiling runs (so drift between the two rows
// cancels). 1.0: a mesh stage costs what a single PE's does.

constexpr uint32_t kMeshH = 2, kMeshW = 4, kMeshCubePes = 8;

struct MeshWorkload {
  std::string name;
  Kernel kernel;
};

std::string mesh_long_ctx_name(LongCtxCase c, int64_t context) {
  return std::string("mesh long-ctx ") + long_ctx_case_name(c) + ", context " + std::to_string(context);
}

std::vector<MeshWorkload> mesh_workloads(const PerfOptions& o) {
  std::vector<MeshWorkload> out;
  for (LongCtxCase c : kLongCtxCases) {
    for (int64_t context : {o.mesh_context, 2 * o.mesh_context}) {
      out.push_back({mesh_long_ctx_name(c, context), [c, context](Tl& tl) { gqa_long_ctx(tl, c, gqa(context)); }});
    }
  }
  const int64_t elems = o.mesh_allreduce_bytes / 4;
  for (const bool lrab : {true, false}) {
    out.push_back({std::string("mesh all-reduce ") + (lrab ? "lrab" : "ring") + ", " +
                       std::to_string(o.mesh_allreduce_bytes) + " B",
                   [lrab, elems](Tl& tl) {
                     // As the allreduce bench's kernel (tb/benches/allreduce_bench.cpp).
                     const Tensor x = tl.hbm("x", 1, elems, Dtype::kFp32);
                     tl.host_random(x, 1 + tl.global_pe());
                     if (lrab) all_reduce_lrab(tl, x);
                     else all_reduce_ring(tl, x);
                   }});
  }
  return out;
}

// As workload(): `repeats` mesh runs, each after a ceiling run.
Row mesh_workload(const MeshWorkload& w, const PerfOptions& o, double* best_ceiling) {
  MeshRunSpec spec;
  spec.config.topology.mesh.h = kMeshH;
  spec.config.topology.mesh.w = kMeshW;
  spec.config.topology.cube.pes = kMeshCubePes;
  spec.kernel_name = w.name;
  spec.kernel = w.kernel;
  return measure(
      w.name,
      [&spec] {
        const MeshRunResult r = run_mesh_isolated(spec);
        Measured m;
        if (!r.ok) {
          m.error = r.error;
          return m;
        }
        m.commands = r.commands;
        m.stages = r.stages;
        m.seconds = r.sim_wall_seconds;
        m.rss_kb = r.peak_rss_kb;
        return m;
      },
      o, best_ceiling);
}

// A failed row of a table: its name and error; false when it did not fail.
bool print_failed(const Row& r, std::ostream& os) {
  if (r.error.empty()) return false;
  os << r.name << ": failed: " << r.error << "\n";
  return true;
}

// Wall time x the ceiling rate: a run's length in ceiling transactions,
// which machine drift hardly changes (fraction = work / wall / ceiling).
double ceiling_normalised_wall(const Row& r) { return double(std::max(r.commands, r.stages)) / r.fraction; }

// The mesh table, then the context-doubling check of each long-context
// case. `opt2`: the single-PE opt2 row when it ran. Returns 1 if a row failed.
int report_mesh(const std::vector<Row>& rows, const Row* opt2, const PerfOptions& o, std::ostream& os) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "\nmesh: %u x %u cubes of %u PEs (%u PEs). 'of 1-PE opt2': stages/s relative to the ceiling, "
                "over the single-PE opt2 row's (1.0: a mesh stage costs what a single PE's does; "
                "a collective's stage carries many bursts, not like for like)%s\n",
                kMeshH, kMeshW, kMeshCubePes, kMeshH * kMeshW * kMeshCubePes,
                opt2 ? "" : "; not shown: the opt2 row did not run (--only)");
  os << buf;
  os << "workload                                         commands     stages   wall(s)   commands/s     stages/s  "
        "of ceiling  of 1-PE opt2  peak RSS(MB)\n";
  int rc = 0;
  for (const Row& r : rows) {
    if (print_failed(r, os)) {
      rc = 1;
      continue;
    }
    char vs[32] = "-";
    if (opt2) std::snprintf(vs, sizeof vs, "%.2f", r.fraction / opt2->fraction);
    std::snprintf(buf, sizeof buf, "%-46s %10llu %10llu %9.3f %12.0f %12.0f %10.1f%% %13s %13.1f\n",
                  r.name.c_str(), (unsigned long long)r.commands, (unsigned long long)r.stages, r.seconds,
                  double(r.commands) / r.seconds, double(r.stages) / r.seconds, 100.0 * r.fraction, vs,
                  double(r.rss_kb) / 1024.0);
    os << buf;
  }
  auto find = [&rows](const std::string& name) -> const Row* {
    for (const Row& r : rows)
      if (r.name == name && r.error.empty()) return &r;
    return nullptr;
  };
  for (LongCtxCase c : kLongCtxCases) {
    const Row* one = find(mesh_long_ctx_name(c, o.mesh_context));
    const Row* two = find(mesh_long_ctx_name(c, 2 * o.mesh_context));
    if (!one || !two) continue;
    std::snprintf(buf, sizeof buf,
                  "mesh scaling %s: context x2 -> wall time x%.3f (relative to the adjacent ceiling runs; "
                  "fastest runs x%.3f), peak RSS %.1f MB -> %.1f MB\n",
                  long_ctx_case_name(c), ceiling_normalised_wall(*two) / ceiling_normalised_wall(*one),
                  two->seconds / one->seconds, double(one->rss_kb) / 1024.0, double(two->rss_kb) / 1024.0);
    os << buf;
  }
  return rc;
}

// The trace's cost, (wall with --trace) / (wall without)
// of the same run, each the whole run_isolated call (fork, simulation,
// trace written and committed): the median over `repeats` pairs, once with
// the trace in a file of the temporary directory and once to /dev/null
// (the writer without the disk).
void trace_cost(const PerfOptions& o, std::ostream& os) {
  RunSpec spec;
  const int64_t ctx = o.context;
  spec.launches = {{"opt3", [ctx](Tl& tl) { gqa_decode_opt3(tl, gqa(ctx)); }}};
  const std::string file =
      (std::filesystem::temp_directory_path() / ("kernbench-perf-trace-" + std::to_string(getpid()) + ".json"))
          .string();
  auto wall = [&spec](const std::string& trace, std::string* error) {
    spec.trace_path = trace;
    const auto t0 = std::chrono::steady_clock::now();
    const RunResult r = run_isolated(spec);
    if (!r.ok) *error = r.error;
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  };
  std::vector<double> to_file, to_null, plain;
  std::string error;
  uintmax_t bytes = 0;
  for (int i = 0; i < o.repeats && error.empty(); ++i) {
    const double without = wall("", &error);
    plain.push_back(without);
    to_file.push_back(wall(file, &error) / without);
    std::error_code ec;
    bytes = std::filesystem::file_size(file, ec);
    std::filesystem::remove(file, ec);
    to_null.push_back(wall("/dev/null", &error) / without);
  }
  if (!error.empty()) {
    os << "trace cost: failed: " << error << "\n";
    return;
  }
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "trace cost (gqa-decode opt3, context %lld, %.3f s without a trace): wall with --trace / without "
                "= %.2fx to a file (%.0f MB), %.2fx to /dev/null (median of %d paired runs)\n",
                (long long)ctx, median(plain), median(to_file), double(bytes) / 1e6, median(to_null), o.repeats);
  os << buf;
}

}  // namespace

int run_perf(const PerfOptions& o, std::ostream& os) {
  // Scaling runs opt3 at twice the context: long enough runs that the
  // fixed start-up cost of a simulation does not flatter the ratio.
  const int64_t ctx = o.context, twice = 2 * o.context;
  const std::string twice_name = "gqa-decode opt3, context " + std::to_string(twice);
  const std::string full_name = "gqa-decode opt3, context " + std::to_string(ctx);
  std::vector<std::pair<std::string, Kernel>> workloads;
  workloads.emplace_back(full_name, [ctx](Tl& tl) { gqa_decode_opt3(tl, gqa(ctx)); });
  if (o.scaling) workloads.emplace_back(twice_name, [twice](Tl& tl) { gqa_decode_opt3(tl, gqa(twice)); });
  workloads.emplace_back("gqa-decode opt2, context " + std::to_string(ctx),
                         [ctx](Tl& tl) { gqa_decode_opt2(tl, gqa(ctx)); });
  const int64_t g = o.gemm;
  workloads.emplace_back("composite GEMM " + std::to_string(g) + "^3", [g](Tl& tl) {
    GemmShape s;
    s.m = s.n = s.k = g;
    gemm_composite(tl, s);
  });
  workloads.erase(std::remove_if(workloads.begin(), workloads.end(),
                                 [&](const auto& w) { return w.first.find(o.only) == std::string::npos; }),
                  workloads.end());
  if (o.mesh_allreduce_bytes < 4 || o.mesh_allreduce_bytes % 4 != 0) {
    throw BenchError("perf: --mesh-allreduce-bytes " + std::to_string(o.mesh_allreduce_bytes) +
                     " is not a positive multiple of 4 (fp32 elements)");
  }
  std::vector<MeshWorkload> mesh = mesh_workloads(o);
  mesh.erase(std::remove_if(mesh.begin(), mesh.end(),
                            [&](const MeshWorkload& w) { return w.name.find(o.only) == std::string::npos; }),
             mesh.end());
  const bool with_trace_cost = std::string("trace cost").find(o.only) != std::string::npos;
  if (workloads.empty() && mesh.empty() && !with_trace_cost) {
    throw BenchError("perf: no workload name contains '" + o.only +
                     "' (workloads: gqa-decode opt3, gqa-decode opt2, composite GEMM, mesh long-ctx, "
                     "mesh all-reduce)");
  }

  std::vector<Row> rows;
  double ceiling_rate = 0;
  for (const auto& [name, kernel] : workloads) rows.push_back(workload(name, kernel, o, &ceiling_rate));
  std::vector<Row> mesh_rows;
  for (const MeshWorkload& w : mesh) mesh_rows.push_back(mesh_workload(w, o, &ceiling_rate));

  char buf[320];
  std::snprintf(buf, sizeof buf,
                "SystemC ceiling (b_transport + wait, %llu commands per run): best %.0f commands/s. "
                "Each workload: %d runs in timing mode without op log, each after a ceiling run; "
                "rates from the fastest run, 'of ceiling' the median of run / adjacent ceiling\n",
                (unsigned long long)o.ceiling_commands, ceiling_rate, o.repeats);
  if (!rows.empty() || !mesh_rows.empty()) os << buf;  // no ceiling ran for the trace cost alone
  if (!rows.empty()) {
    os << "workload                                 commands     stages   wall(s)   commands/s     stages/s  "
          "of ceiling  peak RSS(MB)\n";
  }
  int rc = 0;
  for (const Row& r : rows) {
    if (print_failed(r, os)) {
      rc = 1;
      continue;
    }
    const double cps = double(r.commands) / r.seconds, sps = double(r.stages) / r.seconds;
    std::snprintf(buf, sizeof buf, "%-38s %10llu %10llu %9.3f %12.0f %12.0f %10.1f%% %13.1f\n",
                  r.name.c_str(), (unsigned long long)r.commands, (unsigned long long)r.stages,
                  r.seconds, cps, sps, 100.0 * r.fraction, double(r.rss_kb) / 1024.0);
    os << buf;
  }
  if (rows.size() >= 2 && rows[0].name == full_name && rows[1].name == twice_name &&
      rows[0].error.empty() && rows[1].error.empty()) {
    // Normalised by each workload's adjacent ceiling runs, which drift
    // hardly touches; the fastest runs' ratio is shown too.
    const double normalised = (double(rows[1].commands) / rows[1].fraction) /
                              (double(rows[0].commands) / rows[0].fraction);
    std::snprintf(buf, sizeof buf,
                  "scaling: context x2 -> wall time x%.3f (relative to the adjacent ceiling runs; "
                  "fastest runs x%.3f), peak RSS %.1f MB -> %.1f MB\n",
                  normalised, rows[1].seconds / rows[0].seconds, double(rows[0].rss_kb) / 1024.0,
                  double(rows[1].rss_kb) / 1024.0);
    os << buf;
  }
  if (!mesh_rows.empty()) {
    const Row* opt2 = nullptr;
    for (const Row& r : rows)
      if (r.name.rfind("gqa-decode opt2", 0) == 0 && r.error.empty()) opt2 = &r;
    rc |= report_mesh(mesh_rows, opt2, o, os);
  }
  if (with_trace_cost) trace_cost(o, os);
  return rc;
}

}  // namespace kb
