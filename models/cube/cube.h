// Cube: one HBM cube of a mesh, topology.cube.pes PEs on
// its logic die, each with its own HBM slice, behind one interconnect.
//
//   pe<i>.mem --> interconnect --slice_<i>--> hbm<i>   [hbm_alloc_base(g), + kHbmSliceBytes)
//   mesh_in   -->              --ipc_<i>---> pe<i>.ipc [ipc_window(g), + kIpcWindowStride)
//                              --mesh------> mesh_out  (every other address)
//
// g = cube * pes + i is the global PE number (models/mem/address_map.h).
// Each slice is an Hbm of pe.attrs.hbm's timing (one PE's pseudo-channels:
// 8 x 32 GB/s x 0.8 by default), so PEs sharing a slice share its
// bandwidth. The interconnect adds topology.cube.interconnect_latency_cycles
// to every request it routes except PE i's to its own slice i: another PE's
// slice or IPC window, the mesh, and whatever comes in from the mesh. A
// request to another cube therefore pays it twice, once in each cube.
//
// Instance names: "cube<c>" with children "pe<i>", "hbm<i>", "interconnect",
// so PE 3 of cube 6's DMA is "cube6.pe3.pe_dma".
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <systemc>
#include <tlm>

#include "models/config/pe_config.h"
#include "models/interconnect/router.h"
#include "models/mem/hbm.h"
#include "models/pe/pe.h"

namespace kb {

class Cube : public sc_core::sc_module {
 public:
  // From the interconnect to the mesh (models/mesh/mesh_router.h); must be
  // bound (MeshTop does, for a 1 x 1 mesh too). The way in from the mesh is
  // mesh_in, below.
  tlm::tlm_initiator_socket<32> mesh_out;

  // Cube `cube` (row-major id) of the mesh cfg.topology describes. `binder`
  // goes to every PE (pe.h); `mem_binder`, when set, binds each PE's `mem`
  // to the interconnect instead of a direct bind (as PeTop).
  Cube(sc_core::sc_module_name name, const PeConfig& cfg, uint32_t cube, const LinkBinder& binder = {},
       const LinkBinder& mem_binder = {});

  uint32_t id() const { return id_; }
  size_t size() const { return pes_.size(); }
  Pe& pe(size_t i) { return *pes_.at(i); }
  Hbm& hbm(size_t i) { return *hbms_.at(i); }
  Router& interconnect() { return interconnect_; }
  // Data mode's allocation: the slices and the PEs' TCMs.
  uint64_t data_bytes() const;

 private:
  const uint32_t id_;
  std::vector<std::unique_ptr<Pe>> pes_;
  std::vector<std::unique_ptr<Hbm>> hbms_;
  Router interconnect_;

 public:
  // From the mesh into the interconnect: the interconnect's own `in`, a
  // multi-socket, bound after the PEs (so its index is topology.cube.pes).
  // A plain socket of the cube cannot stand for it: a hierarchical bind to
  // a multi-socket would share PE 0's index and backward path.
  TargetSocketBase& mesh_in;
};

}  // namespace kb
