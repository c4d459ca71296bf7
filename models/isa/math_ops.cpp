#include "models/isa/math_ops.h"

#include <array>
#include <string_view>

#include "models/isa/commands.h"

namespace kb {

namespace {
// Opcode -> its op's index + 1 (0: no op), made from the table at compile
// time: the descriptor decoder looks one up per math op.
constexpr std::array<uint8_t, 256> kOpOfOpcode = [] {
  std::array<uint8_t, 256> a{};
  for (const MathOpInfo& i : kMathOps) a[i.opcode] = uint8_t(int(i.op) + 1);
  return a;
}();
}  // namespace

bool math_op_from_opcode(uint8_t opcode, MathOp* op) {
  const uint8_t at = kOpOfOpcode[opcode];
  if (at == 0) return false;
  *op = MathOp(at - 1);
  return true;
}

bool math_op_from_string(const std::string& name, MathOp* op) {
  // Composites name their ops as strings: this runs per op per command.
  const std::string_view n = name;
  for (const MathOpInfo& i : kMathOps) {
    if (same_name(n, i.name)) {  // the length first, no memcmp call
      *op = i.op;
      return true;
    }
  }
  return false;
}

}  // namespace kb
