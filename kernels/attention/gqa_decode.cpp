#include "kernels/attention/gqa_decode.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "kernels/recipes/softmax_merge.h"

namespace kb {

namespace {

// Everything both variants share: HBM tensors, per-group TCM state and
// scratch, the per-head prologue/epilogue and the per-tile dispatch figures.
class GqaDecode {
 public:
  // kept == nullptr: each head's state is finalised (O / l stored) after
  // its tiles; else it stays in *kept (gqa_partial_opt2).
  GqaDecode(Tl& tl, const GqaShape& s, const GqaTensors& in, const GqaStateBuffers* kept = nullptr)
      : tl_(tl), s_(s), g_(s.q_heads / s.kv_heads), q_(in.q), k_(in.k), v_(in.v), out_(in.out), kept_(kept) {
    const int64_t d = s.head_dim, T = s.kv_tile;
    q_g_ = tl.tcm("q_g", g_, d, s.dtype);
    scores_ = tl.tcm("S", g_, T, Dtype::kFp32);
    if (!kept_) {
      m_[0] = tl.tcm("m0", g_, 1, Dtype::kFp32);
      m_[1] = tl.tcm("m1", g_, 1, Dtype::kFp32);
      l_ = tl.tcm("l", g_, 1, Dtype::kFp32);
      o_ = tl.tcm("O", g_, d, Dtype::kFp32);
    }
    scratch_ = {tl.tcm("m_tile", g_, 1, Dtype::kFp32), tl.tcm("corr", g_, 1, Dtype::kFp32),
                tl.tcm("P", g_, T, Dtype::kFp32), tl.tcm("row_sum", g_, 1, Dtype::kFp32)};
  }

  const GqaShape& shape() const { return s_; }
  double scale() const { return 1.0 / std::sqrt(double(s_.head_dim)); }
  Tensor tcm(const std::string& name, int64_t rows, int64_t cols, Dtype d) {
    return tl_.tcm(name, rows, cols, d);
  }

  // One KV tile: its K and V rows in HBM and the views of S and P it fills.
  struct Tile {
    int64_t index, rows;
    Tensor k, v, s;
    SoftmaxMergeState state;
    SoftmaxMergeScratch scratch;
  };

  // Runs every head group; `tile_body` emits one tile's commands.
  void run(const std::function<void(const Tile&)>& tile_body) {
    DispatchTotals in_tiles;
    int64_t tiles = 0;
    for (int64_t h = 0; h < s_.kv_heads; ++h) {
      if (kept_) {  // this head's rows of the kept state
        m_[0] = tl_.rows(kept_->m[0], h * g_, g_);
        m_[1] = tl_.rows(kept_->m[1], h * g_, g_);
        l_ = tl_.rows(kept_->l, h * g_, g_);
        o_ = tl_.rows(kept_->o, h * g_, g_);
      }
      tl_.load(q_g_, tl_.rows(q_, h * g_, g_));
      tl_.fill(m_[0], -std::numeric_limits<double>::infinity());
      tl_.fill(l_, 0.0);
      tl_.fill(o_, 0.0);
      const DispatchTotals before = tl_.dispatch_totals();
      int64_t t = 0;
      for (int64_t pos = 0; pos < s_.context; pos += s_.kv_tile, ++t) {
        Tile tile;
        tile.index = t;
        tile.rows = std::min(s_.kv_tile, s_.context - pos);  // tail tile
        const int64_t row0 = h * s_.context + pos;
        tile.k = tl_.rows(k_, row0, tile.rows);
        tile.v = tl_.rows(v_, row0, tile.rows);
        tile.s = tl_.view(scores_, 0, g_, 0, tile.rows);
        // m ping-pongs: corr = exp(m - m') still needs the old max.
        tile.state = {m_[t % 2], m_[(t + 1) % 2], l_, o_};
        tile.scratch = scratch_;
        tile.scratch.p = tl_.view(scratch_.p, 0, g_, 0, tile.rows);
        tile_body(tile);
      }
      const DispatchTotals after = tl_.dispatch_totals();
      in_tiles.commands += after.commands - before.commands;
      in_tiles.logical_bytes += after.logical_bytes - before.logical_bytes;
      in_tiles.cycles_exact += after.cycles_exact - before.cycles_exact;
      in_tiles.cycles_charged += after.cycles_charged - before.cycles_charged;
      in_tiles.dispatch_ps += after.dispatch_ps - before.dispatch_ps;
      tiles += t;
      if (kept_) continue;
      // O / l, then write the group's rows out. m ended in m_[t % 2].
      tl_.div_bcast(o_, o_, l_);
      tl_.store(tl_.rows(out_, h * g_, g_), o_);
    }
    const double n = double(std::max<int64_t>(tiles, 1));
    tl_.metric("tiles", double(tiles));
    tl_.metric("tile_commands", double(in_tiles.commands) / n);
    tl_.metric("tile_logical_bytes", double(in_tiles.logical_bytes) / n);
    tl_.metric("tile_dispatch_cycles_exact", in_tiles.cycles_exact / n);
    tl_.metric("tile_dispatch_cycles_charged", double(in_tiles.cycles_charged) / n);
    tl_.metric("tile_dispatch_ns", double(in_tiles.dispatch_ps) / 1000.0 / n);
  }

  const Tensor& q_g() const { return q_g_; }

