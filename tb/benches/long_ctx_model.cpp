// The long-context roofline (README "Long-context decode: the roofline").
// A lower bound, not a prediction: every term is time the critical chain
// cannot avoid, with every uncertain or overlappable part left out (the
// attention's compute and dispatch, the merges' math, responses' way back,
// the output's store, contention other than on the links and at a merge
// root's PE_IPC and port). Each chain below is a lower bound on the run's
// end; the bound is their maximum (README "The roofline").
#include "tb/benches/long_ctx_model.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "kernels/ccl/all_reduce.h"
#include "models/mesh/mesh_router.h"
#include "models/isa/tensor_table.h"
#include "tb/benches/ipc_cost_model.h"

namespace kb {

namespace {

PePlace place_of(const PeConfig& cfg, uint32_t g) {
  const uint32_t p = uint32_t(cfg.topology.cube.pes);
  return PePlace{g, g / p, g % p, uint32_t(cfg.topology.mesh.h), uint32_t(cfg.topology.mesh.w), p};
}

}  // namespace

double long_ctx_kv_bytes(LongCtxCase c, const GqaShape& s, const PeConfig& cfg) {
  return 2.0 * double(s.kv_heads) * double(s.context) * double(s.head_dim) * double(dtype_bytes(s.dtype)) *
         double(long_ctx_requests(c, place_of(cfg, 0)));
}

LongCtxBound long_ctx_bound(LongCtxCase c, const GqaShape& s, const PeConfig& cfg) {
  const IpcCosts k(cfg);
  const uint32_t h = uint32_t(cfg.topology.mesh.h), w = uint32_t(cfg.topology.mesh.w);
  const uint32_t P = uint32_t(cfg.topology.cube.pes), C = h * w, n = P * C;
  const double period_ps = 1000.0 / cfg.clock_freq_ghz;
  const double bw = cfg.hbm_bytes_per_cycle();
  const double g = double(s.q_heads / s.kv_heads), d = double(s.head_dim);
  const double setup = double(cfg.dma.setup_cycles);
  constexpr double kInf = std::numeric_limits<double>::infinity();

  std::vector<LongCtxPlan> plan(n);
  std::vector<std::vector<uint32_t>> senders(n);
  for (uint32_t q = 0; q < n; ++q) {
    plan[q] = long_ctx_plan(c, s, place_of(cfg, q));
    if (plan[q].heads.size > 0 && plan[q].merge_to != q) senders[plan[q].merge_to].push_back(q);
  }
  // A partial state: m, l [rows, 1] and O [rows, d], fp32, in that order.
  auto m_bytes = [&](uint32_t q) { return 4.0 * double(plan[q].heads.size) * g; };
  auto o_bytes = [&](uint32_t q) { return m_bytes(q) * d; };
  auto hops = [&](uint32_t a, uint32_t b) { return hops_between(a / P, b / P, w); };

  // done[q]: no earlier than this, q's state (merged, for a root) is
  // complete. A PE's attention reads its KV part from its own slice, at
  // most bw bytes per cycle; a root then waits for its senders:
  //  - its PE_IPC copies every message (one stage at a time), each after
  //    it arrived, the first no earlier than the first sender's m;
  //  - its receive port takes every HEADER and data write, one after
  //    another, then the last message is copied;
  //  - each sender's three SENDs are serial on its PE_IPC, then its O is
  //    copied.
  std::vector<double> done(n, -1.0);
  std::function<double(uint32_t)> done_of = [&](uint32_t q) -> double {
    if (done[q] >= 0) return done[q];
    const double own = 2.0 * double(plan[q].heads.size) * double(plan[q].tokens.size) * d *
                       double(dtype_bytes(s.dtype)) / bw;
    double first = kInf, port_start = kInf, far = 0, copies = 0, port = 0, last_copy = kInf;
    for (uint32_t src : senders[q]) {
      const double ds = done_of(src), bm = m_bytes(src), bo = o_bytes(src);
      const int hp = hops(src, q);
      first = std::min(first, ds + k.send(bm, hp));
      port_start = std::min(port_start, ds + setup + k.header_path(hp));
      far = std::max(far, ds + 2 * k.send(bm, hp) + k.send(bo, hp) + k.recv_tcm(bo));
      copies += 2 * k.recv_tcm(bm) + k.recv_tcm(bo);
      port += 3 * k.port(16) + 2 * k.port(bm) + k.port(bo);
      last_copy = std::min(last_copy, k.recv_tcm(bm));
    }
    double t = own;
    if (!senders[q].empty()) t = std::max({t, first + copies, port_start + port + last_copy, far});
    return done[q] = t;
  };

  double end = 0;
  for (uint32_t q = 0; q < n; ++q)
    if (plan[q].heads.size > 0 && plan[q].merge_to == q) end = std::max(end, done_of(q));

  // The links: every state that leaves its cube crosses the links of its
  // dimension-order route; a link carries them one after another, the
  // first no earlier than its sender's state is complete and its SEND set
  // up, and after the last byte crosses it the link's latency and a copy
  // remain.
  struct LinkLoad {
    double start = kInf, bytes = 0, last_copy = kInf;
  };
  std::map<std::pair<uint32_t, uint32_t>, LinkLoad> links;
  for (uint32_t q = 0; q < n; ++q) {
    const uint32_t to = plan[q].merge_to;
    if (plan[q].heads.size == 0 || to == q || q / P == to / P) continue;
    const std::vector<uint32_t> route = xy_route(q / P, to / P, h, w);
    for (size_t i = 0; i + 1 < route.size(); ++i) {
      LinkLoad& l = links[{route[i], route[i + 1]}];
      l.start = std::min(l.start, done_of(q) + setup);
      l.bytes += 3 * 16 + 2 * m_bytes(q) + o_bytes(q);
      l.last_copy = std::min(l.last_copy, k.recv_tcm(m_bytes(q)));
    }
  }
  for (const auto& [key, l] : links)
    end = std::max(end, l.start + l.bytes / k.link + double(cfg.topology.link.latency_cycles) + l.last_copy);

  // cube_sp_pe_sp: the normalised O [q_heads, d] goes back down the LRAB
  // tree after the root's last merge. The root's PE_IPC sends it to every
  // other cube root and its own PEs one stage at a time, and the last
  // receiver copies it; the farthest cube's root, even if served first,
  // copies it into TCM and sends it to its PEs, the last of which copies
  // it (a leaf's copy goes to HBM: the cheaper of the two copies counts).
  if (c == LongCtxCase::kCubeSpPeSp && n > 1) {
    const double b = 4.0 * double(s.q_heads) * d;
    const uint32_t root = lrab_root(h, w);
    double root_sends = double(P - 1) * k.send(b, 0);
    int far_hops = 0;
    for (uint32_t cube = 0; cube < C; ++cube) {
      if (cube == root) continue;
      root_sends += k.send(b, hops_between(cube, root, w));
      far_hops = std::max(far_hops, hops_between(cube, root, w));
    }
    const double copy = std::min(k.recv_tcm(b), k.recv_hbm(b));
    double bcast = root_sends + copy;
    if (C > 1) {
      double far_chain = k.send(b, far_hops) + k.recv_tcm(b);
      if (P > 1) far_chain += double(P - 1) * k.send(b, 0) + copy;
      bcast = std::max(bcast, far_chain);
    }
    end += bcast;
  }

  LongCtxBound out;
  out.hbm_ps = long_ctx_kv_bytes(c, s, cfg) / (double(n) * bw) * period_ps;
  out.collective_ps = std::max(0.0, end * period_ps - out.hbm_ps);
  return out;
}

}  // namespace kb
