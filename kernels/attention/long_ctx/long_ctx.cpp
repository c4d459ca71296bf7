#include "kernels/attention/long_ctx/long_ctx.h"

#include <string>
#include <utility>
#include <vector>

#include "kernels/ccl/all_reduce.h"
#include "kernels/recipes/state_merge.h"

namespace kb {

namespace {

struct CaseName {
  LongCtxCase c;
  const char* name;
};
constexpr CaseName kCaseNames[] = {{LongCtxCase::kCubeSpPeTp, "cube_sp_pe_tp"},
                                   {LongCtxCase::kCubeTpPeSp, "cube_tp_pe_sp"},
                                   {LongCtxCase::kCubeReplPeSp, "cube_repl_pe_sp"},
                                   {LongCtxCase::kCubeSpPeSp, "cube_sp_pe_sp"}};

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

void check_shape(const GqaShape& s) {
  if (s.q_heads < 1 || s.kv_heads < 1 || s.q_heads % s.kv_heads != 0) {
    throw KernelError("gqa_long_ctx: q_heads " + std::to_string(s.q_heads) + " must be a positive multiple of kv_heads " +
                      std::to_string(s.kv_heads));
  }
  if (s.head_dim < 1 || s.context < 1 || s.kv_tile < 1) {
    throw KernelError("gqa_long_ctx: head_dim, context and kv_tile must be positive");
  }
}

// This PE's part of request `request`'s Q, K and V, in the same order and
// sizes as gqa_inputs on the local shape (so a PE alone in its merge group
// is gqa_decode_opt2 exactly). Data mode writes long_ctx_input's values;
// timing mode only marks them initialised.
GqaTensors local_inputs(Tl& tl, const GqaShape& s, const GqaShape& local, const LongCtxPlan& plan, uint64_t seed) {
  const int64_t g = s.q_heads / s.kv_heads, d = s.head_dim;
  GqaTensors t{tl.hbm("Q", local.q_heads, d, s.dtype), tl.hbm("K", local.kv_heads * local.context, d, s.dtype),
               tl.hbm("V", local.kv_heads * local.context, d, s.dtype),
               tl.hbm("O_out", local.q_heads, d, Dtype::kFp32)};
  if (!tl.data_mode()) {
    tl.host_random(t.q, seed);
    tl.host_random(t.k, seed + 1);
    tl.host_random(t.v, seed + 2);
    return t;
  }
  std::vector<float> q(size_t(local.q_heads * d));
  for (int64_t r = 0; r < local.q_heads; ++r)
    for (int64_t c = 0; c < d; ++c)
      q[size_t(r * d + c)] = long_ctx_input(seed, plan.request, 0, plan.heads.begin * g + r, c, s.input_range);
  tl.host_write(t.q, q);
  for (int which : {1, 2}) {
    std::vector<float> kv(size_t(local.kv_heads * local.context * d));
    size_t i = 0;
    for (int64_t h = 0; h < local.kv_heads; ++h) {
      const int64_t row0 = (plan.heads.begin + h) * s.context + plan.tokens.begin;
      for (int64_t j = 0; j < local.context; ++j)
        for (int64_t c = 0; c < d; ++c) kv[i++] = long_ctx_input(seed, plan.request, which, row0 + j, c, s.input_range);
    }
    tl.host_write(which == 1 ? t.k : t.v, kv);
  }
  return t;
}

// The running state of a root and the buffers partial states arrive in
// (two sets, so the next one is received while the last is merged).
class Merger {
 public:
  // `merges`: the states this PE will receive; a PE that only sends needs
  // no receive buffers.
  Merger(Tl& tl, const GqaStateBuffers& st, int final_max, int64_t rows, int64_t d, int64_t merges)
      : tl_(tl), st_(st), cur_(final_max) {
    if (merges == 0) return;
    for (int i = 0; i < 2; ++i) {
      const std::string k = std::to_string(i);
      in_[i] = {tl.tcm("in_m" + k, rows, 1, Dtype::kFp32), tl.tcm("in_l" + k, rows, 1, Dtype::kFp32),
                tl.tcm("in_O" + k, rows, d, Dtype::kFp32)};
    }
    scratch_ = {tl.tcm("corr_a", rows, 1, Dtype::kFp32), tl.tcm("corr_b", rows, 1, Dtype::kFp32),
                tl.tcm("l_b", rows, 1, Dtype::kFp32)};
  }
  // Receives a partial state from global PE `from` and merges it in.
  void merge_from(uint32_t from) {
    const PartialState& in = in_[received_++ % 2];
    tl_.recv(in.m, from);
    tl_.recv(in.l, from);
    tl_.recv(in.o, from);
    state_merge(tl_, SoftmaxMergeState{st_.m[cur_], st_.m[1 - cur_], st_.l, st_.o}, in, scratch_);
    cur_ = 1 - cur_;  // the max ping-pongs as between tiles
  }
  // Sends the state (its max, l, O) to global PE `to`.
  void send_to(uint32_t to) {
    tl_.send(st_.m[cur_], to);
    tl_.send(st_.l, to);
    tl_.send(st_.o, to);
  }

