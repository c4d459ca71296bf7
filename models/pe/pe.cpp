#include "models/pe/pe.h"

namespace kb {

Pe::Pe(sc_core::sc_module_name name, const PeConfig& cfg)
    : sc_module(name),
      cfg_(cfg),
      table_(cfg_.tcm.size_bytes),
      pe_cpu("pe_cpu", cfg_, table_, log_),
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
}

}  // namespace kb
