#include "models/isa/cost_model.h"

#include <cmath>
#include <optional>
#include <stdexcept>
#include <type_traits>

#include "models/util/checked.h"

namespace kb {

namespace {
// docs/cost-model.md D8 by type: the composite pays the control-path FIXED,
// tl.cycles(n) none (D5), every single-op command the lighter one. Each
// command says which (its kFixed, commands.h), so a new one cannot fall in
// silently.
template <class T>
uint64_t fixed_cycles_of(const CostModelConfig& cm) {
  switch (T::kFixed) {
    case FixedClass::kComposite: return cm.fixed_per_cmd_cycles;
    case FixedClass::kNone: return 0;
    case FixedClass::kSingleOp: break;
  }
  return cm.fixed_per_single_op_cmd_cycles;
}
}  // namespace

uint64_t fixed_cycles(const Command& cmd, const CostModelConfig& cm) {
  return std::visit([&](const auto& x) { return fixed_cycles_of<std::decay_t<decltype(x)>>(cm); }, cmd);
}

namespace {
// Out of line, so dispatch_cost stays small (it runs for every command).
[[noreturn, gnu::noinline, gnu::cold]] void cost_overflow(const Command& cmd, const DispatchCost& c,
                                                           const CostModelConfig& cm) {
  throw std::overflow_error(
      "dispatch cost of " + std::string(command_type_name(cmd)) + " does not fit in 64 bits: " +
      std::to_string(c.fixed_cycles) + " + " + std::to_string(c.logical_bytes) + " bytes x " +
      std::to_string(cm.byte_cycles_recip) + " cycles (pe.attrs.pe_cost_model.byte_cycles_recip)");
}
}  // namespace

DispatchCost dispatch_cost(const Command& cmd, const CostModelConfig& cm) {
  DispatchCost c;
  if (const auto* overhead = std::get_if<CpuOverheadCmd>(&cmd)) {
    c.exact_cycles = double(overhead->cycles);  // docs/cost-model.md D5: bypass
    c.charged_cycles = overhead->cycles;
    return c;
  }
  // FIXED(type) and the bytes in one visit of the command.
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        c.fixed_cycles = fixed_cycles_of<T>(cm);
        c.logical_bytes = x.logical_bytes();
      },
      cmd);
  c.exact_cycles = double(c.fixed_cycles) + double(c.logical_bytes) * cm.byte_cycles_recip;
  // Whole cycles so the descriptor write falls on a clock edge; the epsilon
  // keeps binary round-off (e.g. 0.1 x 10) from adding a spurious cycle.
  const std::optional<uint64_t> charged = ceil_to_u64(c.exact_cycles - 1e-9);
  if (!charged) cost_overflow(cmd, c, cm);  // only a PeConfig built in code: the loader bounds R
  c.charged_cycles = *charged;
  return c;
}

void check_composite_cap(const CompositeCmd& cmd, const CostModelConfig& cm,
                         const std::string& kernel_name) {
  const uint32_t bytes = cmd.logical_bytes();
  if (bytes > cm.max_composite_logical_bytes) {
    throw CompositeTooLarge(
        "kernel '" + kernel_name + "': composite '" + cmd.name + "' is " +
        std::to_string(bytes) + " logical bytes, over the cap of " +
        std::to_string(cm.max_composite_logical_bytes) +
        " (pe.attrs.pe_cost_model.max_composite_logical_bytes, docs/cost-model.md D7);"
        " split it into smaller composites");
  }
}

}  // namespace kb
