// Where a PE sits in its top: what an SPMD kernel learns
// through tl (cube id, PE id, mesh shape, PEs per cube). A single-PE top is
// a 1 x 1 mesh of one 1-PE cube.
#pragma once

#include <cstdint>

namespace kb {

struct PePlace {
  uint32_t global = 0;        // cube * pes_per_cube + pe; places HBM allocations (address_map.h)
  uint32_t cube = 0;          // row-major: y * mesh_w + x
  uint32_t pe = 0;            // within the cube
  uint32_t mesh_h = 1, mesh_w = 1;
  uint32_t pes_per_cube = 1;
  uint32_t cubes() const { return mesh_h * mesh_w; }
  uint32_t pes() const { return cubes() * pes_per_cube; }
};

// PE i of a top of n PEs that is not a mesh (PeTop): one cube of n PEs.
inline PePlace flat_place(uint32_t i, uint32_t n) { return PePlace{i, 0, i, 1, 1, n}; }

}  // namespace kb
