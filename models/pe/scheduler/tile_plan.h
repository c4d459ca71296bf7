// PE_SCHEDULER's plan generation: turns an accepted command into stages with
// dependency edges. Costs no simulated time (docs/cost-model.md D5).
//
// Single-op command: one stage on its engine.
// CompositeCmd: a tile plan. Prologue ops run once before the tile loop and
// epilogue ops once after it, each as a standalone one-stage tile on its
// engine. The tile-scope GEMM op is cut into hardware tiles (pe.attrs.tile);
// per tile: DMA_READ for each operand block in HBM (and, on the first K
// step of an accumulating GEMM whose output lives in HBM, of the output block
// it adds onto), FETCH (TCM -> engine), GEMM, and when the tile completes an
// output block (last K step): STORE (engine -> TCM), the tile-scope MATH ops
// on that block, and DMA_WRITE when the output lives in HBM. Double
// buffering: tile t's DMA_READ and FETCH reuse the buffers of tile t-2, so
// tile t+1's DMA overlaps tile t's GEMM.
//
// Lazy: the plan is a cursor, not a list. Every stage of tile t
// depends, directly or through tile t's FETCH, on tile t-2's FETCH, so tile
// t is produced when the FETCH of a tile >= t-2 completes: no stage is
// produced later than it could become ready, and the stages in memory are
// those of the last few tiles plus output blocks still draining, whatever
// the tile count. Stages come out in the same order, with the same edges
// and positions (Stage::seq), as a plan built whole, so op logs are the
// same. Tile arithmetic is unsigned and checked: any tile size terminates.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "models/config/pe_config.h"
#include "models/isa/commands.h"
#include "models/pe/stage/stage.h"
#include "models/isa/tensor_table.h"

namespace kb {

class TilePlan {
 public:
  // Starts the plan of command `cmd_id` (which must have passed
  // check_command()): the stages that can run first are produced. What the
  // plan needs of `cmd` and `table` is copied; `cfg` must outlive the plan.
  // Reuses the storage of the previous plan (no heap allocation once warm).
  void start(uint64_t cmd_id, const Command& cmd, const TensorTable& table, const PeConfig& cfg);
  // Takes a produced stage whose predecessors have all completed; false
  // when there is none. A stage is taken once, in the order a plan built
  // whole would make it ready: roots by position, then per completion the
  // completed stage's dependents in the order their edges were added. The
  // scheduler notifies engines in this order, which orders same-time events
  // and so op-log records.
  bool pop_ready(uint32_t* slot) {
    if (ready_head_ == ready_.size()) {
      ready_.clear();
      ready_head_ = 0;
      return false;
    }
    *slot = ready_[ready_head_++];
    return true;
  }
  const Stage& stage(uint32_t slot) const { return slots_[slot]; }
  // A taken stage finished: its dependents may become ready, later tiles
  // may be produced. The slot is reused afterwards.
  void complete(uint32_t slot);
  // Every stage produced and completed.
  bool done() const { return live_ == 0 && !loop_.active && epilogue_done_; }
  // Produced and not yet completed (for tests: bounded, whatever the plan).
  size_t live_stages() const { return live_; }
  uint64_t produced() const { return next_seq_; }

 private:
  static constexpr uint32_t kNoSlot = UINT32_MAX;
  static constexpr uint64_t kFreeSeq = UINT64_MAX;
  // A produced stage; it has completed once its slot holds another seq.
  struct Ref {
    uint32_t slot = kNoSlot;
    uint64_t seq = 0;
  };
  // Inlined: every stage of every plan comes through it.
  [[gnu::always_inline]] inline Ref add(RecordKind kind, Engine engine, int64_t tile);
  Stage& at(Ref r) { return slots_[r.slot]; }
  bool completed(Ref r) const { return r.slot == kNoSlot || slots_[r.slot].seq != r.seq; }
  void edge(Ref from, Ref to);
  void seal_unit();  // the stages produced since the last call with no pending edge are ready
  void block(Ref r, int32_t index, uint64_t m0, uint64_t n0, uint64_t k0, uint64_t rows,
             uint64_t cols, uint64_t depth);
  Ref emit(const Stage& work);  // a copy of a prepared standalone stage
  void composite(const CompositeCmd& c, const TensorTable& table);
  void next_tile();
  void emit_epilogue();

  const PeConfig* cfg_ = nullptr;
  uint64_t id_ = 0;
  const char* type_ = "";
  std::vector<Stage> slots_;       // produced stages, by slot; free ones have seq kFreeSeq
  std::vector<uint32_t> free_;     // free slots
  std::vector<uint32_t> unit_;     // slots produced since the last seal_unit()
  std::vector<uint32_t> ready_;    // ready, [ready_head_, end) not yet taken
  size_t ready_head_ = 0;
  uint64_t next_seq_ = 0;
  size_t live_ = 0;
  Ref last_prologue_;
  // Epilogue stages, prepared at start and produced once the tile loop
  // drains (each waits for every output block).
  std::vector<Stage> epilogue_;
  bool epilogue_done_ = true;
  uint64_t tile_live_ = 0;  // produced tile-loop stages not yet complete
  // Tile-scope math ops: they repeat on every output block.
  struct TileMath {
    int32_t index;
    MathOp op;
  };
  std::vector<TileMath> tile_math_;
  std::vector<TypedOp> scratch_ops_;  // a composite that was not dispatched (typed_ops)
  // The tile loop's cursor: output blocks (mi, ni), K innermost so the
  // accumulator stays in the array across K steps.
  struct Loop {
    bool active = false;  // tiles left to produce
    uint64_t m = 0, n = 0, k = 0;     // GEMM shape
    uint64_t tm = 1, tn = 1, tk = 1;  // tile, at most the shape
    uint64_t mi = 0, ni = 0, ki = 0;  // the next tile's origin
    uint64_t t = 0;                   // the next tile's index
    uint32_t a_el = 0, b_el = 0, o_el = 0;  // bytes per element
    bool a_hbm = false, b_hbm = false, o_hbm = false;
    // Where each operand lives (copied: a view's descriptor may be reused
    // before the loop ends), for the DMA stages' byte patterns.
    struct At {
      uint64_t address = 0, row_stride = 0;
    } a_at, b_at, o_at;
    bool transpose_b = false;
    bool accumulate = false;
    int32_t gemm_index = -1;
    Ref fetch[2], gemm[2];  // of tiles t-2 and t-1, by t % 2
    Ref last_gemm;
  } loop_;
};

// Number of hardware tiles of a GEMM of m x n x k under `tile`; nullopt when
// it does not fit in 64 bits. A tile size of 0 counts as 1.
std::optional<uint64_t> gemm_tile_count(const TileConfig& tile, uint64_t m, uint64_t n,
                                        uint64_t k);

}  // namespace kb
