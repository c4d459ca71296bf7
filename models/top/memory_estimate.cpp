#include "models/top/memory_estimate.h"

#include <cstdio>

#include <systemc>

#include "models/isa/tensor_table.h"

namespace kb {

namespace {
constexpr uint64_t kPage = 4096;
constexpr uint64_t kHugePage = uint64_t(2) << 20;

std::string mib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", double(bytes) / double(1 << 20));
  return buf;
}
}  // namespace

uint64_t view_ring_resident_bytes() {
  return (kViewCapacity * sizeof(TensorDesc) + kPage - 1) / kPage * kPage;  // tensor_table.cpp reserve_views
}

uint64_t view_ring_allocated_bytes() {
  // aligned_alloc to a 2 MiB boundary, in whole 2 MiB pages: the mapping
  // holds the alignment's slack too.
  return (kViewCapacity * sizeof(TensorDesc) + kHugePage - 1) / kHugePage * kHugePage + kHugePage;
}

MemoryEstimate estimate_mesh_memory(const PeConfig& config, uint64_t launched) {
  const TopologyConfig& t = config.topology;
  MemoryEstimate e;
  e.pes = t.pes();
  e.launched = launched < e.pes ? launched : e.pes;
  // Two directions per pair of neighbouring cubes (models/top/mesh_top.h).
  e.links = 2 * (t.mesh.h * (t.mesh.w - 1) + t.mesh.w * (t.mesh.h - 1));
  e.view_ring_bytes = view_ring_resident_bytes();
  e.resident_bytes = e.launched * e.view_ring_bytes + e.pes * kPeModelBytes + e.links * kLinkModelBytes;
  const uint64_t stack = uint64_t(sc_core::SC_DEFAULT_STACK_SIZE) + kPage;
  e.address_space_bytes = e.launched * view_ring_allocated_bytes() + e.pes * (kPeModelBytes + stack) +
                          e.links * kLinkModelBytes;
  return e;
}

std::string MemoryEstimate::text() const {
  return mib(resident_bytes) + " for " + std::to_string(pes) + " PEs (" + std::to_string(launched) +
         " launching a kernel, each with a " + mib(view_ring_bytes) + " view ring; " + mib(kPeModelBytes) +
         " of modules per PE; " + std::to_string(links) + " link directions)";
}

}  // namespace kb
