// Validation of a command against the tensor descriptor table, done by
// PE_CPU before any dispatch time is charged (live and replay paths alike).
// A kernel-author mistake throws KernelError naming the command, the
// operands and their shapes.
#pragma once

#include "models/isa/commands.h"
#include "models/isa/tensor_table.h"

namespace kb {

// The tensors a single-op command reads (in the order check_initialised
// reports them) and writes. check_command finds them, so check_initialised
// need not look them up again. Not filled for a
// composite (per op) or tl.cycles: resolved stays false.
struct CommandTensors {
  // A tensor by descriptor, or by handle (desc null) when not looked up yet.
  // No member initialisers: a Ref past nreads (or an unset write) is never
  // read, and the struct is made for every command.
  struct Ref {
    const char* slot;
    const TensorDesc* desc;
    Handle handle;
  };
  Ref reads[3];  // a, b and an accumulated out at most
  int nreads = 0;
  bool writes = false;
  bool resolved = false;  // check_command filled it: every Ref has its desc
  Ref write;
  void read(const char* slot, const TensorDesc* d, Handle h = 0) { reads[nreads++] = {slot, d, h}; }
  void set_write(const TensorDesc* d, Handle h = 0) { writes = true, write = {"", d, h}; }
};

// A CompositeCmd's ops are decoded here, once (OpDecoder), into cmd.typed,
// which the scheduler's tile plan and data execution use; a refused
// composite is left with cmd.typed empty. `found`, if given, receives a
// single-op command's tensors (valid while the table is unchanged).
void check_command(Command& cmd, const TensorTable& table, CommandTensors* found = nullptr);

// A SendCmd's destination or RecvCmd's source is a PE of the top: below
// `pes` (PePlace::pes()); KernelError otherwise. Inline: every other
// command returns at once (this runs for every command).
void check_ipc_peer(const Command& cmd, uint32_t pes);
inline void check_peer(const Command& cmd, uint32_t pes) {
  if (std::holds_alternative<SendCmd>(cmd) || std::holds_alternative<RecvCmd>(cmd)) check_ipc_peer(cmd, pes);
}

// Data mode computes fp32 and bf16 only: every tensor the command touches
// must be one of those (checked at emit time, not when a stage runs).
void check_data_dtypes(const Command& cmd, const TensorTable& table);

class InitTracker;
// Every tensor the command reads holds a value (written by an earlier
// command, an earlier op of the same composite in plan order, or the host);
// then marks what it writes. Throws KernelError naming the tensor. A
// CompositeCmd must have passed check_command. `tensors`: what check_command
// found for `cmd`, used when resolved; else the handles are looked up.
void check_initialised(const Command& cmd, const TensorTable& table, InitTracker& init,
                       const CommandTensors* tensors = nullptr);

}  // namespace kb
