// The register map of a PE's `regs` target socket: the front door a VP's
// own CPU or driver uses. Plain C++, no SystemC, so a
// driver can include it. Offsets are relative to the socket (a VP's bus maps
// the block wherever it likes); every value is little-endian.
//
//   offset   width  access  register
//   0x0000   n      W       QUEUE: a write of one binary command descriptor
//                           (models/isa/descriptor.h), exactly its
//                           logical_bytes() long, enqueues it; the write
//                           waits while the queue is full (back-pressure)
//   0x0100   4      R       STATUS: kIdle, kBusy or kError (below)
//   0x0104   4      R       ERROR_CODE: ErrorCode of the first error (sticky)
//   0x0108   4      R       ERROR_COMMAND: completion id (24 bits) of the
//                           command that failed; 0 when none is known
//   0x0110   8      R       COMPLETED: descriptors completed since time 0
//   0x0118   4      R       OCCUPANCY: descriptors accepted, not completed
//   0x0120   4      RW      IRQ_ENABLE: Irq bits
//   0x0124   4      R/W1C   IRQ_STATUS: Irq bits raised; writing 1 clears
//   0x0130   4      W       DOORBELL: launch the kernel registered under
//                           this index (Pe::register_kernel) on PE_CPU
//   0x0134   4      R       KERNELS: how many kernels are registered
//   0x10000  64 x N RW      TENSOR_TABLE: N = kTensorTableEntries tensor
//                           descriptors of kTensorDescBytes each; a
//                           command descriptor's handle is the offset of
//                           its entry (kTensorTable + 64 x i)
//
// A register access must be exactly its width, aligned, without byte
// enables and with a streaming width equal to its length; anything else,
// or an offset with no register, gets a TLM error response, never a crash.
// transport_dbg reads every register without side effects.
#pragma once

#include <cstdint>

namespace kb::regs {

constexpr uint64_t kQueue = 0x0000;
constexpr uint64_t kStatus = 0x0100;
constexpr uint64_t kErrorCode = 0x0104;
constexpr uint64_t kErrorCommand = 0x0108;
constexpr uint64_t kCompleted = 0x0110;
constexpr uint64_t kOccupancy = 0x0118;
constexpr uint64_t kIrqEnable = 0x0120;
constexpr uint64_t kIrqStatus = 0x0124;
constexpr uint64_t kDoorbell = 0x0130;
constexpr uint64_t kKernels = 0x0134;

// The tensor descriptor table: kTensorTableEntries
// entries of kTensorDescBytes; handle = kTensorTable + kTensorDescBytes x i.
constexpr uint64_t kTensorTable = 0x10000;
constexpr uint64_t kTensorDescBytes = 64;
constexpr uint64_t kTensorTableEntries = 1024;
constexpr uint64_t kTensorTableEnd = kTensorTable + kTensorDescBytes * kTensorTableEntries;
constexpr uint64_t kSize = kTensorTableEnd;  // the block's extent

// STATUS values.
enum class Status : uint32_t { kIdle = 0, kBusy = 1, kError = 2 };

// ERROR_CODE values.
enum class ErrorCode : uint32_t {
  kNone = 0,
  kUnknownType = 1,     // the descriptor's type byte names no command
  kBadLength = 2,       // the write's length is not the descriptor's logical_bytes
  kBadHandle = 3,       // a handle names no tensor descriptor in the table
  kCompositeCap = 4,    // a composite over the docs/cost-model.md D7 cap
  kMalformed = 5,       // any other field that does not decode
  kInvalidCommand = 6,  // decoded, but its tensors do not fit it (shape, space, dtype)
  kBadTensor = 7,       // a tensor descriptor written to the table is not valid
  kCommandFault = 8,    // a command failed while it ran (engine error, time overflow)
  kKernelError = 9,     // a kernel launched on PE_CPU failed
  kUnknownKernel = 10,  // DOORBELL named no registered kernel
};
const char* to_string(ErrorCode e);

// IRQ_ENABLE / IRQ_STATUS bits. `irq` is high while IRQ_STATUS & IRQ_ENABLE
// is not zero.
enum Irq : uint32_t {
  kIrqDrained = 1u << 0,  // the queue became empty: every accepted descriptor completed
  kIrqError = 1u << 1,    // STATUS became kError
};

inline const char* to_string(ErrorCode e) {
  switch (e) {
    case ErrorCode::kNone: return "none";
    case ErrorCode::kUnknownType: return "unknown descriptor type";
    case ErrorCode::kBadLength: return "descriptor length is not its logical bytes";
    case ErrorCode::kBadHandle: return "handle outside the tensor table";
    case ErrorCode::kCompositeCap: return "composite over the D7 cap";
    case ErrorCode::kMalformed: return "malformed descriptor";
    case ErrorCode::kInvalidCommand: return "command does not fit its tensors";
    case ErrorCode::kBadTensor: return "invalid tensor descriptor";
    case ErrorCode::kCommandFault: return "command fault";
    case ErrorCode::kKernelError: return "kernel error";
    case ErrorCode::kUnknownKernel: return "unknown kernel";
  }
  return "unknown error code";
}

}  // namespace kb::regs
