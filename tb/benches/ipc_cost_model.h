// The alpha-beta cost terms of an IPC message on the mesh model (README
// "All-reduce: the alpha-beta model"), shared by the all-reduce model
// (tb/benches/allreduce_model.cpp) and the long-context roofline
// (tb/benches/long_ctx_model.cpp). Every term is a formula of the model's own
// timing (PE_IPC, models/pe/ipc/pe_ipc.h; the cube interconnect; UCIe
// links; HBM; PE_MATH) and leaves out the responses' way back, so an
// uncontended stage takes at least its term.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "models/config/pe_config.h"
#include "models/pe/engines/pe_dma.h"
#include "models/pe/engines/pe_math.h"

namespace kb {

struct IpcCosts {
  const PeConfig& cfg;
  double r;       // bytes per cycle of an IPC receive port and of a recv's copy into TCM
  double link;    // bytes per cycle of a UCIe link
  double l_ic;    // cube interconnect latency
  double burst;   // IPC burst bytes

  explicit IpcCosts(const PeConfig& c)
      : cfg(c),
        r(c.tcm.bytes_per_cycle),
        link(c.link_bytes_per_cycle()),
        l_ic(double(c.topology.cube.interconnect_latency_cycles)),
        burst(double(PeDma::kMaxBurstBytes)) {}

  // A message of b bytes over `hops` links: the path latency to the
  // receiving port (both cube interconnects when it leaves the cube, each
  // link's latency and, store-and-forward, one burst's transfer per hop).
  double path(double b, int hops, bool same_pe_cube) const {
    if (hops == 0) return same_pe_cube ? l_ic : 0;
    return 2 * l_ic + hops * (double(cfg.topology.link.latency_cycles) + std::ceil(std::min(b, burst) / link));
  }
  // The HEADER's way to the receiver's window.
  double header_path(int hops) const {
    return hops == 0 ? l_ic : 2 * l_ic + hops * (double(cfg.topology.link.latency_cycles) + 1);
  }
  // SEND from TCM: setup, the HEADER there and answered, the DATA bursts
  // serialised on the receiver's port (alpha: everything but b / r). By
  // its end the message's last byte is in the receiver's queue.
  double send(double b, int hops) const {
    return double(cfg.dma.setup_cycles) + header_path(hops) + port(16) + path(b, hops, true) + port(b);
  }
  // SEND from HBM: the read first.
  double send_hbm(double b, int hops) const { return double(hbm_access_cycles(cfg, uint64_t(b))) + send(b, hops); }
  // The receive port's time for one write of b bytes (a HEADER is 16).
  double port(double b) const { return std::ceil(b / r); }
  double recv_tcm(double b) const { return port(b) + double(cfg.tcm.latency_cycles); }
  double recv_hbm(double b) const { return double(hbm_access_cycles(cfg, uint64_t(b))); }
  double add(double b) const { return double(math_cycles(cfg, MathOp::kAdd, uint64_t(b / 4), 0)); }
};

// Links between two cubes of a mesh w wide (dimension-order routing).
inline int hops_between(uint32_t a, uint32_t b, uint32_t w) {
  return std::abs(int(a % w) - int(b % w)) + std::abs(int(a / w) - int(b / w));
}

}  // namespace kb
