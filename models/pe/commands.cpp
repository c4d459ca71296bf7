#include "models/pe/commands.h"

#include <type_traits>

namespace kb {

// ADR-0064 D2 _extra_bytes.
uint32_t extra_bytes(const ExtraValue& v) {
  return std::visit(
      [](const auto& x) -> uint32_t {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>) return 1;
        else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, double>)
          return lb::kScalar;
        else if constexpr (std::is_same_v<T, std::vector<int64_t>>)
          return lb::kTupleLength + lb::kScalar * uint32_t(x.size());
        else return 1;  // string: an opcode-like tag
      },
      v);
}

uint32_t extras_bytes(const Extras& extras) {
  uint32_t n = lb::kTupleLength;
  for (const Extra& e : extras) n += extra_bytes(e.value);
  return n;
}

namespace {
struct MathOpInfo {
  MathOp op;
  std::string_view name;  // of a literal: NUL-terminated
  int arity;
  bool reduction;
  bool transcendental;
};
constexpr MathOpInfo kMathOps[] = {
    {MathOp::kAdd, "add", 2, false, false},
    {MathOp::kSub, "sub", 2, false, false},
    {MathOp::kMul, "mul", 2, false, false},
    {MathOp::kMax, "max", 2, false, false},
    {MathOp::kDiv, "div", 2, false, true},
    {MathOp::kAddBcast, "add_bcast", 2, false, false},
    {MathOp::kSubBcast, "sub_bcast", 2, false, false},
    {MathOp::kMulBcast, "mul_bcast", 2, false, false},
    {MathOp::kDivBcast, "div_bcast", 2, false, true},
    {MathOp::kExp, "exp", 1, false, true},
    {MathOp::kScale, "scale", 1, false, false},
    {MathOp::kFill, "fill", 0, false, false},
    {MathOp::kRowMax, "rowmax", 1, true, false},
    {MathOp::kRowSum, "rowsum", 1, true, false},
};
const MathOpInfo& info(MathOp op) { return kMathOps[static_cast<int>(op)]; }
}  // namespace

const char* to_string(MathOp op) { return info(op).name.data(); }
int math_op_arity(MathOp op) { return info(op).arity; }
bool math_op_is_reduction(MathOp op) { return info(op).reduction; }
bool math_op_is_transcendental(MathOp op) { return info(op).transcendental; }

bool math_op_from_string(const std::string& name, MathOp* op) {
  // Composites name their ops as strings: this runs per op per command.
  const std::string_view n = name;
  for (const MathOpInfo& i : kMathOps) {
    if (n == i.name) {
      *op = i.op;
      return true;
    }
  }
  return false;
}

const char* to_string(OpScope s) {
  switch (s) {
    case OpScope::kPrologue: return "prologue";
    case OpScope::kTile: return "tile";
    case OpScope::kEpilogue: return "epilogue";
  }
  return "?";
}

bool op_scope_from_string(const std::string& name, OpScope* s) {
  for (OpScope c : {OpScope::kPrologue, OpScope::kTile, OpScope::kEpilogue}) {
    if (name == to_string(c)) {
      *s = c;
      return true;
    }
  }
  return false;
}

// --- ADR-0064 D2, one rule per command type

uint32_t DmaReadCmd::logical_bytes() const { return lb::kFraming + 2 * lb::kHandle; }
uint32_t DmaWriteCmd::logical_bytes() const { return lb::kFraming + 2 * lb::kHandle; }
uint32_t CopyCmd::logical_bytes() const { return lb::kFraming + 2 * lb::kHandle; }

uint32_t GemmCmd::logical_bytes() const {
  return lb::kFraming + 3 * lb::kHandle + 3 * lb::kScalar + 2 * 1 /* bools */;
}

uint32_t MathCmd::logical_bytes() const {
  return lb::kFraming + lb::kOpcode +
         lb::kTupleLength + lb::kHandle * uint32_t(operands.size()) +
         lb::kHandle /* out */ + extras_bytes(extra);
}

uint32_t OpSpec::logical_bytes() const {
  return lb::kOpcode + lb::kEnum /* scope */ +
         lb::kTupleLength + lb::kHandle * uint32_t(operands.size()) +
         (has_out ? lb::kHandle : 0) + extras_bytes(extra);
}

uint32_t CompositeCmd::logical_bytes() const {
  uint32_t n = lb::kFraming + lb::kTupleLength;
  for (const OpSpec& op : ops) n += op.logical_bytes();
  // rw_handles are counted again even when they also appear as operands:
  // no de-duplication (ADR-0064 D2 counting rule).
  return n + lb::kTupleLength + lb::kHandle * uint32_t(rw_handles.size());
}

// --- variant helpers

namespace {
template <class... Ts>
struct overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
overloaded(Ts...) -> overloaded<Ts...>;
}  // namespace

namespace {
// In the order of Command's alternatives.
const char* const kCommandTypeNames[kNumCommandTypes] = {
    "DmaReadCmd", "DmaWriteCmd", "GemmCmd", "MathCmd", "CopyCmd", "CompositeCmd", "CpuOverheadCmd"};
}  // namespace

const char* command_type_name(int index) {
  return index >= 0 && index < kNumCommandTypes ? kCommandTypeNames[index] : "?";
}

const char* command_type_name(const Command& cmd) { return kCommandTypeNames[cmd.index()]; }

int command_type_index(std::string_view name) {
  for (int t = 0; t < kNumCommandTypes; ++t)
    if (name == kCommandTypeNames[t]) return t;
  return -1;
}

uint32_t logical_bytes(const Command& cmd) {
  return std::visit([](const auto& c) { return c.logical_bytes(); }, cmd);
}

HandleAccess handle_access(const Command& cmd) {
  HandleAccess a;
  handle_access(cmd, a);
  return a;
}

void handle_access(const Command& cmd, HandleAccess& a) {
  a.reads.clear();
  a.writes.clear();
  auto set = [&a](std::initializer_list<Handle> r, std::initializer_list<Handle> w) {
    a.reads.insert(a.reads.end(), r);
    a.writes.insert(a.writes.end(), w);
  };
  std::visit(
      overloaded{
          [&](const DmaReadCmd& c) { set({c.src}, {c.dst}); },
          [&](const DmaWriteCmd& c) { set({c.src}, {c.dst}); },
          [&](const CopyCmd& c) { set({c.src}, {c.dst}); },
          [&](const GemmCmd& c) {
            set({c.a, c.b}, {c.out});
            if (c.accumulate) a.reads.push_back(c.out);
          },
          [&](const MathCmd& c) {
            a.reads.assign(c.operands.begin(), c.operands.end());
            a.writes.push_back(c.out);
          },
          [&](const CompositeCmd& c) {
            for (const OpSpec& op : c.ops) {
              for (const NamedOperand& o : op.operands) a.reads.push_back(o.handle);
              if (op.has_out) a.writes.push_back(op.out);
            }
            for (Handle h : c.rw_handles) {
              a.reads.push_back(h);
              a.writes.push_back(h);
            }
          },
          [&](const CpuOverheadCmd&) {}},
      cmd);
}

}  // namespace kb
