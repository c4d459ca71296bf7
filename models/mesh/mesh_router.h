// MeshRouter: one per cube, between the cube's
// interconnect and the UCIe links to its neighbours. Dimension-order (XY)
// routing: a request goes east or west until its column is the destination
// cube's, then north or south; at the destination it goes into the cube.
// The destination cube of an address is the cube of the PE whose HBM slice
// (hbm_slice_of) or IPC window (ipc_window_of) holds it; any other address,
// or a cube outside the mesh, gets TLM_ADDRESS_ERROR_RESPONSE.
//
//   in  <-- the own cube's interconnect, and each incoming link
//   out["cube"]                      --> the own cube's interconnect
//   out["east"|"west"|"north"|"south"] --> the link to that neighbour (only
//                                        the neighbours that exist)
//
// North is row y - 1, south row y + 1; east column x + 1. The router adds
// no time (the links and the cube interconnect do); it is a Router with
// another decoder, so nb, dbg and DMI forwarding are the Router's.
#pragma once

#include <cstdint>
#include <vector>

#include "models/interconnect/router.h"

namespace kb {

// The cubes a request from `from_cube` to `to_cube` visits on an h x w mesh
// (row-major ids), both ends included: X first, then Y.
std::vector<uint32_t> xy_route(uint32_t from_cube, uint32_t to_cube, uint32_t h, uint32_t w);

class MeshRouter : public Router {
 public:
  enum Port { kCube, kEast, kWest, kNorth, kSouth };
  static const char* port_name(Port p);

  MeshRouter(sc_core::sc_module_name name, uint32_t cube, uint32_t mesh_h, uint32_t mesh_w,
             uint32_t pes_per_cube);

  uint32_t cube() const { return cube_; }
  // The out socket index of port `p`; -1 when that neighbour does not exist.
  int out_index(Port p) const { return index_[p]; }
  // The cube whose PE's slice or IPC window holds `address`; -1: none.
  int64_t cube_of(uint64_t address) const;

 protected:
  int route(const tlm::tlm_generic_payload& p) const override;

 private:
  const uint32_t cube_, h_, w_, pes_;
  int index_[5];
};

}  // namespace kb
