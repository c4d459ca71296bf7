// PE_SCHEDULER's plan generation: turns an accepted command into stages with
// dependency edges. Costs no simulated time (ADR-0064 D5).
//
// Single-op command: one stage on its engine.
// CompositeCmd: a tile plan. Prologue ops run once before the tile loop and
// epilogue ops once after it, each as a standalone one-stage tile on its
// engine. The tile-scope GEMM op is cut into hardware tiles (pe.attrs.tile);
// per tile: DMA_READ for each operand block in HBM, FETCH (TCM -> engine),
// GEMM, and when the tile completes an output block (last K step): STORE
// (engine -> TCM), the tile-scope MATH ops on that block, and DMA_WRITE when
// the output lives in HBM. Double buffering: tile t's DMA_READ and FETCH
// reuse the buffers of tile t-2, so tile t+1's DMA overlaps tile t's GEMM.
#pragma once

#include <cstdint>
#include <vector>

#include "models/config/pe_config.h"
#include "models/pe/commands.h"
#include "models/pe/stage.h"
#include "models/pe/tensor_table.h"

namespace kb {

// Writes the stages of `cmd` to out[0, n) and returns n; elements past n
// are stale (kept so their vectors keep capacity). The command must have
// passed check_command().
size_t build_stages(uint64_t cmd_id, const Command& cmd, const TensorTable& table,
                    const PeConfig& cfg, std::vector<Stage>& out);

// Number of hardware tiles of a GEMM of m x n x k under `tile`.
uint64_t gemm_tile_count(const TileConfig& tile, int64_t m, int64_t n, int64_t k);

}  // namespace kb
