#include "models/isa/math_ops.h"

#include <string_view>

#include "models/isa/commands.h"

namespace kb {

bool math_op_from_opcode(uint8_t opcode, MathOp* op) {
  for (const MathOpInfo& i : kMathOps) {
    if (i.opcode == opcode) {
      *op = i.op;
      return true;
    }
  }
  return false;
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
