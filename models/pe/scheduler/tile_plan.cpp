#include "models/pe/scheduler/tile_plan.h"

#include <algorithm>
#include <array>

#include "models/util/checked.h"
#include "models/util/overloaded.h"

namespace kb {

namespace {

// Sizes of one tile or tensor, in elements or bytes. They fit in 64 bits
// for any tensor that passed validation (its bytes do); saturating keeps a
// wrapped figure out of the plan whatever it is given.
uint64_t sat_mul(uint64_t a, uint64_t b) { return checked_mul(a, b).value_or(UINT64_MAX); }
uint64_t sat_add(uint64_t a, uint64_t b) { return checked_add(a, b).value_or(UINT64_MAX); }
uint64_t dim(int64_t x) { return x > 0 ? uint64_t(x) : 0; }
uint64_t elements_of(const TensorDesc& d) { return sat_mul(dim(d.rows), dim(d.cols)); }
uint64_t bytes_of(const TensorDesc& d) { return sat_mul(elements_of(d), dtype_bytes(d.dtype)); }

// The work a stage describes (everything but its identity and edges).
void copy_work(const Stage& from, Stage& to) {
  to.bytes = from.bytes;
  to.elements = from.elements;
  to.m = from.m;
  to.n = from.n;
  to.k = from.k;
  to.fetch_bytes = from.fetch_bytes;
  to.store_bytes = from.store_bytes;
  to.op = from.op;
  to.row_len = from.row_len;
  to.tcm_only = from.tcm_only;
  to.src = from.src;
  to.dst = from.dst;
  to.role = from.role;
  to.op_index = from.op_index;
  to.m0 = from.m0;
  to.n0 = from.n0;
  to.k0 = from.k0;
}

// rows [r0, r0 + nr) x cols [c0, c0 + nc) of a tensor as bytes (a validated
// tensor's block: nothing wraps).
BytePattern block_pattern(uint64_t address, uint64_t row_stride, uint64_t el, uint64_t r0,
                          uint64_t nr, uint64_t c0, uint64_t nc) {
  BytePattern p;
  p.address = address + (r0 * row_stride + c0) * el;
  p.run_bytes = nc * el;
  p.pitch = row_stride * el;
  p.runs = nr;
  return p;
}

BytePattern tensor_pattern(const TensorDesc& d) {
  return block_pattern(d.address, dim(d.row_stride), dtype_bytes(d.dtype), 0, dim(d.rows), 0,
                       dim(d.cols));
}

// The work of a single stage over whole tensors (tile -1), written into a
// stage that add() gave its kind and engine (or a prepared one).
void transfer_work(Stage& w, const TensorDesc& d, const TensorDesc& s) {
  w.bytes = bytes_of(s);
  w.elements = elements_of(s);
  w.tcm_only = d.space == MemSpace::kTcm && s.space == MemSpace::kTcm;
  w.src = tensor_pattern(s);
  w.dst = tensor_pattern(d);
}

void gemm_work(Stage& w, int64_t m, int64_t n, int64_t k) {
  w.m = m;
  w.n = n;
  w.k = k;
  w.elements = sat_mul(dim(m), dim(n));
}

// math_op_is_reduction() of every op, looked up once: every MATH stage
// asks.
const std::array<bool, kNumMathOps> kReduction = [] {
  std::array<bool, kNumMathOps> r{};
  for (int i = 0; i < kNumMathOps; ++i) r[size_t(i)] = math_op_is_reduction(MathOp(i));
  return r;
}();

void math_work(Stage& w, MathOp op, const Handle* operands, Handle out, const TensorTable& table) {
  w.op = op;
  if (kReduction[size_t(op)]) {  // elements reduced: the input's (arity 1)
    const TensorDesc& src = table.at(operands[0]);
    w.elements = elements_of(src);
    w.row_len = src.cols;
  } else {
    w.elements = elements_of(table.at(out));
  }
}

// A prologue or epilogue op: one standalone stage on its engine.
Stage standalone_work(const TypedOp& op, int32_t index, const TensorTable& table) {
  Stage w;
  switch (op.kind) {
    case OpKind::kGemm: {
      const TensorDesc& a = table.at(op.a());
      const TensorDesc& o = table.at(op.out);
      w.kind = RecordKind::kGemm;
      w.engine = Engine::kGemm;
      gemm_work(w, o.rows, o.cols, a.cols);
      break;
    }
    case OpKind::kMath:
      w.kind = RecordKind::kMath;
      w.engine = Engine::kMath;
      math_work(w, op.math, op.in, op.out, table);
      break;
  }
  w.op_index = index;
  return w;
}

}  // namespace

std::optional<uint64_t> gemm_tile_count(const TileConfig& tile, uint64_t m, uint64_t n,
                                        uint64_t k) {
  // ceil(x / t) without x + t - 1, which wraps for large t.
  auto tiles = [](uint64_t x, uint64_t t) {
    t = std::max<uint64_t>(t, 1);
    return x / t + (x % t != 0);
  };
  return checked_product({tiles(m, tile.m), tiles(n, tile.n), tiles(k, tile.k)});
}

inline TilePlan::Ref TilePlan::add(RecordKind kind, Engine engine, int64_t tile) {
  uint32_t slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else {
    slot = uint32_t(slots_.size());
    slots_.emplace_back();
  }
  // Reused in place: the edge list keeps its capacity, so a warm plan
  // produces stages without heap allocation.
  Stage& s = slots_[slot];
  static_cast<StageWork&>(s) = StageWork{};
  s.dependents.clear();
  s.pending = 0;
  s.cmd_id = id_;
  s.cmd_type = type_;
  s.kind = kind;
  s.engine = engine;
  s.tile = tile;
  s.seq = next_seq_++;
  ++live_;
  if (tile >= 0) ++tile_live_;
  unit_.push_back(slot);
  return {slot, s.seq};
}

void TilePlan::edge(Ref from, Ref to) {
  if (completed(from)) return;  // already done: nothing to wait for
  at(from).dependents.push_back(to.slot);
  ++at(to).pending;
}

void TilePlan::seal_unit() {
  for (uint32_t slot : unit_)
    if (slots_[slot].pending == 0) ready_.push_back(slot);
  unit_.clear();
}

void TilePlan::block(Ref r, int32_t index, uint64_t m0, uint64_t n0, uint64_t k0, uint64_t rows,
                     uint64_t cols, uint64_t depth) {
  // Every figure is at most a GEMM dimension, itself an int64_t.
  Stage& s = at(r);
  s.op_index = index;
  s.m0 = int64_t(m0);
  s.n0 = int64_t(n0);
  s.k0 = int64_t(k0);
  s.m = int64_t(rows);
  s.n = int64_t(cols);
  s.k = int64_t(depth);
}

TilePlan::Ref TilePlan::emit(const Stage& work) {
  const Ref r = add(work.kind, work.engine, -1);
  copy_work(work, at(r));
  return r;
}

void TilePlan::start(uint64_t cmd_id, const Command& cmd, const TensorTable& table,
                     const PeConfig& cfg) {
  cfg_ = &cfg;
  id_ = cmd_id;
  type_ = command_type_name(cmd);
  if (live_ != 0 || ready_head_ != ready_.size() || !unit_.empty()) {  // the last plan did not finish
    free_.clear();
    for (uint32_t i = 0; i < slots_.size(); ++i) {
      slots_[i].seq = kFreeSeq;
      free_.push_back(uint32_t(i));
    }
    unit_.clear();
    ready_.clear();
    ready_head_ = 0;
  }  // else every slot is free already (complete() freed it)
  next_seq_ = 0;
  live_ = 0;
  tile_live_ = 0;
  epilogue_done_ = true;
  loop_.active = false;  // the rest of the composite state is set by composite()
  // Single-op commands: one stage, filled in place.
  std::visit(
      overloaded{
          [&](const DmaReadCmd& rd) {
            transfer_work(at(add(RecordKind::kDmaRead, Engine::kDma, -1)), table.at(rd.dst),
                          table.at(rd.src));
          },
          [&](const DmaWriteCmd& wr) {
            transfer_work(at(add(RecordKind::kDmaWrite, Engine::kDma, -1)), table.at(wr.dst),
                          table.at(wr.src));
          },
          [&](const CopyCmd& cp) {
            transfer_work(at(add(RecordKind::kCopy, Engine::kDma, -1)), table.at(cp.dst),
                          table.at(cp.src));
          },
          [&](const GemmCmd& g) {
            Stage& w = at(add(RecordKind::kGemm, Engine::kGemm, -1));
            gemm_work(w, g.m, g.n, g.k);
            const uint64_t out = bytes_of(table.at(g.out));
            w.fetch_bytes = sat_add(sat_add(bytes_of(table.at(g.a)), bytes_of(table.at(g.b))),
                                    g.accumulate ? out : 0);
            w.store_bytes = out;
          },
          [&](const MathCmd& mc) {
            math_work(at(add(RecordKind::kMath, Engine::kMath, -1)), mc.op, mc.operands.data(),
                      mc.out, table);
          },
          [&](const CompositeCmd& comp) { composite(comp, table); },
          // PE_CPU spends tl.cycles itself and never queues it (docs/cost-model.md D5).
          [](const CpuOverheadCmd&) {},
          // SEND and RECV: one PE_IPC stage each (models/pe/ipc/pe_ipc.h).
          [&](const SendCmd& sd) {
            Stage& w = at(add(RecordKind::kSend, Engine::kIpc, -1));
            const TensorDesc& src = table.at(sd.src);
            w.bytes = bytes_of(src);
            w.elements = elements_of(src);
            w.src = tensor_pattern(src);
            w.peer = sd.dst;
          },
          [&](const RecvCmd& rv) {
            Stage& w = at(add(RecordKind::kRecv, Engine::kIpc, -1));
            const TensorDesc& dst = table.at(rv.dst);
            w.bytes = bytes_of(dst);
            w.elements = elements_of(dst);
            w.dst = tensor_pattern(dst);
            w.peer = rv.src;
          }},
      cmd);
  if (unit_.size() == 1 && !std::holds_alternative<CompositeCmd>(cmd)) {
    ready_.push_back(unit_[0]);  // a single-op command's one stage waits for nothing
    unit_.clear();
    return;
  }
  seal_unit();
}

void TilePlan::composite(const CompositeCmd& c, const TensorTable& table) {
  last_prologue_ = Ref{};
  epilogue_.clear();
  tile_math_.clear();
  loop_ = Loop{};
  const std::vector<TypedOp>& ops = typed_ops(c, scratch_ops_);
  // Prologue: standalone stages in program order, one after another.
  const TypedOp* tile_gemm = nullptr;
  for (size_t i = 0; i < ops.size(); ++i) {
    const TypedOp& op = ops[i];
    switch (op.scope) {
      case OpScope::kPrologue: {
        const Ref s = emit(standalone_work(op, int32_t(i), table));
        edge(last_prologue_, s);
        last_prologue_ = s;
        break;
      }
      case OpScope::kTile:
        if (op.is_gemm()) {
          tile_gemm = &op;
          loop_.gemm_index = int32_t(i);
        } else {
          tile_math_.push_back({int32_t(i), op.math});
        }
        break;
      case OpScope::kEpilogue: epilogue_.push_back(standalone_work(op, int32_t(i), table)); break;
    }
  }
  epilogue_done_ = false;
  if (tile_gemm) {
    const TensorDesc& a = table.at(tile_gemm->a());
    const TensorDesc& b = table.at(tile_gemm->b());
    const TensorDesc& o = table.at(tile_gemm->out);
    Loop& l = loop_;
    l.m = dim(o.rows);
    l.n = dim(o.cols);
    l.k = dim(a.cols);
    l.active = l.m > 0 && l.n > 0 && l.k > 0;
    // Configuration rejects a zero tile; 1 keeps the loop finite regardless.
    // A tile larger than the GEMM is the GEMM: the same plan, and no sum
    // below can wrap.
    l.tm = std::clamp<uint64_t>(cfg_->tile.m, 1, std::max<uint64_t>(l.m, 1));
    l.tn = std::clamp<uint64_t>(cfg_->tile.n, 1, std::max<uint64_t>(l.n, 1));
    l.tk = std::clamp<uint64_t>(cfg_->tile.k, 1, std::max<uint64_t>(l.k, 1));
    l.a_el = dtype_bytes(a.dtype);
    l.b_el = dtype_bytes(b.dtype);
    l.o_el = dtype_bytes(o.dtype);
    l.a_at = {a.address, dim(a.row_stride)};
    l.b_at = {b.address, dim(b.row_stride)};
    l.o_at = {o.address, dim(o.row_stride)};
    l.transpose_b = tile_gemm->gemm.transpose_b;
    l.a_hbm = a.space == MemSpace::kHbm;
    l.b_hbm = b.space == MemSpace::kHbm;
    l.o_hbm = o.space == MemSpace::kHbm;
    l.accumulate = tile_gemm->gemm.accumulate;
    // Tiles 0 and 1 wait for no earlier FETCH.
    for (int i = 0; i < 2 && l.active; ++i) next_tile();
  }
  if (tile_live_ == 0) emit_epilogue();  // no tile loop; else once it drains (complete())
}

void TilePlan::next_tile() {
  Loop& l = loop_;
  const uint64_t t = l.t;
  const int64_t tile = int64_t(std::min<uint64_t>(t, INT64_MAX));
  // mi < m, so m - mi > 0 and mi + rows <= m: nothing below wraps.
  const uint64_t rows = std::min(l.tm, l.m - l.mi);
  const uint64_t cols = std::min(l.tn, l.n - l.ni);
  const uint64_t kk = std::min(l.tk, l.k - l.ki);
  const uint64_t a_block = sat_mul(sat_mul(rows, kk), l.a_el);
  const uint64_t b_block = sat_mul(sat_mul(kk, cols), l.b_el);
  const uint64_t o_block = sat_mul(sat_mul(rows, cols), l.o_el);
  const bool read_out = l.accumulate && l.ki == 0;  // the old value is accumulated onto
  const Ref fetch = add(RecordKind::kFetch, Engine::kTcm, tile);
  at(fetch).bytes = sat_add(sat_add(a_block, b_block), read_out ? o_block : 0);
  // Tile t-2's FETCH and GEMM: the buffers this tile reuses (none for t < 2).
  const Ref old_fetch = l.fetch[t % 2], old_gemm = l.gemm[t % 2];
  auto dma_read = [&](uint64_t bytes, uint32_t element_bytes, char role, const BytePattern& from) {
    const Ref rd = add(RecordKind::kDmaRead, Engine::kDma, tile);
    at(rd).bytes = bytes;
    at(rd).elements = bytes / element_bytes;
    at(rd).src = from;
    at(rd).role = role;  // dst: the staging buffer
    edge(old_fetch, rd);  // TCM buffer reuse
    edge(rd, fetch);
  };
  if (l.a_hbm) dma_read(a_block, l.a_el, 'a', block_pattern(l.a_at.address, l.a_at.row_stride, l.a_el, l.mi, rows, l.ki, kk));
  if (l.b_hbm) {
    dma_read(b_block, l.b_el, 'b',
             l.transpose_b ? block_pattern(l.b_at.address, l.b_at.row_stride, l.b_el, l.ni, cols, l.ki, kk)
                           : block_pattern(l.b_at.address, l.b_at.row_stride, l.b_el, l.ki, kk, l.ni, cols));
  }
  // An accumulating GEMM adds onto the output's old value: from HBM it
  // comes in like an operand block, before the first K step.
  if (read_out && l.o_hbm) dma_read(o_block, l.o_el, 'o', block_pattern(l.o_at.address, l.o_at.row_stride, l.o_el, l.mi, rows, l.ni, cols));
  edge(last_prologue_, fetch);
  edge(old_gemm, fetch);  // operand buffer reuse
  const Ref g = add(RecordKind::kGemm, Engine::kGemm, tile);
  at(g).elements = sat_mul(rows, cols);
  block(g, l.gemm_index, l.mi, l.ni, l.ki, rows, cols, kk);
  edge(fetch, g);
  edge(l.last_gemm, g);  // accumulation order
  l.fetch[t % 2] = fetch;
  l.gemm[t % 2] = g;
  l.last_gemm = g;
  const bool last_k = kk == l.k - l.ki;
  if (last_k) {  // output block complete: STORE, tile-scope math, DMA_WRITE
    Ref prev = add(RecordKind::kStore, Engine::kTcm, tile);
    at(prev).bytes = o_block;
    if (l.o_hbm) at(prev).role = 'w';  // to staging, for the DMA_WRITE
    block(prev, l.gemm_index, l.mi, l.ni, l.ki, rows, cols, kk);
    edge(g, prev);
    for (const TileMath& tm : tile_math_) {
      const Ref s = add(RecordKind::kMath, Engine::kMath, tile);
      at(s).op = tm.op;
      at(s).elements = sat_mul(rows, cols);
      block(s, tm.index, l.mi, l.ni, 0, rows, cols, 0);
      edge(prev, s);
      prev = s;
    }
    if (l.o_hbm) {
      const Ref wr = add(RecordKind::kDmaWrite, Engine::kDma, tile);
      at(wr).bytes = o_block;
      at(wr).elements = sat_mul(rows, cols);
      at(wr).role = 'w';  // src: the staging buffer
      at(wr).dst = block_pattern(l.o_at.address, l.o_at.row_stride, l.o_el, l.mi, rows, l.ni, cols);
      edge(prev, wr);
    }
  }
  // Advance: K innermost, then N, then M.
  ++l.t;
  if (!last_k) {
    l.ki += kk;
    return;
  }
  l.ki = 0;
  l.ni += cols;
  if (l.ni < l.n) return;
  l.ni = 0;
  l.mi += rows;
  if (l.mi < l.m) return;
  l.active = false;
}

void TilePlan::emit_epilogue() {
  // Each epilogue op after the one before; the first after every output
  // block (it is produced once they all completed) or after the prologue.
  Ref prev = last_prologue_;  // completed already when there was a tile loop
  for (const Stage& w : epilogue_) {
    const Ref s = emit(w);
    edge(prev, s);
    prev = s;
  }
  epilogue_done_ = true;
}

void TilePlan::complete(uint32_t slot) {
  Stage& s = slots_[slot];
  for (uint32_t d : s.dependents) {
    if (--slots_[d].pending == 0) ready_.push_back(d);
  }
  const bool fetch = s.kind == RecordKind::kFetch;
  const int64_t tile = s.tile;
  s.seq = kFreeSeq;  // every Ref to it now reads as completed
  free_.push_back(slot);
  --live_;
  if (tile >= 0) {
    --tile_live_;
    // Tile t's stages all wait for tile t-2's FETCH: produce up to t + 2.
    if (fetch) {
      const uint64_t upto = sat_add(uint64_t(tile), 2);
      while (loop_.active && loop_.t <= upto) next_tile();
    }
    // Every tile-loop stage leads to an output block's last stage, so the
    // epilogue (which waits for every block) is ready when none is left.
    if (!loop_.active && tile_live_ == 0 && !epilogue_done_) emit_epilogue();
  }
  if (!unit_.empty()) seal_unit();  // a single-op command produces nothing here
}

}  // namespace kb
