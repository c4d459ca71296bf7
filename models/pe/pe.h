// The PE top: PE_CPU, PE_SCHEDULER, PE_DMA, PE_GEMM, PE_MATH, PE_TCM and the
// PE's HBM share, bound socket to socket.
//
//  kernel --tl--> pe_cpu --cmd--> pe_scheduler --dma-->  pe_dma --mem--> hbm
//                                              --gemm--> pe_gemm
//                                              --math--> pe_math
//                                              --tcm-->  pe_tcm
#pragma once

#include <string>

#include <systemc>

#include "models/config/pe_config.h"
#include "models/mem/backing_store.h"
#include "models/mem/hbm.h"
#include "models/pe/data_exec.h"
#include "models/pe/pe_cpu.h"
#include "models/pe/pe_dma.h"
#include "models/pe/pe_gemm.h"
#include "models/pe/pe_math.h"
#include "models/pe/pe_scheduler.h"
#include "models/pe/pe_tcm.h"
#include "models/pe/tensor_table.h"
#include "models/trace/op_log.h"

namespace kb {

class Pe : public sc_core::sc_module {
 public:
  Pe(sc_core::sc_module_name name, const PeConfig& cfg);

  const PeConfig& config() const { return cfg_; }
  OpLog& op_log() { return log_; }
  TensorTable& tensors() { return table_; }
  uint64_t data_bytes() const { return store_.bytes(); }
  // Drive the trace signals (VCD, occupancy probe); off by default because
  // every change costs a process activation.
  void enable_signals(bool on) {
    pe_cpu.enable_signals(on);
    pe_scheduler.enable_signals(on);
  }

 private:
  const PeConfig cfg_;  // owned copy: modules keep references to it
  OpLog log_;
  TensorTable table_;
  BackingStore store_;  // data mode values; empty in timing mode
  DataContext data_;

 public:
  PeCpu pe_cpu;
  PeScheduler pe_scheduler;
  PeDma pe_dma;
  PeGemm pe_gemm;
  PeMath pe_math;
  PeTcm pe_tcm;
  Hbm hbm;
};

}  // namespace kb
