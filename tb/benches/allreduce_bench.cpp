// The all-reduce bench: LRAB next to ring on a mesh of
// cubes (the configuration's topology, 2 x 4 cubes of 8 PEs by default),
// over message sizes, reported the way nccl-tests does:
//   algbw = bytes / time,  busbw = algbw x 2 (n - 1) / n  (n PEs),
// next to the analytic alpha-beta model of tb/benches/allreduce_model.h.
#include <algorithm>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "kernels/ccl/all_reduce.h"
#include "tb/benches/allreduce_model.h"
#include "tb/benches/builtin_benches.h"
#include "tb/run/mesh_run.h"
#include "tb/run/report.h"

namespace kb {
namespace {

AllReduceAlgo algo_of(const std::string& name) {
  if (name == "lrab") return AllReduceAlgo::kLrab;
  if (name == "ring") return AllReduceAlgo::kRing;
  throw BenchError("allreduce: algos: unknown algorithm '" + name + "'; expected lrab or ring");
}

std::vector<std::string> algos_of(const BenchParams& p) {
  const std::vector<std::string> out = p.words("algos");
  for (const std::string& a : out) algo_of(a);
  return out;
}

Kernel all_reduce_kernel(AllReduceAlgo algo, int64_t elems, AllReduceOptions opt) {
  return [=](Tl& tl) {
    const Tensor x = tl.hbm("x", 1, elems, Dtype::kFp32);
    tl.host_random(x, 1 + tl.global_pe());
    if (algo == AllReduceAlgo::kRing) all_reduce_ring(tl, x, opt);
    else all_reduce_lrab(tl, x, opt);
  };
}

nlohmann::json run_allreduce(const BenchParams& p, const PeConfig& cfg, const SystemOutputs& out) {
  const std::vector<int64_t> sizes = p.integers("sizes");
  const std::vector<std::string> algos = algos_of(p);
  AllReduceOptions opt;
  opt.chunk_elems = p.integer("chunk_elems");
  opt.window = p.integer("window");
  if (uint64_t(opt.window) > cfg.ipc.queue_depth) {
    throw BenchError("allreduce: window " + std::to_string(opt.window) + " is above pe.attrs.ipc.queue_depth " +
                     std::to_string(cfg.ipc.queue_depth) + ": chunks in flight would wait for slots");
  }
  constexpr int64_t kMaxBytes = int64_t(1) << 30;  // per PE: keeps a run to minutes
  for (int64_t s : sizes) {
    if (s < 4 || s > kMaxBytes || s % 4 != 0) {
      throw BenchError("allreduce: sizes: " + std::to_string(s) +
                       " bytes; expected a multiple of 4 (fp32) in [4, " + std::to_string(kMaxBytes) + "]");
    }
  }
  if (out.any() && sizes.size() * algos.size() != 1) {
    throw BenchError("allreduce: --oplog, --trace, --vcd and --stats need one mesh run: give one size and one algorithm "
                     "(--param sizes=N --param algos=lrab)");
  }
  const uint64_t n = cfg.topology.pes();
  if (n < 2) {  // its time, bandwidths and model ratio would all be 0/0
    throw BenchError("allreduce: a collective needs at least 2 PEs; the topology has 1 (topology.mesh.h x "
                     "topology.mesh.w cubes of topology.cube.pes PEs)");
  }
  if (out.check_only) return nullptr;
  nlohmann::json figures;
  figures["mesh"] = {{"h", cfg.topology.mesh.h}, {"w", cfg.topology.mesh.w}, {"pes_per_cube", cfg.topology.cube.pes},
                     {"pes", n}};
  for (const std::string& a : algos) {
    for (int64_t bytes : sizes) {
      MeshRunSpec spec;
      spec.config = cfg;
      spec.kernel_name = "all_reduce_" + a;
      spec.kernel = all_reduce_kernel(algo_of(a), bytes / 4, opt);
      out.apply(spec);
      const MeshRunResult r = run_mesh_isolated(spec);
      if (!r.ok) throw SystemRunError(a + " " + std::to_string(bytes) + " bytes: " + r.error);
      const double t = double(r.latency_ps()) * 1e-12;
      const double algbw = t > 0 ? double(bytes) / t / 1e9 : 0.0;
      const double model = all_reduce_model_ps(algo_of(a), cfg, uint64_t(bytes), opt) * 1e-12;
      nlohmann::json f;
      f["bytes"] = bytes;
      f["time_us"] = t * 1e6;
      f["algbw_GBps"] = algbw;
      f["busbw_GBps"] = algbw * 2.0 * double(n - 1) / double(n);
      f["model_us"] = model * 1e6;
      f["model_ratio"] = model > 0 ? t / model : 0.0;
      f["commands"] = r.commands;
      f["stages"] = r.stages;
      figures[a][std::to_string(bytes)] = f;  // keyed by size: sweeps flatten it to lrab.<bytes>.time_us
    }
  }
  return figures;
}

void report_allreduce(std::ostream& os, const BenchParams& p, const PeConfig& cfg, const nlohmann::json& f) {
  (void)p;
  os << "all-reduce (sum, fp32) on a " << cfg.topology.mesh.h << " x " << cfg.topology.mesh.w << " mesh of "
     << cfg.topology.cube.pes << "-PE cubes (" << f.at("mesh").at("pes").get<uint64_t>() << " PEs), LRAB root cube "
     << lrab_root(uint32_t(cfg.topology.mesh.h), uint32_t(cfg.topology.mesh.w)) << "\n";
  os << "  algo        bytes      time_us   algbw_GB/s   busbw_GB/s   model_us  time/model   commands\n";
  for (const auto& [algo, by_size] : f.items()) {
    if (algo == "mesh") continue;
    std::vector<const nlohmann::json*> rows;  // by size (the keys sort as text)
    for (const auto& [bytes, row] : by_size.items()) rows.push_back(&row);
    std::sort(rows.begin(), rows.end(), [](const nlohmann::json* a, const nlohmann::json* b) {
      return a->at("bytes").get<int64_t>() < b->at("bytes").get<int64_t>();
    });
    for (const nlohmann::json* row : rows) {
      const nlohmann::json& x = *row;
      os << "  " << algo << std::string(algo.size() < 6 ? 6 - algo.size() : 0, ' ')
         << fmt("%11.0f", x.at("bytes").get<double>()) << fmt("%13.2f", x.at("time_us").get<double>())
         << fmt("%13.2f", x.at("algbw_GBps").get<double>()) << fmt("%13.2f", x.at("busbw_GBps").get<double>())
         << fmt("%11.2f", x.at("model_us").get<double>()) << fmt("%12.3f", x.at("model_ratio").get<double>())
         << fmt("%11.0f", x.at("commands").get<double>()) << "\n";
    }
  }
}

}  // namespace

Bench allreduce_bench() {
  Bench b;
  b.name = "allreduce";
  b.description = "all-reduce (sum) over a mesh of cubes: LRAB vs ring, time, algbw, busbw (nccl-tests) and the alpha-beta model";
  b.params = {
      {"sizes", "4096,16384,65536,262144,1048576,4194304,16777216,67108864", "message bytes per PE (fp32), comma-separated"},
      {"algos", "lrab,ring", "algorithms: lrab, ring (comma-separated)"},
      {"chunk_elems", "131072", "elements per TCM chunk (kernels/ccl/all_reduce.h)"},
      {"window", "2", "chunks in flight per PE pair (at most pe.attrs.ipc.queue_depth)"},
  };
  b.system = run_allreduce;
  b.system_report = report_allreduce;
  b.sweep_columns = {"*time_us", "*busbw_GBps"};
  return b;
}

}  // namespace kb
