// PE_REGS: the PE's register block, the front door of a VP's own CPU or
// driver. The map is models/isa/register_map.h;
// docs/front-door.md, "The register map", has it as a table.
//
// - `in` takes b_transport (and nb_transport through the simple socket's
//   conversion) and transport_dbg. A b_transport first waits out its
//   annotated delay, so what it reads or changes is the state at its time.
// - QUEUE window [kQueue, kStatus): a WRITE at any offset in it (the window
//   is a port, offsets alias) carries one binary command descriptor
//   (models/isa/descriptor.h), any length, since a descriptor may be longer
//   than the window. It goes on `queue` as a descriptor write to
//   PE_SCHEDULER (kQueueAddress, same data and length), which blocks while
//   the queue is full: back-pressure on the writer. The scheduler's
//   response is the write's.
// - TENSOR_TABLE [kTensorTable, kTensorTableEnd): an access is one whole
//   entry (kTensorDescBytes, aligned). A WRITE goes to on_tensor_write
//   (Pe wires it to the tensor table); it is stored, and reads return it,
//   when the handler accepts it.
// - Registers: exactly their width, aligned, no byte enables, streaming
//   width equal to the length. Errors: an offset with no register or inside
//   one TLM_ADDRESS_ERROR_RESPONSE; byte enables
//   TLM_BYTE_ENABLE_ERROR_RESPONSE; a wrong length or streaming width
//   TLM_BURST_ERROR_RESPONSE; a read of a write-only or a write of a
//   read-only register TLM_COMMAND_ERROR_RESPONSE; no data
//   TLM_GENERIC_ERROR_RESPONSE. TLM_IGNORE_COMMAND is checked likewise and
//   does nothing.
// - transport_dbg: READs only (registers as above, the table any bytes
//   inside it), without side effects; anything else transfers 0 bytes.
// - Errors (record_error): the first sets STATUS to kError (sticky),
//   ERROR_CODE and ERROR_COMMAND; every one raises kIrqError.
// - `irq` is high while IRQ_STATUS & IRQ_ENABLE != 0; it may stay unbound.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "models/isa/commands.h"
#include "models/isa/register_map.h"
#include "models/pe/scheduler/pe_scheduler.h"
#include "models/tl/tl_target.h"

namespace kb {

// An interrupt output a top need not bind (written only when bound).
using IrqPort = sc_core::sc_port<sc_core::sc_signal_inout_if<bool>, 1, sc_core::SC_ZERO_OR_MORE_BOUND>;
// The register socket of kb::Pe: a top that does not use the front door
// leaves it unbound.
using RegsSocket = tlm::tlm_target_socket<32, tlm::tlm_base_protocol_types, 1, sc_core::SC_ZERO_OR_MORE_BOUND>;

class PeRegs : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket_optional<PeRegs> in;  // the register block (regs of kb::Pe)
  tlm_utils::simple_initiator_socket<PeRegs> queue;  // to PE_SCHEDULER's in
  IrqPort irq;

  // `scheduler`: read for OCCUPANCY, COMPLETED, STATUS and the drained IRQ.
  PeRegs(sc_core::sc_module_name name, const PeScheduler& scheduler);

  // A tensor descriptor written to the table: `handle` is its entry's
  // offset (kTensorTable + kTensorDescBytes x i), `bytes` its
  // kTensorDescBytes. Returns an error message, empty when installed. Unset,
  // a table write gets TLM_COMMAND_ERROR_RESPONSE (Pe wires it).
  using TensorWriteHandler = std::function<std::string(Handle handle, const uint8_t* bytes)>;
  void on_tensor_write(TensorWriteHandler h) { on_tensor_write_ = std::move(h); }
  // A DOORBELL write naming a registered kernel: Pe launches it on PE_CPU.
  using LaunchHandler = std::function<void(const std::string& name, const Kernel& kernel)>;
  void on_doorbell(LaunchHandler h) { on_doorbell_ = std::move(h); }
  // Whether PE_CPU has a launch running or queued (STATUS kBusy).
  void cpu_busy(std::function<bool()> f) { cpu_busy_ = std::move(f); }

  // The DOORBELL index of `kernel` (0, 1, ... in order of registration).
  uint32_t register_kernel(const std::string& name, Kernel kernel);
  // An error: the first is kept (STATUS kError, ERROR_CODE, ERROR_COMMAND
  // = `command`, a 24-bit completion id, 0 when none is known); every one
  // raises kIrqError.
  void record_error(regs::ErrorCode code, uint32_t command, const std::string& what);

  // The registers' values, as a read returns them.
  regs::Status status() const;
  regs::ErrorCode error_code() const { return error_code_; }
  uint32_t error_command() const { return error_command_; }
  const std::string& error_message() const { return error_message_; }  // the first error's
  uint32_t irq_enable() const { return irq_enable_; }
  uint32_t irq_status() const { return irq_status_; }
  bool irq_level() const { return (irq_status_ & irq_enable_) != 0; }

 private:
  void b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  unsigned int transport_dbg(tlm::tlm_generic_payload& p);
  void queue_write(tlm::tlm_generic_payload& p);
  void table_access(tlm::tlm_generic_payload& p);
  void register_access(tlm::tlm_generic_payload& p);
  // The value of the register at `offset` (a register's start), or false
  // when it cannot be read. No side effects.
  bool read_value(uint64_t offset, uint64_t* value) const;
  void raise(uint32_t irq_bits);
  void drained();    // SC_METHOD on the scheduler's drained_event()
  void drive_irq();  // SC_METHOD on irq_changed_: the one writer of `irq`

  const PeScheduler& scheduler_;
  TensorWriteHandler on_tensor_write_;
  LaunchHandler on_doorbell_;
  std::function<bool()> cpu_busy_;
  std::vector<std::pair<std::string, Kernel>> kernels_;
  std::vector<uint8_t> table_;  // the tensor table's bytes, as written
  regs::ErrorCode error_code_ = regs::ErrorCode::kNone;
  uint32_t error_command_ = 0;
  std::string error_message_;
  uint32_t irq_enable_ = 0;
  uint32_t irq_status_ = 0;
  sc_core::sc_event irq_changed_;
};

}  // namespace kb
