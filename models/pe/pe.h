// The PE: PE_CPU, PE_SCHEDULER, the engines PE_DMA, PE_GEMM, PE_MATH,
// PE_TCM (which holds the TCM) and PE_IPC, IPC_MAILBOX (PE_IPC's receive
// side), and the PE's bus. Everything that leaves the PE goes out through
// `mem`: the top binds it to an interconnect and the HBM
// (models/top/pe_top.h); the PE owns no memory outside itself.
//
//  kernel --tl--> pe_cpu --cmd--> pe_scheduler --dma-->  pe_dma
//                                              --gemm--> pe_gemm
//                                              --math--> pe_math
//                                              --tcm-->  pe_tcm
//                                              --ipc-->  pe_ipc   (send/recv)
//  pe_cpu.data, pe_dma.mem, pe_ipc.mem, every engine's data --> pe_bus --> pe_tcm.sram  [0, tcm.size_bytes)
//                                                                     --> mem          (everything else)
//  ipc (the PE's IPC window) --> ipc_mailbox.msg  (the messages pe_ipc's RECVs take)
//
// The front door: `regs` is PE_REGS's register block
// (models/isa/register_map.h), `irq` its interrupt.
//
//  VP CPU --regs--> pe_regs --queue--> pe_scheduler.in   (descriptors a VP writes)
//                           --doorbell--> pe_cpu         (launch a registered kernel)
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <string>

#include <systemc>
#include <tlm>

#include "models/config/pe_config.h"
#include "models/interconnect/router.h"
#include "models/pe/cpu/pe_cpu.h"
#include "models/pe/engines/stage_engine.h"
#include "models/pe/ipc/ipc_issue_policy.h"
#include "models/pe/ipc/ipc_mailbox.h"
#include "models/pe/ipc/pe_ipc.h"
#include "models/pe/regs/pe_regs.h"
#include "models/pe/scheduler/pe_scheduler.h"
#include "models/isa/pe_place.h"
#include "models/isa/tensor_table.h"
#include "models/trace/op_log.h"

namespace kb {

// Binds an initiator socket of the PE to a target socket of the PE; the
// default binds them directly. A test or VP may put something between
// them, such as a protocol checker. `link` names the binding
// ("pe_cpu.cmd -> pe_scheduler.in").
using TargetSocketBase =
    tlm::tlm_base_target_socket_b<32, tlm::tlm_fw_transport_if<>, tlm::tlm_bw_transport_if<>>;
using LinkBinder =
    std::function<void(tlm::tlm_initiator_socket<32>& from, TargetSocketBase& to, const std::string& link)>;

class Pe : public sc_core::sc_module {
 public:
  tlm::tlm_initiator_socket<32> mem;  // to the interconnect: HBM and beyond
  RegsSocket regs;                    // the register block (PE_REGS, register_map.h); may stay unbound
  IrqPort irq;                        // high while IRQ_STATUS & IRQ_ENABLE != 0; may stay unbound
  // The IPC receive window (IPC_MAILBOX): the top routes
  // ipc_window(index()) here; may stay unbound (a PE alone sends nothing).
  RegsSocket ipc;

  // `place`: where the PE sits in its top; place.global places the PE's
  // HBM allocations (models/mem/address_map.h).
  Pe(sc_core::sc_module_name name, const PeConfig& cfg, PePlace place = {},
     const LinkBinder& binder = {});

  const PeConfig& config() const { return cfg_; }
  uint32_t index() const { return place_.global; }  // the global PE number
  const PePlace& place() const { return place_; }
  // The op log; its last instant's records are passed on at
  // end_of_simulation (sc_stop()) or by op_log().flush(), whichever comes
  // first (docs/front-door.md).
  OpLog& op_log() { return log_; }
  TensorTable& tensors() { return table_; }
  uint64_t tcm_data_bytes() const;  // data mode's TCM allocation
  // A kernel a DOORBELL write can launch: returns its index.
  uint32_t register_kernel(const std::string& name, Kernel kernel) {
    return pe_regs.register_kernel(name, std::move(kernel));
  }
  // Launches a kernel on PE_CPU, before sc_start or from any process while
  // the simulation runs; launches run back to back, in order (pe_cpu.h).
  void launch(const std::string& name, Kernel kernel) { pe_cpu.launch(name, std::move(kernel)); }
  // Drive the signals (VCD waveforms, a CounterProbe); off by default because
  // every change costs a process activation.
  void enable_signals(bool on) {
    pe_cpu.enable_signals(on);
    pe_scheduler.enable_signals(on);
  }

 private:
  void end_of_simulation() override;

  const PeConfig cfg_;  // owned copy: modules keep references to it
  const PePlace place_;
  OpLog log_;
  TensorTable table_;

 public:
  PeCpu pe_cpu;
  PeScheduler pe_scheduler;
  PeRegs pe_regs;
  IpcMailbox ipc_mailbox;  // PE_IPC's receive side; before the engines (PE_IPC takes it)
  // The engines, made from the engine table (models/trace/component_table.h)
  // in its order, each named by its component ("pe_dma", ...).
  using Engines = std::array<std::unique_ptr<StageEngine>, kNumEngines>;
  StageEngine& engine(Engine e) { return *engines_[size_t(e)]; }
  const StageEngine& engine(Engine e) const { return *engines_[size_t(e)]; }
  PeIpc& pe_ipc() { return static_cast<PeIpc&>(engine(Engine::kIpc)); }
  const PeIpc& pe_ipc() const { return static_cast<const PeIpc&>(engine(Engine::kIpc)); }

 private:
  Engines engines_;
  IpcIssuePolicy ipc_policy_;  // PE_SCHEDULER's issue policy for PE_IPC

 public:
  Router pe_bus;
};

}  // namespace kb
