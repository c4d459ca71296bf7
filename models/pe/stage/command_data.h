// Data mode: the state of one in-flight command that its stages share, and
// what an engine computes with. Each engine computes its values when it is
// issued a stage (StageEngine::compute; its inputs are final then, and
// nothing touches its outputs before it completes), so data follows the
// same tile plan and ordering as time. fp32 arithmetic throughout; results
// are rounded to the destination dtype when stored (bf16: nearest even).
// Values travel through the engines' `data` sockets (data_port.h): no
// module reaches into another's storage.
//
// Composite stages: a tile GEMM accumulates its K slice into the output
// block's fp32 accumulator (initialised from the output when the op
// accumulates), STORE writes the block, tile math ops then work on that
// block, prologue/epilogue ops on whole tensors. Blocks of tensors in HBM
// are staged: a DMA_READ brings an operand block in through PE_DMA's `mem`
// socket and leaves it in the command's staging buffer, where its tile's
// GEMM takes it; a STORE of an output block in HBM leaves it there for its
// DMA_WRITE. The staging buffers stand for the plan's double-buffered TCM
// tile buffers (the plan gives them no TCM addresses). FETCH moves no values.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "models/isa/commands.h"

namespace kb {

// Engines compute typed ops, never a Command (docs/conventions.md 13): the
// command's ops are decoded once, when its data state is made.
struct CommandData {
  // A composite's ops (decoded at dispatch), or a single-op GEMM's or
  // MATH command's one op (single_op); empty for every other command.
  std::vector<TypedOp> ops;
  bool single = false;
  std::map<std::pair<int64_t, int64_t>, std::vector<float>> accumulators;  // (m0, n0)
  std::map<std::pair<char, int64_t>, std::vector<uint8_t>> staging;        // (Stage::role, tile)

  explicit CommandData(const Command& cmd) {
    if (const auto* c = std::get_if<CompositeCmd>(&cmd)) {
      ops = c->typed;
    } else if (TypedOp op; single_op(cmd, &op)) {
      ops.push_back(op);
      single = true;
    }
  }
  // The op a stage computes: the command's own for a single-op command's
  // stage (op_index -1), a composite's op_index-th; null for none.
  const TypedOp* op(int32_t op_index) const {
    if (op_index < 0) return single ? &ops[0] : nullptr;
    return &ops.at(size_t(op_index));
  }
};

}  // namespace kb
