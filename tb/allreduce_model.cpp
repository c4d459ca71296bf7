// The alpha-beta model of kernels/ccl's all-reduces (README "All-reduce:
// the alpha-beta model"). Every term is a formula of the model's own
// timing (PE_IPC, the cube interconnect, UCIe links, HBM, PE_MATH), so the
// model follows any configuration; nothing is fitted to a simulation.
#include "tb/allreduce_model.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "models/pe/engines/pe_dma.h"
#include "models/pe/engines/pe_math.h"

namespace kb {

namespace {

struct Costs {
  const PeConfig& cfg;
  double r;       // bytes per cycle of an IPC receive port and of a recv's copy into TCM
  double link;    // bytes per cycle of a UCIe link
  double l_ic;    // cube interconnect latency
  double burst;   // IPC burst bytes

  // A message of b bytes over `hops` links: the path latency to the
  // receiving port (both cube interconnects when it leaves the cube, each
  // link's latency and, store-and-forward, one burst's transfer per hop).
  double path(double b, int hops, bool same_pe_cube) const {
    if (hops == 0) return same_pe_cube ? l_ic : 0;
    return 2 * l_ic + hops * (double(cfg.topology.link.latency_cycles) + std::ceil(std::min(b, burst) / link));
  }
  // SEND from TCM: setup, the HEADER there and answered, the DATA bursts
  // serialised on the receiver's port (alpha: everything but b / r).
  double send(double b, int hops) const {
    const double header_path = hops == 0 ? l_ic : 2 * l_ic + hops * (double(cfg.topology.link.latency_cycles) + 1);
    return double(cfg.dma.setup_cycles) + header_path + std::ceil(16 / r) + path(b, hops, true) + std::ceil(b / r);
  }
  // SEND from HBM: the read first.
  double send_hbm(double b, int hops) const { return double(hbm_access_cycles(cfg, uint64_t(b))) + send(b, hops); }
  double recv_tcm(double b) const { return std::ceil(b / r) + double(cfg.tcm.latency_cycles); }
  double recv_hbm(double b) const { return double(hbm_access_cycles(cfg, uint64_t(b))); }
  double add(double b) const { return double(math_cycles(cfg, MathOp::kAdd, uint64_t(b / 4), 0)); }
};

int hops_between(uint32_t a, uint32_t b, uint32_t w) {
  return std::abs(int(a % w) - int(b % w)) + std::abs(int(a / w) - int(b / w));
}

}  // namespace

double all_reduce_model_ps(AllReduceAlgo algo, const PeConfig& cfg, uint64_t bytes, const AllReduceOptions& opt) {
  const Costs k{cfg, cfg.tcm.bytes_per_cycle, cfg.link_bytes_per_cycle(),
                double(cfg.topology.cube.interconnect_latency_cycles), double(PeDma::kMaxBurstBytes)};
  const uint32_t h = uint32_t(cfg.topology.mesh.h), w = uint32_t(cfg.topology.mesh.w);
  const uint32_t p = uint32_t(cfg.topology.cube.pes), c = h * w, n = p * c;
  const double period_ps = 1000.0 / cfg.clock_freq_ghz;
  const int64_t elems = int64_t(bytes / 4);
  if (n == 1 || elems == 0) return 0;
  double cycles = 0;
  if (algo == AllReduceAlgo::kLrab) {
    // The root cube's root PE is the bottleneck: per chunk its PE_IPC
    // takes (p - 1) + (c - 1) messages in (each a copy into TCM) and sends
    // the sum out as many times. Chunks pipeline through it (beta), plus
    // filling the pipe (a remote root gathering its cube's first chunk and
    // sending it) and draining it (a remote root broadcasting the last
    // chunk to its PEs, the last leaf writing it to HBM) (alpha).
    const uint32_t root = lrab_root(h, w);
    const int64_t ce = std::min(std::max<int64_t>(opt.chunk_elems, 1), elems);
    int far = 0;
    for (uint32_t cube = 0; cube < c; ++cube) far = std::max(far, hops_between(cube, root, w));
    auto root_chunk = [&](double b) {
      double t = (p - 1 + c - 1) * k.recv_tcm(b) + (p - 1) * k.send(b, 0);
      for (uint32_t cube = 0; cube < c; ++cube)
        if (cube != root) t += k.send(b, hops_between(cube, root, w));
      return t;
    };
    for (int64_t e0 = 0; e0 < elems; e0 += ce) cycles += root_chunk(double(std::min(ce, elems - e0) * 4));
    const double b0 = double(std::min(ce, elems) * 4);
    const double gather = k.send_hbm(b0, 0) + (p - 1) * k.recv_tcm(b0) + k.add(b0);
    const double bcast = (p - 1) * k.send(b0, 0) + k.recv_hbm(b0);
    cycles += c > 1 ? gather + k.send(b0, far) + bcast : gather + bcast - (p - 1) * k.recv_tcm(b0);
  } else {
    // Ring: 2 (n - 1) steps in lock step; each step's chain is a recv, the
    // add (reduce-scatter) and the next send, over the ring's longest hop
    // (every step has a PE pair across it). A segment longer than a chunk
    // is cut into pieces, each a ring of its own after the previous one:
    // sends to one PE issue in program order, and the kernel writes the
    // pieces one after another.
    const std::vector<uint32_t> order = ring_order(h, w, p);
    int hops = 0;
    for (size_t i = 0; i < order.size(); ++i)
      hops = std::max(hops, hops_between(order[i] / p, order[(i + 1) % order.size()] / p, w));
    const int64_t max_seg = (elems + n - 1) / n;
    const int64_t ce = std::min(std::max<int64_t>(opt.chunk_elems, 1), max_seg);
    const double pieces = double((max_seg + ce - 1) / ce);
    const double b = double(max_seg) * 4 / pieces;
    const double rs_step = k.recv_tcm(b) + k.add(b) + k.send(b, hops);
    const double ag_step = k.recv_hbm(b) + k.send_hbm(b, hops);
    cycles = pieces * double(n - 1) * (rs_step + ag_step);
  }
  return cycles * period_ps;
}

}  // namespace kb
