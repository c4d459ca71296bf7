// PE_CPU's dispatch checks (models/isa/command_check.h): the tensors
// check_command finds for a single-op command (CommandTensors) are the ones
// check_initialised reads and marks, in its order, so handing them over
// changes no outcome and no message.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/isa/commands.h"
#include "models/isa/command_check.h"
#include "models/isa/init_tracker.h"
#include "models/isa/tensor_table.h"

namespace kb {
namespace {

struct Tensors {
  TensorTable table{1 << 20};
  Handle hbm = table.declare("hbm", MemSpace::kHbm, 16, 32, Dtype::kBf16);
  Handle a = table.declare("a", MemSpace::kTcm, 16, 32, Dtype::kBf16);
  Handle b = table.declare("b", MemSpace::kTcm, 32, 8, Dtype::kBf16);
  Handle c = table.declare("c", MemSpace::kTcm, 16, 8, Dtype::kBf16);
  Handle d = table.declare("d", MemSpace::kTcm, 16, 8, Dtype::kBf16);
};

GemmCmd gemm(const Tensors& t, bool accumulate) {
  GemmCmd g;
  g.a = t.a, g.b = t.b, g.out = t.c, g.m = 16, g.n = 8, g.k = 32, g.accumulate = accumulate;
  return g;
}

MathCmd math(MathOp op, HandleList in, Handle out) {
  MathCmd m;
  m.op = op, m.operands = std::move(in), m.out = out;
  return m;
}

std::vector<Command> single_op_commands(const Tensors& t) {
  return {DmaReadCmd{t.a, t.hbm},  DmaWriteCmd{t.hbm, t.a},      CopyCmd{t.d, t.c},
          Command(gemm(t, false)), Command(gemm(t, true)),       Command(math(MathOp::kAdd, {t.c, t.d}, t.d)),
          Command(math(MathOp::kExp, {t.c}, t.d)), Command(math(MathOp::kFill, {}, t.c)),
          SendCmd{t.c, 0},         RecvCmd{t.d, 0}};
}

// What check_initialised says, or "" when it passes.
std::string init_error(const Command& cmd, const TensorTable& t, InitTracker& init, const CommandTensors* found) {
  try {
    check_initialised(cmd, t, init, found);
  } catch (const KernelError& e) {
    return e.what();
  }
  return "";
}

TEST(CommandTensors, CheckCommandFindsWhatTheCommandReadsAndWrites) {
  Tensors t;
  for (Command cmd : single_op_commands(t)) {
    CommandTensors found;
    check_command(cmd, t.table, &found);
    ASSERT_TRUE(found.resolved) << command_type_name(cmd);
    const HandleAccess access = handle_access(cmd);
    // Reads and the write: handle_access's, in order (a Send writes nothing).
    ASSERT_EQ(size_t(found.nreads), access.reads.size()) << command_type_name(cmd);
    for (int i = 0; i < found.nreads; ++i) {
      EXPECT_EQ(found.reads[i].desc, &t.table.at(access.reads[size_t(i)])) << command_type_name(cmd);
    }
    ASSERT_EQ(found.writes, !access.writes.empty()) << command_type_name(cmd);
    if (found.writes) {
      EXPECT_EQ(found.write.desc, &t.table.at(access.writes[0])) << command_type_name(cmd);
    }
  }
}

TEST(CommandTensors, NotFilledForACompositeOrARefusedCommand) {
  Tensors t;
  CompositeCmd c;
  c.name = "one";
  OpSpec op;
  op.kind = "exp", op.scope = OpScope::kPrologue, op.operands = {{"src_a", t.c}}, op.has_out = true, op.out = t.d;
  c.ops = {op};
  Command comp(c);
  CommandTensors found;
  found.resolved = true;  // whatever it held before
  check_command(comp, t.table, &found);
  EXPECT_FALSE(found.resolved);
  Command bad(math(MathOp::kAdd, {t.c}, t.d));  // add takes 2
  EXPECT_THROW(check_command(bad, t.table, &found), KernelError);
  EXPECT_FALSE(found.resolved);
}

// With the tensors check_command found and by handle: the same errors in
// the same order, the same tensors marked.
TEST(CommandTensors, CheckInitialisedAgreesWithTheLookupPath) {
  Tensors t;
  const std::vector<Command> cmds = single_op_commands(t);
  // Each command in turn on an empty tracker, then after everything before
  // it ran: both paths say the same every time.
  InitTracker by_found, by_handle;
  for (size_t i = 0; i < cmds.size(); ++i) {
    Command cmd = cmds[i];
    CommandTensors found;
    check_command(cmd, t.table, &found);
    InitTracker fresh_found, fresh_handle;
    EXPECT_EQ(init_error(cmd, t.table, fresh_found, &found), init_error(cmd, t.table, fresh_handle, nullptr))
        << command_type_name(cmd);
    EXPECT_EQ(init_error(cmd, t.table, by_found, &found), init_error(cmd, t.table, by_handle, nullptr))
        << command_type_name(cmd);
    for (Handle h : {t.hbm, t.a, t.b, t.c, t.d}) {
      EXPECT_EQ(by_found.initialised(t.table.at(h)), by_handle.initialised(t.table.at(h)))
          << command_type_name(cmd) << " " << t.table.at(h).name;
    }
  }
  // The message names the slot and tensor: an accumulating GEMM reads out.
  Command acc(gemm(t, true));
  CommandTensors found;
  check_command(acc, t.table, &found);
  InitTracker init;
  init.mark(t.table.at(t.a));
  init.mark(t.table.at(t.b));
  EXPECT_EQ(init_error(acc, t.table, init, &found).rfind("GemmCmd: reads uninitialised out 'c' [16, 8]", 0), 0u)
      << init_error(acc, t.table, init, &found);
}

}  // namespace
}  // namespace kb
