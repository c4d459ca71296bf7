#include "models/pe/tile_plan.h"

#include <algorithm>

namespace kb {

namespace {

class PlanBuilder {
 public:
  PlanBuilder(uint64_t cmd_id, const char* cmd_type, const TensorTable& table,
              const PeConfig& cfg, std::vector<Stage>& out)
      : id_(cmd_id), type_(cmd_type), table_(table), cfg_(cfg), out_(out) {}
  size_t count() const { return used_; }

  // Stages are reused in place: their edge lists keep their capacity, so a
  // warm in-flight slot plans a command without heap allocation.
  int add(RecordKind kind, Engine engine, int64_t tile) {
    if (used_ == out_.size()) out_.emplace_back();
    Stage& s = out_[used_];
    std::vector<uint32_t> edges = std::move(s.dependents);
    s = Stage{};
    edges.clear();
    s.dependents = std::move(edges);
    s.cmd_id = id_;
    s.cmd_type = type_;
    s.kind = kind;
    s.engine = engine;
    s.tile = tile;
    return int(used_++);
  }
  Stage& at(int i) { return out_[size_t(i)]; }
  void edge(int from, int to) {
    if (from < 0 || to < 0) return;
    out_[size_t(from)].dependents.push_back(uint32_t(to));
    ++out_[size_t(to)].pending;
  }

  int transfer(RecordKind kind, Handle dst, Handle src) {
    const TensorDesc& d = table_.at(dst);
    const TensorDesc& s = table_.at(src);
    const int i = add(kind, Engine::kDma, -1);
    at(i).bytes = s.bytes();
    at(i).elements = uint64_t(s.elements());
    at(i).tcm_only = d.space == MemSpace::kTcm && s.space == MemSpace::kTcm;
    return i;
  }

  int gemm(int64_t tile, int64_t m, int64_t n, int64_t k) {
    const int i = add(RecordKind::kGemm, Engine::kGemm, tile);
    at(i).m = m;
    at(i).n = n;
    at(i).k = k;
    at(i).elements = uint64_t(m * n);
    return i;
  }

  // elements: output elements, or input elements of a reduction.
  int math(int64_t tile, MathOp op, const std::vector<Handle>& operands, Handle out,
           uint64_t block_elements) {
    const int i = add(RecordKind::kMath, Engine::kMath, tile);
    Stage& s = at(i);
    s.op = op;
    if (math_op_is_reduction(op)) {
      const TensorDesc& src = table_.at(operands.at(0));
      s.elements = uint64_t(src.elements());
      s.row_len = src.cols;
    } else {
      s.elements = block_elements ? block_elements : uint64_t(table_.at(out).elements());
    }
    return i;
  }

  int tcm(RecordKind kind, int64_t tile, uint64_t bytes) {
    const int i = add(kind, Engine::kTcm, tile);
    at(i).bytes = bytes;
    return i;
  }

  // A prologue/epilogue op: one standalone stage on its engine.
  int standalone_op(const OpSpec& op, int32_t index) {
    int s;
    if (op.is_gemm()) {
      const TensorDesc& a = table_.at(operand(op, "a"));
      const TensorDesc& o = table_.at(op.out);
      s = gemm(-1, o.rows, o.cols, a.cols);
    } else {
      MathOp m{};
      math_op_from_string(op.kind, &m);
      s = math(-1, m, handles(op), op.out, 0);
    }
    at(s).op_index = index;
    return s;
  }

  // Marks a tile stage with the OpSpec and output block it serves.
  void block(int s, int32_t index, int64_t m0, int64_t n0, int64_t k0, int64_t rows,
             int64_t cols, int64_t depth) {
    Stage& st = at(s);
    st.op_index = index;
    st.m0 = m0;
    st.n0 = n0;
    st.k0 = k0;
    st.m = rows;
    st.n = cols;
    st.k = depth;
  }

  void composite(const CompositeCmd& c);

