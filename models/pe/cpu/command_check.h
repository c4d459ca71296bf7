// Validation of a command against the tensor descriptor table, done by
// PE_CPU before any dispatch time is charged (live and replay paths alike).
// A kernel-author mistake throws KernelError naming the command, the
// operands and their shapes.
#pragma once

#include "models/pe/commands.h"
#include "models/pe/tensor_table.h"

namespace kb {

// A CompositeCmd's ops are decoded here, once (OpDecoder), into cmd.typed,
// which the scheduler's tile plan and data execution use; a refused
// composite is left with cmd.typed empty.
void check_command(Command& cmd, const TensorTable& table);

// A SendCmd's destination or RecvCmd's source is a PE of the top: below
// `pes` (PePlace::pes()); KernelError otherwise (issue 14 item 5).
void check_peer(const Command& cmd, uint32_t pes);

// Data mode computes fp32 and bf16 only: every tensor the command touches
// must be one of those (checked at emit time, not when a stage runs).
void check_data_dtypes(const Command& cmd, const TensorTable& table);

class InitTracker;
// Every tensor the command reads holds a value (written by an earlier
// command, an earlier op of the same composite in plan order, or the host);
// then marks what it writes. Throws KernelError naming the tensor. A
// CompositeCmd must have passed check_command.
void check_initialised(const Command& cmd, const TensorTable& table, InitTracker& init);

}  // namespace kb
