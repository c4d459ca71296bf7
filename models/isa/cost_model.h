// The dispatch cost model (docs/cost-model.md): the only place that turns a
// command into PE_CPU dispatch cycles. Pure functions, callable without a
// simulation; both the live and the replay path go through PeCpu::dispatch,
// which calls these (docs/cost-model.md TR7, path parity).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "models/config/pe_config.h"
#include "models/isa/commands.h"

namespace kb {

struct DispatchCost {
  uint32_t logical_bytes = 0;   // docs/cost-model.md D2 (0 for CpuOverheadCmd)
  uint64_t fixed_cycles = 0;    // FIXED(type(cmd))
  double exact_cycles = 0.0;    // FIXED + logical_bytes x R, unrounded
  uint64_t charged_cycles = 0;  // whole cycles PE_CPU waits: ceil(exact)
};

// docs/cost-model.md D8: fixed_per_cmd_cycles for CompositeCmd only,
// fixed_per_single_op_cmd_cycles for the five single-op types.
uint64_t fixed_cycles(const Command& cmd, const CostModelConfig& cm);

// docs/cost-model.md D1: FIXED(type) + logical_bytes x R. CpuOverheadCmd
// bypasses the formula and costs exactly its cycles (D5, TR4).
DispatchCost dispatch_cost(const Command& cmd, const CostModelConfig& cm);

// docs/cost-model.md D7: a composite over max_composite_logical_bytes is
// rejected at emit time; no automatic splitting.
struct CompositeTooLarge : std::runtime_error {
  using std::runtime_error::runtime_error;
};
void check_composite_cap(const CompositeCmd& cmd, const CostModelConfig& cm,
                         const std::string& kernel_name);

}  // namespace kb
