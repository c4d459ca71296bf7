// The command types as the op log, statistics and traces see them: one row
// per alternative of Command (commands.h), in its order, with the name
// records carry and whether outputs list the type only where a run issued
// one. Plain data: models/trace includes this table, not the command
// structs (docs/architecture.md, "Layers"); commands.h checks it against
// Command.
#pragma once

#include <string_view>

namespace kb {

struct CommandTypeInfo {
  const char* name;  // op logs, statistics, traces, messages
  // Listed (statistics, result JSON) only where a run issued one: the IPC
  // commands, so single-PE outputs stay as they are.
  bool optional;
};

// One object in every translation unit (inline): a record's cmd_type points
// at these names, so command_type_index can find one by its address.
inline constexpr CommandTypeInfo kCommandTypes[] = {
    {"DmaReadCmd", false}, {"DmaWriteCmd", false},    {"GemmCmd", false},
    {"MathCmd", false},    {"CopyCmd", false},        {"CompositeCmd", false},
    {"CpuOverheadCmd", false}, {"SendCmd", true},     {"RecvCmd", true},
};
constexpr int kNumCommandTypes = int(sizeof(kCommandTypes) / sizeof(kCommandTypes[0]));

constexpr const char* command_type_name(int index) {
  return index >= 0 && index < kNumCommandTypes ? kCommandTypes[index].name : "?";
}
constexpr bool is_optional_command_type(int index) {
  return index >= 0 && index < kNumCommandTypes && kCommandTypes[index].optional;
}

// -1 if unknown.
inline int command_type_index(std::string_view name) {
  for (int t = 0; t < kNumCommandTypes; ++t)
    if (name == kCommandTypes[t].name) return t;
  return -1;
}
// The same; a name that is the table's own storage (an op-log record's
// cmd_type) is found by its address, without comparing text.
inline int command_type_index(const char* name) {
  for (int t = 0; t < kNumCommandTypes; ++t)
    if (name == kCommandTypes[t].name) return t;
  return command_type_index(std::string_view(name));
}

}  // namespace kb
