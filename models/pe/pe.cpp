#include "models/pe/pe.h"

#include <iterator>
#include <memory>
#include <string>

#include "models/isa/descriptor.h"
#include "models/mem/address_map.h"
#include "models/pe/engines/pe_dma.h"
#include "models/pe/engines/pe_gemm.h"
#include "models/pe/engines/pe_math.h"
#include "models/pe/engines/pe_tcm.h"

namespace kb {

namespace {

std::vector<Router::Region> bus_map(const PeConfig& cfg) {
  return {{"tcm", MemoryRange{kTcmBase, kTcmBase + cfg.tcm.size_bytes}},
          {"mem", MemoryRange{0, 0}}};  // everything else leaves the PE
}

// How the PE makes each engine: one row per row of the engine table
// (models/trace/component_table.h), in its order.
using MakeEngine = std::unique_ptr<StageEngine> (*)(const char* name, const PeConfig& cfg, IpcMailbox& mailbox);
template <class E>
std::unique_ptr<StageEngine> make(const char* name, const PeConfig& cfg, IpcMailbox&) {
  return std::make_unique<E>(name, cfg);
}
std::unique_ptr<StageEngine> make_ipc(const char* name, const PeConfig& cfg, IpcMailbox& mailbox) {
  return std::make_unique<PeIpc>(name, cfg, mailbox);
}
constexpr MakeEngine kMakeEngine[] = {make<PeDma>, make<PeGemm>, make<PeMath>, make<PeTcm>, make_ipc};
static_assert(std::size(kMakeEngine) == size_t(kNumEngines), "one row per engine of the engine table");

Pe::Engines make_engines(const PeConfig& cfg, IpcMailbox& mailbox) {
  Pe::Engines engines;
  for (int e = 0; e < kNumEngines; ++e) engines[size_t(e)] = kMakeEngine[e](to_string(engine_component(Engine(e))), cfg, mailbox);
  return engines;
}

}  // namespace

uint64_t Pe::tcm_data_bytes() const { return static_cast<const PeTcm&>(engine(Engine::kTcm)).stored_bytes(); }

// A VP that stops the simulation gets the op log's last records without
// calling flush() (flush is idempotent: the harness's own call adds nothing).
void Pe::end_of_simulation() { log_.flush(); }

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
      ipc_mailbox("ipc_mailbox", cfg_),
      engines_(make_engines(cfg_, ipc_mailbox)),
      ipc_policy_(ipc_mailbox),
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
  // The engines, in the engine table's order.
  for (int e = 0; e < kNumEngines; ++e) link(pe_scheduler.engine[size_t(e)], engines_[size_t(e)]->in);
  // Every access to memory goes through the PE's bus: PE_CPU's, the
  // engines' own paths past the TCM (PE_DMA's HBM side, PE_IPC's messages
  // to other PEs' windows), then every engine's TCM port.
  link(pe_cpu.data, pe_bus.in);
  for (auto& e : engines_)
    if (tlm::tlm_initiator_socket<32>* m = e->mem_port()) link(*m, pe_bus.in);
  ipc_mailbox.set_self(place_.global);
  pe_scheduler.set_pes(place_.pes());
  // Same-time work across PEs runs in the order of their global numbers
  // (models/util/instant_calendar.h).
  pe_scheduler.set_pe(place_.global);
  ipc_mailbox.set_pe(place_.global);
  for (auto& e : engines_) e->set_place(place_);
  if (place_.pes() > 1) table_.bound_to_slice();
  // PE_IPC's order: per peer in program order, a RECV once its message is in.
  pe_scheduler.set_issue_policy(Engine::kIpc, &ipc_policy_);
  ipc_mailbox.on_arrival([this] { pe_scheduler.wake(Engine::kIpc); });
  for (auto& e : engines_) {
    link(e->data, pe_bus.in);
    if (cfg_.data_mode) e->set_data(&table_);
  }
  link(pe_bus.out[0], static_cast<PeTcm&>(engine(Engine::kTcm)).sram);
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
