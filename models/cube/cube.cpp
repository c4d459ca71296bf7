#include "models/cube/cube.h"

#include <string>

#include "models/mem/address_map.h"

namespace kb {

namespace {

// slice_<i> for every PE, then ipc_<i>, then the mesh (the default route).
std::vector<Router::Region> cube_map(uint32_t first, uint32_t pes) {
  std::vector<Router::Region> map;
  for (uint32_t i = 0; i < pes; ++i) {
    map.push_back({"slice_" + std::to_string(i),
                   MemoryRange{hbm_alloc_base(first + i), hbm_alloc_base(first + i) + kHbmSliceBytes}});
  }
  for (uint32_t i = 0; i < pes; ++i) {
    map.push_back({"ipc_" + std::to_string(i), MemoryRange{ipc_window(first + i), ipc_window(first + i) + kIpcWindowStride}});
  }
  map.push_back({"mesh", MemoryRange{0, 0}});
  return map;
}

}  // namespace

Cube::Cube(sc_core::sc_module_name name, const PeConfig& cfg, uint32_t cube, const LinkBinder& binder,
           const LinkBinder& mem_binder)
    : sc_module(name),
      mesh_out("mesh_out"),
      id_(cube),
      interconnect_("interconnect", cube_map(cube * uint32_t(cfg.topology.cube.pes), uint32_t(cfg.topology.cube.pes))),
      mesh_in(interconnect_.in) {
  const uint32_t pes = uint32_t(cfg.topology.cube.pes);
  const uint32_t first = cube * pes;
  const uint32_t h = uint32_t(cfg.topology.mesh.h), w = uint32_t(cfg.topology.mesh.w);
  const uint64_t latency = cfg.topology.cube.interconnect_latency_cycles;
  // in[i] is PE i's mem (bound in order below); in[pes] comes from the mesh.
  interconnect_.set_latency(cfg.clock_freq_ghz, [pes, latency](int from, int region) -> uint64_t {
    return from == region && uint32_t(from) < pes ? 0 : latency;  // PE i -> its own slice i is free
  });
  for (uint32_t i = 0; i < pes; ++i) {
    const std::string n = "pe" + std::to_string(i);
    pes_.push_back(std::make_unique<Pe>(n.c_str(), cfg, PePlace{first + i, cube, i, h, w, pes}, binder));
    Pe& pe = *pes_.back();
    if (mem_binder) mem_binder(pe.mem, interconnect_.in, std::string(pe.mem.name()) + " -> " + interconnect_.in.name());
    else pe.mem.bind(interconnect_.in);
  }
  for (uint32_t i = 0; i < pes; ++i) {
    const std::string n = "hbm" + std::to_string(i);
    hbms_.push_back(std::make_unique<Hbm>(
        n.c_str(), hbm_timing(cfg), MemoryRange{hbm_alloc_base(first + i), hbm_alloc_base(first + i) + kHbmSliceBytes},
        cfg.data_mode));
    interconnect_.out[i].bind(hbms_.back()->in);
    interconnect_.out[pes + i].bind(pes_[i]->ipc);
  }
  interconnect_.out[2 * pes].bind(mesh_out);  // hierarchical
}

uint64_t Cube::data_bytes() const {
  uint64_t b = 0;
  for (const auto& h : hbms_) b += h->stored_bytes();
  for (const auto& pe : pes_) b += pe->tcm_data_bytes();
  return b;
}

}  // namespace kb
