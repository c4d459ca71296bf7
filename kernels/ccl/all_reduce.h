// All-reduce (sum) over every PE of a cube or mesh, written with tl
// only. Every PE runs the same kernel (SPMD) on its own buffer
// `x` ([1, N], in its own HBM slice); on return every PE's x holds the sum
// of all of them. Both algorithms move x through TCM in chunks of at most
// `chunk_elems` elements and keep at most `window` chunks in flight per
// PE pair, so IPC back-pressure never closes a cycle (window <= the IPC
// queue depth).
//
// LRAB (the origin's mesh all-reduce): Local Reduce inside each cube to its
// local root (PE 0), reduce across cubes to the root cube
// lrab_root(h, w) = (h / 2) * w + w / 2, then Broadcast back the same way.
// Ring: reduce-scatter then all-gather around a ring that snakes through
// the mesh (ring_order), each PE sending to its successor only.
#pragma once

#include <cstdint>
#include <vector>

#include "models/tl/tl.h"

namespace kb {

// The LRAB root cube of an h x w mesh.
constexpr uint32_t lrab_root(uint32_t h, uint32_t w) { return (h / 2) * w + w / 2; }

// Global PE numbers in ring order: cubes row by row, odd rows right to
// left (each step to a neighbouring cube), PEs of a cube in order.
std::vector<uint32_t> ring_order(uint32_t h, uint32_t w, uint32_t pes_per_cube);

struct AllReduceOptions {
  int64_t chunk_elems = 128 * 1024;  // per TCM buffer (4 are live per PE)
  int64_t window = 2;                // chunks in flight per PE pair
};

void all_reduce_lrab(Tl& tl, const Tensor& x, const AllReduceOptions& opt = {});
void all_reduce_ring(Tl& tl, const Tensor& x, const AllReduceOptions& opt = {});

}  // namespace kb
