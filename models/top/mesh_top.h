// The mesh top, built in loops (docs/conventions.md 12): h x w
// cubes (models/cube/cube.h) of topology.cube.pes PEs each, one mesh router
// per cube (XY routing, models/mesh/mesh_router.h), and two UcieLinks per
// pair of neighbouring cubes, one per direction (models/mesh/ucie_link.h).
//
//   cube<c>.mesh_out --> mesh.router<c> --cube--> cube<c>.mesh_in
//                                       --east|west|north|south--> link.c<c>-c<n> --> mesh.router<n>
//
// Instance names: "cube<c>" (so "cube6.pe3.pe_dma"), "mesh.router<c>", and
// "link.c<a>-c<b>" for the direction from cube a to cube b. Not a module
// itself, like PeTop. The single-PE top (pe_top.h) stays the default.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "models/config/pe_config.h"
#include "models/cube/cube.h"
#include "models/mesh/mesh_router.h"
#include "models/mesh/ucie_link.h"
#include "models/pe/pe.h"

namespace kb {

class MeshTop {
 public:
  // `binder` goes to every PE; `mem_binder`, when set, binds each PE's
  // `mem` to its cube's interconnect (cube.h). Throws std::invalid_argument
  // for a mesh or cube of no PEs.
  explicit MeshTop(const PeConfig& cfg, const LinkBinder& binder = {}, const LinkBinder& mem_binder = {});
  ~MeshTop();

  size_t size() const { return pes_.size(); }  // PEs
  Pe& pe(size_t global) { return *pes_.at(global); }
  size_t cubes() const { return cubes_.size(); }
  Cube& cube(size_t c) { return *cubes_.at(c); }
  MeshRouter& router(size_t c);
  // Every link direction, in the order built; link(a, b): the direction from
  // cube a to neighbouring cube b (null when they are not neighbours).
  size_t links() const;
  UcieLink& link(size_t i);
  UcieLink* link(uint32_t from_cube, uint32_t to_cube);
  // Data mode's allocation: every slice and TCM.
  uint64_t data_bytes() const;

 private:
  struct Routers;
  struct Links;
  std::vector<std::unique_ptr<Cube>> cubes_;
  std::vector<Pe*> pes_;
  std::unique_ptr<Routers> routers_;  // the "mesh" module
  std::unique_ptr<Links> links_;      // the "link" module
};

}  // namespace kb
