#include "kernels/ccl/all_reduce.h"

#include <algorithm>
#include <string>

namespace kb {

std::vector<uint32_t> ring_order(uint32_t h, uint32_t w, uint32_t pes_per_cube) {
  std::vector<uint32_t> order;
  for (uint32_t y = 0; y < h; ++y) {
    for (uint32_t i = 0; i < w; ++i) {
      const uint32_t x = y % 2 == 0 ? i : w - 1 - i;
      const uint32_t cube = y * w + x;
      for (uint32_t p = 0; p < pes_per_cube; ++p) order.push_back(cube * pes_per_cube + p);
    }
  }
  return order;
}

namespace {

// Elements [begin, begin + len) of the [1, N] buffer.
struct Span {
  int64_t begin = 0, len = 0;
};

Tensor part(Tl& tl, const Tensor& t, const Span& s) {
  return s.begin == 0 && s.len == t.cols ? t : tl.view(t, 0, 1, s.begin, s.len);
}

void check_buffer(const Tensor& x, const char* what) {
  if (x.rows != 1 || x.cols < 1 || x.space != MemSpace::kHbm) {
    throw KernelError(std::string(what) + ": x must be a [1, N] tensor in HBM");
  }
}

}  // namespace

void all_reduce_lrab(Tl& tl, const Tensor& x, const AllReduceOptions& opt) {
  check_buffer(x, "all_reduce_lrab");
  if (tl.num_pes() == 1) return;
  const uint32_t pes = tl.pes_per_cube(), me = tl.pe_id(), cube = tl.cube_id();
  const uint32_t cubes = tl.num_cubes(), root_cube = lrab_root(tl.mesh_h(), tl.mesh_w());
  auto local_root = [&](uint32_t c) { return c * pes; };
  const int64_t n = x.cols, ce = std::min(std::max<int64_t>(opt.chunk_elems, 1), n);
  const int64_t chunks = (n + ce - 1) / ce, window = std::max<int64_t>(opt.window, 1);
  auto chunk = [&](int64_t k) { return Span{k * ce, std::min(ce, n - k * ce)}; };

  if (me != 0) {
    // A leaf: its chunks up to the local root, the sums back into x, at
    // most `window` chunks sent and not yet answered.
    for (int64_t k = 0; k < chunks; ++k) {
      tl.send(part(tl, x, chunk(k)), local_root(cube));
      if (k + 1 >= window) tl.recv(part(tl, x, chunk(k + 1 - window)), local_root(cube));
    }
    for (int64_t k = std::max<int64_t>(chunks + 1 - window, 0); k < chunks; ++k) {
      tl.recv(part(tl, x, chunk(k)), local_root(cube));
    }
    return;
  }

  // The local root: two accumulators and two receive buffers alternate, so
  // chunk k + 1 is received while chunk k is still being answered.
  const Tensor acc[2] = {tl.tcm("lrab_acc0", 1, ce, x.dtype), tl.tcm("lrab_acc1", 1, ce, x.dtype)};
  const Tensor tmp[2] = {tl.tcm("lrab_tmp0", 1, ce, x.dtype), tl.tcm("lrab_tmp1", 1, ce, x.dtype)};
  int64_t received = 0;
  for (int64_t k = 0; k < chunks; ++k) {
    const Span s = chunk(k);
    const Tensor a = part(tl, acc[k % 2], Span{0, s.len});
    auto gather = [&](uint32_t from) {
      const Tensor b = part(tl, tmp[received++ % 2], Span{0, s.len});
      tl.recv(b, from);
      tl.add(a, a, b);
    };
    tl.load(a, part(tl, x, s));
    for (uint32_t p = 1; p < pes; ++p) gather(local_root(cube) + p);
    if (cubes > 1 && cube == root_cube) {
      for (uint32_t c = 0; c < cubes; ++c)
        if (c != root_cube) gather(local_root(c));
      for (uint32_t c = 0; c < cubes; ++c)
        if (c != root_cube) tl.send(a, local_root(c));
    } else if (cubes > 1) {
      tl.send(a, local_root(root_cube));
      tl.recv(a, local_root(root_cube));
    }
    for (uint32_t p = 1; p < pes; ++p) tl.send(a, local_root(cube) + p);
    tl.store(part(tl, x, s), a);
  }
}

void all_reduce_ring(Tl& tl, const Tensor& x, const AllReduceOptions& opt) {
  check_buffer(x, "all_reduce_ring");
  const uint32_t n = tl.num_pes();
  if (n == 1) return;
  const std::vector<uint32_t> order = ring_order(tl.mesh_h(), tl.mesh_w(), tl.pes_per_cube());
  const auto at = std::find(order.begin(), order.end(), tl.global_pe());
  if (at == order.end()) throw KernelError("all_reduce_ring: PE not in the ring");
  const int64_t pos = at - order.begin();
  const uint32_t next = order[(pos + 1) % n], prev = order[(pos + n - 1) % n];
  const int64_t elems = x.cols;
  // Segment i of n: elements [elems * i / n, elems * (i + 1) / n); each is
  // cut into the same number of pieces, so both ends of every transfer
  // agree on its size (an empty piece, when elems < n, is neither sent nor
  // received).
  const int64_t max_seg = (elems + n - 1) / n;
  const int64_t ce = std::min(std::max<int64_t>(opt.chunk_elems, 1), max_seg);
  const int64_t pieces = (max_seg + ce - 1) / ce;
  auto piece = [&](int64_t seg, int64_t q) {
    seg = ((seg % n) + n) % n;
    const int64_t b = elems * seg / n, len = elems * (seg + 1) / n - b;
    return Span{b + len * q / pieces, len * (q + 1) / pieces - len * q / pieces};
  };
  // Per piece in flight (two alternate): the running sum of the step before
  // (what is sent on), this step's sum, and the receive buffer.
  Tensor acc[2][2], tmp[2];
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) acc[i][j] = tl.tcm("ring_acc" + std::to_string(2 * i + j), 1, ce, x.dtype);
    tmp[i] = tl.tcm("ring_tmp" + std::to_string(i), 1, ce, x.dtype);
  }
  for (int64_t q = 0; q < pieces; ++q) {
    // Reduce-scatter: at step s this PE sends segment pos - s and receives
    // segment pos - s - 1, which it adds to its own and sends on.
    const Span mine = piece(pos, q);
    Tensor sent = mine.len > 0 ? part(tl, x, mine) : Tensor{};
    for (uint32_t s = 0; s + 1 < n; ++s) {
      if (piece(pos - s, q).len > 0) tl.send(sent, next);
      const Span in = piece(pos - s - 1, q);
      if (in.len == 0) continue;
      const Tensor b = part(tl, tmp[q % 2], Span{0, in.len});
      const Tensor a = part(tl, acc[q % 2][s % 2], Span{0, in.len});
      tl.recv(b, prev);
      tl.load(a, part(tl, x, in));
      tl.add(a, a, b);
      sent = a;
    }
    // This PE now holds the sum of segment pos + 1; all-gather: pass the
    // sums around, receiving each straight into x.
    const Span own = piece(pos + 1, q);
    if (own.len > 0) tl.store(part(tl, x, own), sent);
    for (uint32_t s = 0; s + 1 < n; ++s) {
      if (piece(pos + 1 - s, q).len > 0) tl.send(sent, next);
      const Span in = piece(pos - s, q);
      if (in.len == 0) continue;
      const Tensor dst = part(tl, x, in);
      tl.recv(dst, prev);
      sent = dst;
    }
  }
}

}  // namespace kb
