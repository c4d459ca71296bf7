#include "models/pe/pe.h"

#include <string>

#include "models/mem/address_map.h"
#include "models/isa/descriptor.h"

namespace kb {

namespace {

std::vector<Router::Region> bus_map(const PeConfig& cfg) {
  return {{"tcm", MemoryRange{kTcmBase, kTcmBase + cfg.tcm.size_bytes}},
          {"mem", MemoryRange{0, 0}}};  // everything else leaves the PE
}

}  // namespace

Pe::Pe(sc_core::sc_module_name name, const PeConfig& cfg, PePlace place, const LinkBinder& binder)
    : sc_module(name),
      mem("mem"),
      regs("regs"),
      irq("irq"),
      ipc("ipc"),
      cfg_(cfg),
      place_(place),
      table_(cfg_.tcm.size_bytes, hbm_alloc_base(place.global)),
      pe_cpu("pe_cpu", cfg_, table_, log_),
      pe_scheduler("pe_scheduler", cfg_, table_, log_),
      pe_regs("pe_regs", pe_scheduler),
      pe_dma("pe_dma", cfg_),
      pe_gemm("pe_gemm", cfg_),
      pe_math("pe_math", cfg_),
      pe_tcm("pe_tcm", cfg_),
      ipc_mailbox("ipc_mailbox", cfg_),
      pe_ipc("pe_ipc", cfg_, ipc_mailbox),
      pe_bus("pe_bus", bus_map(cfg_)) {
  const LinkBinder bind = binder ? binder : [](tlm::tlm_initiator_socket<32>& from, TargetSocketBase& to,
                                               const std::string&) { from.bind(to); };
  auto link = [&](tlm::tlm_initiator_socket<32>& from, TargetSocketBase& to) {
    bind(from, to, std::string(from.name()) + " -> " + to.get_base_export().name());
  };
  link(pe_cpu.cmd, pe_scheduler.in);
  // The front door: a VP's descriptor writes join PE_CPU's.
  link(pe_regs.queue, pe_scheduler.in);
  regs.bind(pe_regs.in);  // hierarchical: the PE's own socket
  ipc.bind(ipc_mailbox.msg);  // hierarchical
  pe_cpu.set_place(place_);
  pe_regs.irq.bind(irq);
  // The engines, in the engine table's order (models/trace/component_table.h).
  StageEngine* const engines[kNumEngines] = {&pe_dma, &pe_gemm, &pe_math, &pe_tcm, &pe_ipc};
  for (int e = 0; e < kNumEngines; ++e) link(pe_scheduler.engine[size_t(e)], engines[e]->in);
  // Every access to memory goes through the PE's bus.
  link(pe_cpu.data, pe_bus.in);
  link(pe_dma.mem, pe_bus.in);
  link(pe_ipc.mem, pe_bus.in);  // messages to other PEs' IPC windows, HBM sources
  ipc_mailbox.set_self(place_.global);
  pe_ipc.set_self(place_.global);
  pe_scheduler.set_pes(place_.pes());
  // Same-time work across PEs runs in the order of their global numbers
  // (models/util/instant_calendar.h).
  pe_scheduler.set_pe(place_.global);
  ipc_mailbox.set_pe(place_.global);
  pe_ipc.set_pe(place_.global);
  pe_dma.set_pe(place_.global);
  if (place_.pes() > 1) table_.bound_to_slice();
  // A RECV issues once its message is in.
  pe_scheduler.set_recv_gate([this](uint32_t src) { return ipc_mailbox.message_ready(src); });
  ipc_mailbox.on_arrival([this] { pe_scheduler.wake(Engine::kIpc); });
  for (StageEngine* e : engines) {
    link(e->data, pe_bus.in);
    if (cfg_.data_mode) e->set_data(&table_);
  }
  link(pe_bus.out[0], pe_tcm.sram);
  pe_bus.out[1].bind(mem);  // hierarchical: the PE's own socket
  // Errors reach the registers first, so ERROR_CODE names the first cause
  // (a command's fault before the launch it fails).
  pe_scheduler.on_fault([this](uint64_t id, const char* type, const std::string& what) {
    pe_regs.record_error(regs::ErrorCode::kCommandFault, uint32_t(id),
                         "command #" + std::to_string(id) + " " + type + ": " + what);
    pe_cpu.fault(id, type, what);
  });
  pe_scheduler.on_descriptor_error([this](regs::ErrorCode code, uint32_t completion_id, const std::string& what) {
    pe_regs.record_error(code, completion_id, what);
  });
  pe_cpu.on_launch_failed([this](const std::string& kernel, const std::string& error) {
    const std::string who = "kernel '" + kernel + "'";
    pe_regs.record_error(regs::ErrorCode::kKernelError, 0,
                         error.find(who) == std::string::npos ? who + ": " + error : error);
  });
  pe_regs.on_doorbell([this](const std::string& kernel_name, const Kernel& kernel) { pe_cpu.launch(kernel_name, kernel); });
  pe_regs.cpu_busy([this] { return pe_cpu.busy(); });
  // A driver's tensor descriptor: decoded (layout) and validated into the
  // table; a refusal is the write's error (kBadTensor).
  pe_regs.on_tensor_write([this](Handle h, const uint8_t* bytes) -> std::string {
    try {
      table_.install(h, desc::decode_tensor(bytes, regs::kTensorDescBytes));
    } catch (const desc::DecodeError& e) {
      return e.what();
    } catch (const KernelError& e) {
      return e.what();
    }
    return {};
  });
}

}  // namespace kb
