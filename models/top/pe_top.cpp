#include "models/top/pe_top.h"

#include <string>

#include "models/mem/address_map.h"

namespace kb {

namespace {

// PE i's IPC window, then the HBM.
std::vector<Router::Region> top_map(uint32_t pes) {
  std::vector<Router::Region> map;
  for (uint32_t i = 0; i < pes; ++i) {
    map.push_back({"ipc_" + std::to_string(i), MemoryRange{ipc_window(i), ipc_window(i) + kIpcWindowStride}});
  }
  map.push_back({"hbm", MemoryRange{kHbmBase, 0}});
  return map;
}

}  // namespace

PeTop::PeTop(const PeConfig& cfg, uint32_t pes, const LinkBinder& binder, const LinkBinder& mem_binder)
    : interconnect_("interconnect", top_map(pes)),
      hbm_("hbm", hbm_timing(cfg), MemoryRange{kHbmBase, 0}, cfg.data_mode) {
  for (uint32_t i = 0; i < pes; ++i) {
    const std::string name = pes == 1 ? "pe" : "pe_" + std::to_string(i);
    pes_.push_back(std::make_unique<Pe>(name.c_str(), cfg, flat_place(i, pes), binder));
    Pe& pe = *pes_.back();
    if (mem_binder) mem_binder(pe.mem, interconnect_.in, std::string(pe.mem.name()) + " -> interconnect.in");
    else pe.mem.bind(interconnect_.in);
  }
  for (uint32_t i = 0; i < pes; ++i) interconnect_.out[i].bind(pes_[i]->ipc);
  interconnect_.out[pes].bind(hbm_.in);
}

PeSignals pe_signals(const Pe& pe) {
  return PeSignals{pe.name(), pe.pe_cpu.state_signal, pe.pe_cpu.descriptors_signal,
                   pe.pe_scheduler.occupancy_signal, pe.pe_scheduler.busy_signal,
                   pe.place().pes() > 1};  // PE_IPC's busy_ipc where it has peers
}

uint64_t PeTop::data_bytes() const {
  uint64_t b = hbm_.stored_bytes();
  for (const auto& pe : pes_) b += pe->tcm_data_bytes();
  return b;
}

}  // namespace kb
