#include "models/top/pe_top.h"

#include <string>

#include "models/mem/address_map.h"

namespace kb {

PeTop::PeTop(const PeConfig& cfg, uint32_t pes, const LinkBinder& binder, const LinkBinder& mem_binder)
    : interconnect_("interconnect", {{"hbm", MemoryRange{kHbmBase, 0}}}),
      hbm_("hbm", hbm_timing(cfg), MemoryRange{kHbmBase, 0}, cfg.data_mode) {
  for (uint32_t i = 0; i < pes; ++i) {
    const std::string name = pes == 1 ? "pe" : "pe_" + std::to_string(i);
    pes_.push_back(std::make_unique<Pe>(name.c_str(), cfg, i, binder));
    Pe& pe = *pes_.back();
    if (mem_binder) mem_binder(pe.mem, interconnect_.in, std::string(pe.mem.name()) + " -> interconnect.in");
    else pe.mem.bind(interconnect_.in);
  }
  interconnect_.out[0].bind(hbm_.in);
}

PeSignals pe_signals(const Pe& pe) {
  return PeSignals{pe.name(), pe.pe_cpu.state_signal, pe.pe_cpu.descriptors_signal,
                   pe.pe_scheduler.occupancy_signal, pe.pe_scheduler.busy_signal};
}

uint64_t PeTop::data_bytes() const {
  uint64_t b = hbm_.stored_bytes();
  for (const auto& pe : pes_) b += pe->tcm_data_bytes();
  return b;
}

}  // namespace kb