 private:
  Tl& tl_;
  GqaStateBuffers st_;
  int cur_;
  PartialState in_[2];
  StateMergeScratch scratch_;
  int64_t received_ = 0;
};

}  // namespace

const char* long_ctx_case_name(LongCtxCase c) {
  for (const CaseName& n : kCaseNames)
    if (n.c == c) return n.name;
  return "?";
}

bool long_ctx_case_from_name(const std::string& name, LongCtxCase* out) {
  for (const CaseName& n : kCaseNames) {
    if (name == n.name) {
      *out = n.c;
      return true;
    }
  }
  return false;
}

Range split_range(int64_t n, int64_t k, int64_t i) {
  const int64_t b = n * i / k;
  return Range{b, n * (i + 1) / k - b};
}

LongCtxPlan long_ctx_plan(LongCtxCase c, const GqaShape& s, const PePlace& place) {
  const int64_t C = place.cubes(), P = place.pes_per_cube, cube = place.cube, pe = place.pe;
  const uint32_t cube_root = uint32_t(cube * P);
  LongCtxPlan p;
  switch (c) {
    case LongCtxCase::kCubeSpPeTp: {
      p.tokens = split_range(s.context, C, cube);
      p.heads = split_range(s.kv_heads, P, pe);
      const uint32_t root_cube = lrab_root(place.mesh_h, place.mesh_w);
      p.merge_to = uint32_t(root_cube * P + pe);
      p.merge_in = int64_t(cube) == int64_t(root_cube) ? C - 1 : 0;
      break;
    }
    case LongCtxCase::kCubeTpPeSp:
    case LongCtxCase::kCubeReplPeSp:
      if (c == LongCtxCase::kCubeTpPeSp) {
        p.heads = split_range(s.kv_heads, C, cube);
      } else {
        p.request = cube;
        p.heads = Range{0, s.kv_heads};
      }
      p.tokens = split_range(s.context, P, pe);
      p.merge_to = cube_root;
      p.merge_in = pe == 0 ? P - 1 : 0;
      break;
    case LongCtxCase::kCubeSpPeSp: {
      const Range in_cube = split_range(s.context, C, cube);
      const Range mine = split_range(in_cube.size, P, pe);
      p.tokens = Range{in_cube.begin + mine.begin, mine.size};
      p.heads = Range{0, s.kv_heads};
      const uint32_t root_cube = lrab_root(place.mesh_h, place.mesh_w);
      if (pe != 0) {
        p.merge_to = cube_root;
      } else if (int64_t(cube) != int64_t(root_cube)) {
        p.merge_to = uint32_t(root_cube * P);
        p.merge_in = P - 1;
      } else {
        p.merge_to = cube_root;
        p.merge_in = (P - 1) + (C - 1);
      }
      break;
    }
  }
  if (p.heads.size == 0) {  // idle: nothing to merge
    p.merge_to = place.global;
    p.merge_in = 0;
    return p;
  }
  p.writes_output = c == LongCtxCase::kCubeSpPeSp || p.merge_to == place.global;
  return p;
}

int64_t long_ctx_requests(LongCtxCase c, const PePlace& place) {
  return c == LongCtxCase::kCubeReplPeSp ? int64_t(place.cubes()) : 1;
}

float long_ctx_input(uint64_t seed, int64_t request, int which, int64_t row, int64_t col, double range) {
  uint64_t h = splitmix64(seed);
  for (uint64_t x : {uint64_t(request), uint64_t(which), uint64_t(row), uint64_t(col)}) h = splitmix64(h ^ x);
  const double u = double(h >> 11) * (1.0 / 9007199254740992.0);  // [0, 1)
  return float(-range + 2.0 * range * u);
}

LongCtxOutput gqa_long_ctx(Tl& tl, LongCtxCase c, const GqaShape& s, const LongCtxOptions& opt) {
  check_shape(s);
  const PePlace& place = tl.place();
  const LongCtxPlan plan = long_ctx_plan(c, s, place);
  if (plan.heads.size == 0) return {};
  if (plan.tokens.size == 0) {
    throw KernelError(std::string("gqa_long_ctx ") + long_ctx_case_name(c) + ": context " +
                      std::to_string(s.context) + " leaves PE " + std::to_string(place.global) +
                      " no tokens; it must be at least the number of sequence parts");
  }
  const int64_t g = s.q_heads / s.kv_heads, d = s.head_dim;
  GqaShape local = s;
  local.q_heads = plan.heads.size * g;
  local.kv_heads = plan.heads.size;
  local.context = plan.tokens.size;
  const GqaTensors t = local_inputs(tl, s, local, plan, opt.seed);
  LongCtxOutput out{true, t.out, plan.request, plan.heads.begin * g, local.q_heads};

  const uint32_t me = place.global;
  const bool alone = plan.merge_to == me && plan.merge_in == 0;
  if (alone && opt.merge) {
    gqa_decode_opt2(tl, local, t);  // nothing to merge: the base kernel
    return out;
  }
  const GqaStateBuffers st = gqa_state_buffers(tl, local, "acc_");
  gqa_partial_opt2(tl, local, t, st);
  if (!opt.merge) return {};

  Merger merger(tl, st, gqa_final_max_index(local), local.q_heads, d, plan.merge_in);
  auto finalise = [&] { tl.div_bcast(st.o, st.o, st.l); };
  if (c != LongCtxCase::kCubeSpPeSp) {
    if (plan.merge_to != me) {
      merger.send_to(plan.merge_to);
      return {};
    }
    // The root of the group: the other members in ascending order.
    const int64_t P = place.pes_per_cube;
    std::vector<uint32_t> members;
    if (c == LongCtxCase::kCubeSpPeTp) {
      for (uint32_t cube = 0; cube < place.cubes(); ++cube) members.push_back(uint32_t(cube * P + place.pe));
    } else {
      for (uint32_t pe = 0; pe < uint32_t(P); ++pe) members.push_back(uint32_t(place.cube * P + pe));
    }
    for (uint32_t m : members)
      if (m != me) merger.merge_from(m);
    finalise();
    tl.store(t.out, st.o);
    return out;
  }

  // cube_sp_pe_sp: LRAB. Leaves up to their cube's PE 0, cube roots up to
  // the root cube's PE 0; the normalised O back down the same tree.
  const uint32_t P = place.pes_per_cube, cube_root = place.cube * P;
  const uint32_t root = lrab_root(place.mesh_h, place.mesh_w) * P;
  if (me != cube_root) {
    merger.send_to(cube_root);
    tl.recv(t.out, cube_root);
    return out;
  }
  for (uint32_t pe = 1; pe < P; ++pe) merger.merge_from(cube_root + pe);
  if (me != root) {
    merger.send_to(root);
    tl.recv(st.o, root);
  } else {
    for (uint32_t cube = 0; cube < place.cubes(); ++cube)
      if (cube * P != root) merger.merge_from(cube * P);
    finalise();
    for (uint32_t cube = 0; cube < place.cubes(); ++cube)
      if (cube * P != root) tl.send(st.o, cube * P);
  }
  for (uint32_t pe = 1; pe < P; ++pe) tl.send(st.o, cube_root + pe);
  tl.store(t.out, st.o);
  return out;
}

}  // namespace kb
