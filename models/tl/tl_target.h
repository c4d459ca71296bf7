// TlTarget: what the tl layer needs from the PE (PE_CPU implements it).
// tl.h depends on this interface only, so kernels see the PE's programming
// interface and nothing of its modules (the layering, tests/layering).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/isa/commands.h"
#include "models/isa/pe_place.h"
#include "models/isa/tensor_table.h"

namespace kb {

class Tl;
using Kernel = std::function<void(Tl&)>;

// Running dispatch totals of the current launch (tl.dispatch_totals).
struct DispatchTotals {
  uint64_t commands = 0;
  uint64_t logical_bytes = 0;
  double cycles_exact = 0;
  uint64_t cycles_charged = 0;
  uint64_t dispatch_ps = 0;  // cycles_charged as time, converted once
};

// A command that failed while the simulation ran it (a time or cycle count
// past 64 bits, an engine's error): raised in the kernel thread at the point
// where it waits, so the launch fails like any kernel error.
// cmd_id names the command (0 for tl.cycles(n)); ticket counts every item
// dispatched (commands and tl.cycles), so replay can name the stream line.
struct CommandFault : KernelError {
  CommandFault(const std::string& what, uint64_t id, uint64_t item)
      : KernelError(what), cmd_id(id), ticket(item) {}
  uint64_t cmd_id;
  uint64_t ticket;
};

class TlTarget {
 public:
  virtual ~TlTarget() = default;

  // The one dispatch path, shared by tl (live) and replay: validates and
  // costs the command (docs/cost-model.md), then queues it; the PE spends the
  // cost in simulated time and writes the descriptor.
  virtual void dispatch(Command&& c) = 0;
  // The same, for a command built in place (no Command moved per
  // dispatch): next_command() is where to build it (PE_CPU's
  // free run-ahead slot, holding whatever command was there before);
  // dispatch_next() then dispatches it as dispatch() would. Nothing else of
  // the target may be called in between.
  virtual Command& next_command() = 0;
  virtual void dispatch_next() = 0;
  // Waits until every queued command is written and every accepted one has
  // completed.
  virtual void drain() = 0;
  // tl.wait() from a kernel: drain(), noted as a wait (unlike the drain that
  // ends every launch, it changes timing, so a recorded stream keeps it).
  virtual void kernel_wait() = 0;

  // Descriptor-table entries (no command, no time). Throw KernelError.
  virtual Handle declare(const std::string& name, MemSpace space, int64_t rows, int64_t cols,
                         Dtype dtype) = 0;
  // A tensor in global PE `owner`'s HBM slice.
  virtual Handle declare_on(uint32_t owner, const std::string& name, int64_t rows, int64_t cols,
                            Dtype dtype) = 0;
  virtual Handle view(Handle base, int64_t row0, int64_t nrows, int64_t col0, int64_t ncols) = 0;
  // A tensor at a given address (replay of a recorded stream).
  virtual Handle declare_at(const std::string& name, MemSpace space, int64_t rows, int64_t cols,
                            Dtype dtype, uint64_t address, int64_t row_stride) = 0;

  // Host access to memory, in zero simulated time after the queue drains.
  // Initialising works in both modes; reading needs data mode.
  virtual void host_fill_random(Handle h, uint64_t seed, double lo, double hi) = 0;
  virtual void host_write(Handle h, const std::vector<float>& values) = 0;
  virtual std::vector<float> host_read(Handle h) = 0;

  virtual DispatchTotals dispatch_totals() const = 0;
  // Where the PE sits in its top (SPMD kernels).
  virtual const PePlace& place() const = 0;
  // A figure the kernel reports about itself (in the launch's result).
  virtual void add_metric(const std::string& name, double value) = 0;
  // What the next dispatch() will be numbered: its command ID (when it is
  // not tl.cycles(n)) and its ticket (see CommandFault).
  virtual uint64_t next_command_id() const = 0;
  virtual uint64_t next_ticket() const = 0;
};

}  // namespace kb
