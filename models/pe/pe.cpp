#include "models/pe/pe.h"

namespace kb {

Pe::Pe(sc_core::sc_module_name name, const PeConfig& cfg)
    : sc_module(name),
      cfg_(cfg),
      table_(cfg_.tcm.size_bytes),
      data_{store_, table_},
      pe_cpu("pe_cpu", cfg_, table_, log_, data_),
      pe_scheduler("pe_scheduler", cfg_, table_, log_),
      pe_dma("pe_dma", cfg_),
      pe_gemm("pe_gemm", cfg_),
      pe_math("pe_math", cfg_),
      pe_tcm("pe_tcm", cfg_),
      hbm("hbm", cfg_) {
  pe_cpu.cmd.bind(pe_scheduler.in);
  pe_scheduler.dma.bind(pe_dma.in);
  pe_scheduler.gemm.bind(pe_gemm.in);
  pe_scheduler.math.bind(pe_math.in);
  pe_scheduler.tcm.bind(pe_tcm.in);
  pe_dma.mem.bind(hbm.in);
  pe_scheduler.on_fault([this](uint64_t id, const char* type, const std::string& what) { pe_cpu.fault(id, type, what); });
  if (cfg_.data_mode) {
    for (StageEngine* e : {static_cast<StageEngine*>(&pe_dma), static_cast<StageEngine*>(&pe_gemm),
                           static_cast<StageEngine*>(&pe_math), static_cast<StageEngine*>(&pe_tcm)}) {
      e->set_data(&data_);
    }
  }
}

}  // namespace kb
