// The alpha-beta model of kernels/ccl's all-reduces (README "All-reduce:
// the alpha-beta model"). Every term is a formula of the model's own
// timing (PE_IPC, the cube interconnect, UCIe links, HBM, PE_MATH: the
// terms of tb/benches/ipc_cost_model.h), so the model follows any configuration;
// nothing is fitted to a simulation.
#include "tb/benches/allreduce_model.h"

#include <algorithm>
#include <vector>

#include "tb/benches/ipc_cost_model.h"

namespace kb {

double all_reduce_model_ps(AllReduceAlgo algo, const PeConfig& cfg, uint64_t bytes, const AllReduceOptions& opt) {
  const IpcCosts k(cfg);
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
