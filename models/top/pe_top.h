// A top built in a loop (docs/conventions.md 12): N PEs behind one
// interconnect to one HBM. With N = 1 it is the single-PE top every run uses;
// a cube (N PEs and HBM slices) grows from it.
//
//   pe[i].mem --> interconnect --hbm--> hbm        [kHbmBase, 2^64)
//                              --ipc_j--> pe[j].ipc [ipc_window(j), +kIpcWindowStride)
//
// The HBM's timing is the configuration's pe.attrs.hbm (one PE's share of
// bandwidth) in the PE clock's cycles, so one PE alone sees exactly the DMA
// formula; PEs added here share that bandwidth. Instance names: "pe" for a
// single PE, "pe_<i>" for several; the HBM and interconnect are "hbm" and
// "interconnect". Not a module itself, so the PE's hierarchical names stay
// what they were ("pe.pe_cpu").
#pragma once

#include <memory>
#include <vector>

#include "models/interconnect/router.h"
#include "models/mem/hbm.h"
#include "models/pe/pe.h"
#include "models/trace/vcd_trace.h"

namespace kb {

// What a VCD traces of `pe`, under the scope of its hierarchical name
// (vcd_trace.h).
PeSignals pe_signals(const Pe& pe);

class PeTop {
 public:
  // `binder` goes to every PE (pe.h); `mem_binder`, when set, binds each
  // PE's `mem` to the interconnect instead of a direct bind.
  explicit PeTop(const PeConfig& cfg, uint32_t pes = 1, const LinkBinder& binder = {},
                 const LinkBinder& mem_binder = {});

  Pe& pe(size_t i = 0) { return *pes_.at(i); }
  size_t size() const { return pes_.size(); }
  Hbm& hbm() { return hbm_; }
  Router& interconnect() { return interconnect_; }
  // Data mode's allocation in every memory (TCMs and HBM).
  uint64_t data_bytes() const;

 private:
  std::vector<std::unique_ptr<Pe>> pes_;
  Router interconnect_;
  Hbm hbm_;
};

}  // namespace kb
