// A stage: one unit of work PE_SCHEDULER issues to one engine. A single-op
// command is one stage; a composite becomes a tile plan of stages.
// Scheduler-generated stages pay no dispatch (ADR-0064 D5).
#pragma once

#include <cstdint>
#include <vector>

#include <tlm>

#include "models/pe/commands.h"
#include "models/trace/op_log.h"

namespace kb {

enum class Engine : uint8_t { kDma, kGemm, kMath, kTcm };
constexpr int kNumEngines = 4;
Component engine_component(Engine e);

struct Stage {
  uint64_t cmd_id = 0;
  const char* cmd_type = "";
  RecordKind kind = RecordKind::kDmaRead;
  Engine engine = Engine::kDma;
  int64_t tile = -1;
  // Work description for the engine's timing formula.
  uint64_t bytes = 0;     // DMA / COPY / FETCH / STORE
  uint64_t elements = 0;  // MATH: output elements; GEMM: m x n
  int64_t m = 0, n = 0, k = 0;  // GEMM
  // Single-op GEMM only: operand bytes read from TCM before computing and
  // result bytes drained to TCM after (a composite has FETCH/STORE stages).
  uint64_t fetch_bytes = 0, store_bytes = 0;
  MathOp op = MathOp::kAdd;     // MATH
  int64_t row_len = 0;          // MATH reductions: elements reduced per row
  bool tcm_only = false;        // COPY: both ends in TCM
  // Plan edges (indices into the command's stage list).
  std::vector<uint32_t> dependents;
  uint32_t pending = 0;  // unfinished predecessors
};

// Carries the stage to the engine over the TLM socket (STYLE.md 6).
struct StageExtension : tlm::tlm_extension<StageExtension> {
  const Stage* stage = nullptr;
  tlm::tlm_extension_base* clone() const override {
    auto* e = new StageExtension;
    e->stage = stage;
    return e;
  }
  void copy_from(const tlm::tlm_extension_base& other) override {
    stage = static_cast<const StageExtension&>(other).stage;
  }
};

}  // namespace kb