 private:
  Tl& tl_;
  GqaShape s_;
  int64_t g_;
  Tensor q_, k_, v_, out_;
  const GqaStateBuffers* kept_;
  Tensor q_g_, scores_, m_[2], l_, o_;
  SoftmaxMergeScratch scratch_;
};



}  // namespace

GqaTensors gqa_inputs(Tl& tl, const GqaShape& s, uint64_t seed) {
  if (s.q_heads % s.kv_heads != 0) {
    throw KernelError("gqa decode: q_heads " + std::to_string(s.q_heads) +
                      " is not a multiple of kv_heads " + std::to_string(s.kv_heads));
  }
  GqaTensors t{tl.hbm("Q", s.q_heads, s.head_dim, s.dtype),
               tl.hbm("K", s.kv_heads * s.context, s.head_dim, s.dtype),
               tl.hbm("V", s.kv_heads * s.context, s.head_dim, s.dtype),
               tl.hbm("O_out", s.q_heads, s.head_dim, Dtype::kFp32)};
  tl.host_random(t.q, seed, -s.input_range, s.input_range);
  tl.host_random(t.k, seed + 1, -s.input_range, s.input_range);
  tl.host_random(t.v, seed + 2, -s.input_range, s.input_range);
  return t;
}

void gqa_decode_opt3(Tl& tl, const GqaShape& s) { gqa_decode_opt3(tl, s, gqa_inputs(tl, s)); }
void gqa_decode_opt2(Tl& tl, const GqaShape& s) { gqa_decode_opt2(tl, s, gqa_inputs(tl, s)); }

void gqa_decode_opt3(Tl& tl, const GqaShape& shape, const GqaTensors& in) {
  GqaDecode d(tl, shape, in);
  const int64_t g = shape.q_heads / shape.kv_heads;
  // Double-buffered K and V tiles, and the P @ V partial.
  const Tensor k_buf[2] = {d.tcm("k_tile0", shape.kv_tile, shape.head_dim, shape.dtype),
                           d.tcm("k_tile1", shape.kv_tile, shape.head_dim, shape.dtype)};
  const Tensor v_buf[2] = {d.tcm("v_tile0", shape.kv_tile, shape.head_dim, shape.dtype),
                           d.tcm("v_tile1", shape.kv_tile, shape.head_dim, shape.dtype)};
  const Tensor pv = d.tcm("PV", g, shape.head_dim, Dtype::kFp32);
  d.run([&](const GqaDecode::Tile& t) {
    const Tensor kt = tl.rows(k_buf[t.index % 2], 0, t.rows);
    const Tensor vt = tl.rows(v_buf[t.index % 2], 0, t.rows);
    tl.load(kt, t.k);
    tl.dot(t.s, d.q_g(), kt, {/*transpose_b=*/true, /*accumulate=*/false});
    tl.scale(t.s, t.s, d.scale());
    // The recipe's steps, each as its own MathCmd.
    for (const MergeStep& m : softmax_merge_steps(t.s, t.state, t.scratch)) {
      if (m.binary) tl.math(m.op, m.out, {m.a, m.b});
      else tl.math(m.op, m.out, {m.a});
    }
    tl.load(vt, t.v);
    tl.dot(pv, t.scratch.p, vt);
    tl.add(t.state.o, t.state.o, pv);
  });
}

namespace {

// opt2's tile body: #1 S = (Q K^T) * scale, #2 the online-softmax update.
void opt2_tiles(Tl& tl, GqaDecode& d) {
  d.run([&](const GqaDecode::Tile& t) {
    // #1: S = (Q K^T) * scale; the scheduler streams K from HBM.
    tl.composite("qk",
                 {typed_gemm_op(OpScope::kTile, t.s, d.q_g(), t.k, {/*transpose_b=*/true}),
                  typed_math_op(MathOp::kScale, OpScope::kTile, t.s, {t.s}, d.scale())},
                 {t.s});
    // #2: the online-softmax update with V streamed inside its GEMM tile loop.
    softmax_merge(tl, t.s, t.v, t.state, t.scratch);
  });
}

}  // namespace

void gqa_decode_opt2(Tl& tl, const GqaShape& shape, const GqaTensors& in) {
  GqaDecode d(tl, shape, in);
  opt2_tiles(tl, d);
}

GqaStateBuffers gqa_state_buffers(Tl& tl, const GqaShape& s, const std::string& prefix) {
  GqaStateBuffers b;
  b.m[0] = tl.tcm(prefix + "m0", s.q_heads, 1, Dtype::kFp32);
  b.m[1] = tl.tcm(prefix + "m1", s.q_heads, 1, Dtype::kFp32);
  b.l = tl.tcm(prefix + "l", s.q_heads, 1, Dtype::kFp32);
  b.o = tl.tcm(prefix + "O", s.q_heads, s.head_dim, Dtype::kFp32);
  return b;
}

int gqa_final_max_index(const GqaShape& s) {
  const int64_t tiles = (s.context + s.kv_tile - 1) / s.kv_tile;
  return int(tiles % 2);
}

void gqa_partial_opt2(Tl& tl, const GqaShape& shape, const GqaTensors& in, const GqaStateBuffers& state) {
  GqaDecode d(tl, shape, in, &state);
  opt2_tiles(tl, d);
}

}  // namespace kb
