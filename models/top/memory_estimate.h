// What a top costs in host memory before it is built (docs/cli.md, "Memory
// limits"), so that a mesh too large for the machine is refused up front
// with its size instead of failing late (a coroutine stack that cannot be
// set up, std::bad_alloc).
//
// Resident memory, per PE:
//   - the view ring of a PE that launches a kernel (models/isa/tensor_table.h:
//     every page touched when it is made), kViewCapacity x sizeof(TensorDesc);
//   - the PE's modules, queues, calendars and PE_CPU's coroutine stack as
//     touched, kPeModelBytes (measured, see below);
// and, per link direction of the mesh, kLinkModelBytes. Address space adds,
// per PE, PE_CPU's whole coroutine stack (SystemC's default stack size and a
// guard page) and the view ring's allocation (2 MiB aligned, in whole 2 MiB
// pages). Data mode's storage is not in it: it grows with what kernels write
// and is capped as it grows (models/mem/sparse_memory.h).
#pragma once

#include <cstdint>
#include <string>

#include "models/config/pe_config.h"

namespace kb {

// The per-PE and per-link costs beside the view ring, measured: the test
// tests/integration/test_mesh_memory.cpp prints estimate and measured peak
// RSS for three meshes and holds them within 25%.
constexpr uint64_t kPeModelBytes = 400 * 1024;
constexpr uint64_t kLinkModelBytes = 16 * 1024;

struct MemoryEstimate {
  uint64_t pes = 0, launched = 0, links = 0;
  uint64_t resident_bytes = 0;       // the top's, beyond what the process holds before it is built
  uint64_t address_space_bytes = 0;  // the same in virtual memory
  uint64_t view_ring_bytes = 0;      // per launched PE
  std::string text() const;          // "64 PEs (64 launching): 426 MiB (view rings 6.5 MiB each, ...)"
};

// A mesh of config.topology with `launched` PEs launching a kernel.
MemoryEstimate estimate_mesh_memory(const PeConfig& config, uint64_t launched);

// The view ring's resident bytes and allocation.
uint64_t view_ring_resident_bytes();
uint64_t view_ring_allocated_bytes();

}  // namespace kb
