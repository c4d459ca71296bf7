// A stage: one unit of work PE_SCHEDULER issues to one engine. A single-op
// command is one stage; a composite becomes a tile plan of stages.
// Scheduler-generated stages pay no dispatch (docs/cost-model.md D5).
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include <tlm>

#include "models/isa/commands.h"
#include "models/trace/component_table.h"
#include "models/trace/op_log.h"

namespace kb {

// One side of a PE_DMA transfer: `runs` runs of `run_bytes` bytes, `pitch`
// bytes apart, from `address` (a tensor, or a block of one). runs == 0: the
// command's staging buffer (a composite's tile block in data mode,
// command_data.h).
struct BytePattern {
  uint64_t address = 0, run_bytes = 0, pitch = 0, runs = 0;
};

// Everything of a stage but its plan edges: trivially copyable, so the
// plan resets a reused slot with one assignment.
// The fields a stage's issue, timing and completion read most lead the
// struct: fewer cache lines per stage (a mesh's PEs evict each other's
// lines; the struct is not line-aligned: aligned, it ran slower).
struct StageWork {
  uint64_t cmd_id = 0;
  // Position in the command's plan (stages are produced in this order); the
  // scheduler issues a command's ready stages on one engine by it.
  uint64_t seq = 0;
  const char* cmd_type = "";
  RecordKind kind = RecordKind::kDmaRead;
  Engine engine = Engine::kDma;
  MathOp op = MathOp::kAdd;     // MATH
  bool tcm_only = false;        // COPY: both ends in TCM
  uint32_t peer = 0;            // PE_IPC: the destination (SEND) or source (RECV) global PE
  int64_t tile = -1;
  // Work description for the engine's timing formula.
  uint64_t bytes = 0;     // DMA / COPY / FETCH / STORE
  uint64_t elements = 0;  // MATH: output elements; GEMM: m x n
  int64_t row_len = 0;          // MATH reductions: elements reduced per row
  int64_t m = 0, n = 0, k = 0;  // GEMM
  // Single-op GEMM only: operand bytes read from TCM before computing and
  // result bytes drained to TCM after (a composite has FETCH/STORE stages).
  uint64_t fetch_bytes = 0, store_bytes = 0;
  // Data mode, a composite's staged blocks: the operand a DMA_READ brings
  // in ('a', 'b', 'o': the accumulated output) or the output block a STORE
  // leaves for its DMA_WRITE ('w'); 0 for every other stage.
  char role = 0;
  // Data mode: which OpSpec of a composite this stage serves (-1: the
  // single-op command itself) and, for tile stages, the block it covers:
  // rows [m0, m0 + m) x cols [n0, n0 + n) of the output, K [k0, k0 + k).
  int32_t op_index = -1;
  BytePattern src, dst;         // PE_DMA: what it reads and what it writes
  int64_t m0 = 0, n0 = 0, k0 = 0;
};

struct Stage : StageWork {
  // Plan edges: the plan's slots of the stages waiting for this one
  // (tile_plan.h).
  std::vector<uint32_t> dependents;
  uint32_t pending = 0;  // unfinished predecessors
};

static_assert(std::is_trivially_copyable_v<StageWork>);

struct CommandData;  // data mode state of one in-flight command (command_data.h)

// Carries the stage to the engine over the TLM socket
// (docs/conventions.md 6); in data mode also the command's data state, so the
// engine computes real values.
struct StageExtension : tlm::tlm_extension<StageExtension> {
  const Stage* stage = nullptr;
  CommandData* data = nullptr;  // null in timing mode
  const char* error = nullptr;  // with an error response: why (the engine's)
  tlm::tlm_extension_base* clone() const override {
    auto* e = new StageExtension;
    *e = *this;
    return e;
  }
  void copy_from(const tlm::tlm_extension_base& other) override {
    *this = static_cast<const StageExtension&>(other);
  }
};

}  // namespace kb
