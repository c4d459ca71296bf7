// Data mode: the values the engines compute. Each engine calls
// execute_stage_data() when it is issued a stage (its inputs are final then,
// and nothing touches its outputs before it completes), so data follows the
// same tile plan and ordering as time. fp32 arithmetic throughout; results
// are rounded to the destination dtype when stored (bf16: nearest even).
//
// Composite stages: a tile GEMM accumulates its K slice into the output
// block's fp32 accumulator (initialised from the output when the op
// accumulates), STORE writes the block, tile math ops then work on that
// block, prologue/epilogue ops on whole tensors. DMA_READ, FETCH and
// DMA_WRITE move no values of their own: the GEMM reads its operand blocks
// where they live and STORE writes where the output lives, which gives the
// same values since the scoreboard keeps those tensors unchanged meanwhile.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "models/mem/backing_store.h"
#include "models/pe/commands.h"
#include "models/pe/stage.h"
#include "models/pe/tensor_table.h"

namespace kb {

// Per in-flight command: the command and its open output-block accumulators.
struct CommandData {
  Command cmd;
  std::map<std::pair<int64_t, int64_t>, std::vector<float>> accumulators;  // (m0, n0)
};

struct DataContext {
  BackingStore& mem;
  const TensorTable& table;
};

void execute_stage_data(const Stage& s, CommandData& d, DataContext& ctx);

// Host side (zero simulated time): fill with uniform values in [lo, hi) from
// a seeded generator, rounded to the tensor's dtype; read back as floats.
void host_fill_random(DataContext& ctx, const TensorDesc& t, uint64_t seed, double lo, double hi);
void host_write(DataContext& ctx, const TensorDesc& t, const std::vector<float>& values);
std::vector<float> host_read(const DataContext& ctx, const TensorDesc& t);

}  // namespace kb
