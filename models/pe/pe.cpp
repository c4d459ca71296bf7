#include "models/pe/pe.h"

#include "models/mem/address_map.h"

namespace kb {

namespace {

std::vector<Router::Region> bus_map(const PeConfig& cfg) {
  return {{"tcm", MemoryRange{kTcmBase, kTcmBase + cfg.tcm.size_bytes}},
          {"mem", MemoryRange{0, 0}}};  // everything else leaves the PE
}

}  // namespace

Pe::Pe(sc_core::sc_module_name name, const PeConfig& cfg, uint32_t index, const LinkBinder& binder)
    : sc_module(name),
      mem("mem"),
      cfg_(cfg),
      index_(index),
      table_(cfg_.tcm.size_bytes, hbm_alloc_base(index)),
      pe_cpu("pe_cpu", cfg_, table_, log_),
      pe_scheduler("pe_scheduler", cfg_, table_, log_),
      pe_dma("pe_dma", cfg_),
      pe_gemm("pe_gemm", cfg_),
      pe_math("pe_math", cfg_),
      pe_tcm("pe_tcm", cfg_),
      pe_bus("pe_bus", bus_map(cfg_)) {
  const LinkBinder bind = binder ? binder : [](tlm::tlm_initiator_socket<32>& from, TargetSocketBase& to,
                                               const std::string&) { from.bind(to); };
  auto link = [&](tlm::tlm_initiator_socket<32>& from, TargetSocketBase& to) {
    bind(from, to, std::string(from.name()) + " -> " + to.get_base_export().name());
  };
  link(pe_cpu.cmd, pe_scheduler.in);
  // The engines, in the engine table's order (models/trace/component_table.h).
  StageEngine* const engines[kNumEngines] = {&pe_dma, &pe_gemm, &pe_math, &pe_tcm};
  for (int e = 0; e < kNumEngines; ++e) link(pe_scheduler.engine[size_t(e)], engines[e]->in);
  // Every access to memory goes through the PE's bus.
  link(pe_cpu.data, pe_bus.in);
  link(pe_dma.mem, pe_bus.in);
  for (StageEngine* e : engines) {
    link(e->data, pe_bus.in);
    if (cfg_.data_mode) e->set_data(&table_);
  }
  link(pe_bus.out[0], pe_tcm.sram);
  pe_bus.out[1].bind(mem);  // hierarchical: the PE's own socket
  pe_scheduler.on_fault([this](uint64_t id, const char* type, const std::string& what) { pe_cpu.fault(id, type, what); });
}

}  // namespace kb
