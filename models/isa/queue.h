// PE_SCHEDULER's command queue as its initiators see it: the addresses a
// descriptor write and a drain read go to, the SystemC message type of a
// refused write, and the decoded command that may ride on a write. PE_CPU,
// PE_REGS and a VP's own initiator include this, not the scheduler
// (docs/conventions.md 16).
#pragma once

#include <cstdint>

#include <tlm>

#include "models/isa/commands.h"

namespace kb {

constexpr uint64_t kQueueAddress = 0x0;  // a WRITE of one binary descriptor (descriptor.h)
constexpr uint64_t kDrainAddress = 0x8;  // a READ that completes when the queue is empty

// The SystemC message type of a refused descriptor write.
inline constexpr const char* kDescriptorErrorType = "kernbench/descriptor_error";

// The decoded command riding on a descriptor write (docs/conventions.md 6): a
// fast path a target may ignore; the payload's bytes are the descriptor.
struct CommandExtension : tlm::tlm_extension<CommandExtension> {
  const Command* cmd = nullptr;
  uint64_t id = 0;
  tlm::tlm_extension_base* clone() const override {
    auto* e = new CommandExtension;
    *e = *this;
    return e;
  }
  void copy_from(const tlm::tlm_extension_base& other) override {
    *this = static_cast<const CommandExtension&>(other);
  }
};

}  // namespace kb