 private:
  static Handle operand(const OpSpec& op, const char* name) {
    for (const NamedOperand& o : op.operands)
      if (o.name == name) return o.handle;
    return 0;
  }
  static std::vector<Handle> handles(const OpSpec& op) {
    std::vector<Handle> h;
    for (const NamedOperand& o : op.operands) h.push_back(o.handle);
    return h;
  }
  static bool flag(const OpSpec& op, const char* name) {
    for (const Extra& e : op.extra)
      if (e.name == name && std::holds_alternative<bool>(e.value)) return std::get<bool>(e.value);
    return false;
  }

  uint64_t id_;
  const char* type_;
  const TensorTable& table_;
  const PeConfig& cfg_;
  std::vector<Stage>& out_;
  size_t used_ = 0;
};

void PlanBuilder::composite(const CompositeCmd& c) {
  // Prologue: standalone stages in program order.
  int last_prologue = -1;
  const OpSpec* tile_gemm = nullptr;
  int32_t gemm_index = -1;
  // Tile-scope math ops, parsed once: they repeat on every output block.
  struct TileMath {
    int32_t index;
    MathOp op;
    std::vector<Handle> operands;
    Handle out;
  };
  std::vector<TileMath> tile_math;
  for (size_t i = 0; i < c.ops.size(); ++i) {
    const OpSpec& op = c.ops[i];
    if (op.scope == OpScope::kPrologue) {
      const int s = standalone_op(op, int32_t(i));
      edge(last_prologue, s);
      last_prologue = s;
    } else if (op.scope == OpScope::kTile) {
      if (op.is_gemm()) {
        tile_gemm = &op;
        gemm_index = int32_t(i);
      } else {
        MathOp mo{};
        math_op_from_string(op.kind, &mo);
        tile_math.push_back({int32_t(i), mo, handles(op), op.out});
      }
    }
  }

  // Tile loop over the tile-scope GEMM: output blocks (mi, ni), K innermost
  // so the accumulator stays in the array across K steps.
  std::vector<int> block_ends;
  if (tile_gemm) {
    const TensorDesc& a = table_.at(operand(*tile_gemm, "a"));
    const TensorDesc& b = table_.at(operand(*tile_gemm, "b"));
    const TensorDesc& o = table_.at(tile_gemm->out);
    const bool accumulate = flag(*tile_gemm, "accumulate");
    const int64_t m = o.rows, n = o.cols, k = a.cols;
    const int64_t tm = int64_t(cfg_.tile.m), tn = int64_t(cfg_.tile.n), tk = int64_t(cfg_.tile.k);
    std::vector<int> fetches, gemms;
    int64_t t = 0;
    for (int64_t mi = 0; mi < m; mi += tm) {
      for (int64_t ni = 0; ni < n; ni += tn) {
        const int64_t rows = std::min(tm, m - mi), cols = std::min(tn, n - ni);
        for (int64_t ki = 0; ki < k; ki += tk, ++t) {
          const int64_t kk = std::min(tk, k - ki);
          const uint64_t a_bytes = uint64_t(rows * kk) * dtype_bytes(a.dtype);
          const uint64_t b_bytes = uint64_t(kk * cols) * dtype_bytes(b.dtype);
          uint64_t fetch_bytes = a_bytes + b_bytes;
          if (accumulate && ki == 0) fetch_bytes += uint64_t(rows * cols) * dtype_bytes(o.dtype);
          const int fetch = tcm(RecordKind::kFetch, t, fetch_bytes);
          for (const auto& [desc, bytes] : {std::pair{&a, a_bytes}, std::pair{&b, b_bytes}}) {
            if (desc->space != MemSpace::kHbm) continue;
            const int rd = add(RecordKind::kDmaRead, Engine::kDma, t);
            at(rd).bytes = bytes;
            at(rd).elements = bytes / dtype_bytes(desc->dtype);
            if (t >= 2) edge(fetches[size_t(t - 2)], rd);  // TCM buffer reuse
            edge(rd, fetch);
          }
          edge(last_prologue, fetch);
          if (t >= 2) edge(gemms[size_t(t - 2)], fetch);  // operand buffer reuse
          const int g = gemm(t, rows, cols, kk);
          block(g, gemm_index, mi, ni, ki, rows, cols, kk);
          edge(fetch, g);
          if (!gemms.empty()) edge(gemms.back(), g);  // accumulation order
          fetches.push_back(fetch);
          gemms.push_back(g);
          if (ki + tk < k) continue;
          // Output block complete: STORE, tile-scope math, DMA_WRITE.
          int prev = tcm(RecordKind::kStore, t, uint64_t(rows * cols) * dtype_bytes(o.dtype));
          block(prev, gemm_index, mi, ni, ki, rows, cols, kk);
          edge(g, prev);
          for (const TileMath& tm_op : tile_math) {
            const int s = math(t, tm_op.op, tm_op.operands, tm_op.out, uint64_t(rows * cols));
            block(s, tm_op.index, mi, ni, 0, rows, cols, 0);
            edge(prev, s);
            prev = s;
          }
          if (o.space == MemSpace::kHbm) {
            const int wr = add(RecordKind::kDmaWrite, Engine::kDma, t);
            at(wr).bytes = uint64_t(rows * cols) * dtype_bytes(o.dtype);
            at(wr).elements = uint64_t(rows * cols);
            edge(prev, wr);
            prev = wr;
          }
          block_ends.push_back(prev);
        }
      }
    }
  }
  if (block_ends.empty() && last_prologue >= 0) block_ends.push_back(last_prologue);

  // Epilogue: after every tile, standalone stages in program order.
  int prev = -1;
  for (size_t i = 0; i < c.ops.size(); ++i) {
    const OpSpec& op = c.ops[i];
    if (op.scope != OpScope::kEpilogue) continue;
    const int s = standalone_op(op, int32_t(i));
    if (prev < 0) {
      for (int e : block_ends) edge(e, s);
    } else {
      edge(prev, s);
    }
    prev = s;
  }
}

}  // namespace

uint64_t gemm_tile_count(const TileConfig& tile, int64_t m, int64_t n, int64_t k) {
  auto tiles = [](int64_t x, uint64_t t) { return (uint64_t(x) + t - 1) / t; };
  return tiles(m, tile.m) * tiles(n, tile.n) * tiles(k, tile.k);
}

size_t build_stages(uint64_t cmd_id, const Command& cmd, const TensorTable& table,
                    const PeConfig& cfg, std::vector<Stage>& out) {
  PlanBuilder p(cmd_id, command_type_name(cmd), table, cfg, out);
  if (const auto* c = std::get_if<DmaReadCmd>(&cmd)) {
    p.transfer(RecordKind::kDmaRead, c->dst, c->src);
  } else if (const auto* c = std::get_if<DmaWriteCmd>(&cmd)) {
    p.transfer(RecordKind::kDmaWrite, c->dst, c->src);
  } else if (const auto* c = std::get_if<CopyCmd>(&cmd)) {
    p.transfer(RecordKind::kCopy, c->dst, c->src);
  } else if (const auto* c = std::get_if<GemmCmd>(&cmd)) {
    const int g = p.gemm(-1, c->m, c->n, c->k);
    const TensorDesc& result = table.at(c->out);
    Stage& s = out[size_t(g)];
    s.fetch_bytes =
        table.at(c->a).bytes() + table.at(c->b).bytes() + (c->accumulate ? result.bytes() : 0);
    s.store_bytes = result.bytes();
  } else if (const auto* c = std::get_if<MathCmd>(&cmd)) {
    p.math(-1, c->op, c->operands, c->out, 0);
  } else if (const auto* c = std::get_if<CompositeCmd>(&cmd)) {
    p.composite(*c);
  }
  return p.count();
}

}  // namespace kb
