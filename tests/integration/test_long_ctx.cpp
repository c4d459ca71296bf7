// Long-context GQA decode across a mesh of cubes: the four
// partitioning cases against the reference attention in data mode, their
// reduction to single-PE opt2 on one PE, the associativity of the shared
// state merge, and the LRAB root of cube_sp_pe_sp in the link traffic.
// Each mesh runs in a forked child (tb/run/mesh_run.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/attention/gqa_decode.h"
#include "kernels/attention/long_ctx/long_ctx.h"
#include "kernels/ccl/all_reduce.h"
#include "kernels/recipes/state_merge.h"
#include "models/mesh/mesh_router.h"
#include "models/pe/engines/dtype_codec.h"
#include "tb/run/mesh_run.h"
#include "tb/benches/reference.h"
#include "tb/run/runner.h"
#include "tests/sim_util.h"
#include "tests/test_files.h"

namespace kb {
namespace {

using test::mesh_config;

// Request r's whole Q, K or V as the kernel saw it (rounded to the dtype).
std::vector<float> whole_input(const GqaShape& s, uint64_t seed, int64_t r, int which) {
  const int64_t rows = which == 0 ? s.q_heads : s.kv_heads * s.context;
  std::vector<float> v(size_t(rows * s.head_dim));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t c = 0; c < s.head_dim; ++c)
      v[size_t(i * s.head_dim + c)] = round_to_dtype(long_ctx_input(seed, r, which, i, c, s.input_range), s.dtype);
  return v;
}

// The spread of the scores q.k / sqrt(d) over every head and position.
double score_spread(const GqaShape& s, const std::vector<float>& q, const std::vector<float>& k) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  const int64_t g = s.q_heads / s.kv_heads;
  for (int64_t qh = 0; qh < s.q_heads; ++qh) {
    for (int64_t t = 0; t < s.context; ++t) {
      double dot = 0;
      for (int64_t c = 0; c < s.head_dim; ++c)
        dot += double(q[size_t(qh * s.head_dim + c)]) *
               double(k[size_t(((qh / g) * s.context + t) * s.head_dim + c)]);
      dot /= std::sqrt(double(s.head_dim));
      lo = std::min(lo, dot);
      hi = std::max(hi, dot);
    }
  }
  return hi - lo;
}

// Every PE that ends with output rows compares them with the reference
// attention of its request; a mismatch fails the run.
Kernel checked_case(LongCtxCase c, GqaShape s) {
  return [=](Tl& tl) {
    const LongCtxOutput out = gqa_long_ctx(tl, c, s);
    const LongCtxPlan plan = long_ctx_plan(c, s, tl.place());
    if (out.final != plan.writes_output) throw KernelError("output flag disagrees with the plan");
    if (!out.final) return;
    tl.wait();
    const std::vector<float> got = tl.host_read(out.out);
    const std::vector<float> q = whole_input(s, 7, out.request, 0), k = whole_input(s, 7, out.request, 1),
                             v = whole_input(s, 7, out.request, 2);
    const std::vector<double> ref = reference_gqa_decode(q, k, v, s.q_heads, s.kv_heads, s.head_dim, s.context);
    const std::vector<double> rows(ref.begin() + out.row0 * s.head_dim,
                                   ref.begin() + (out.row0 + out.rows) * s.head_dim);
    const ErrorStats e = compare(got, rows);
    if (!e.ok()) {
      throw KernelError(std::string(long_ctx_case_name(c)) + " PE " + std::to_string(tl.global_pe()) + " rows " +
                        std::to_string(out.row0) + "+" + std::to_string(out.rows) + ": " + e.describe());
    }
  };
}

struct MeshShape {
  uint32_t h, w, pes;
};

class LongCtxData : public testing::TestWithParam<std::tuple<LongCtxCase, Dtype, MeshShape>> {};

TEST_P(LongCtxData, MatchesTheReferenceAttention) {
  const auto [c, dtype, m] = GetParam();
  GqaShape s;
  s.q_heads = 8;
  s.kv_heads = 4;  // 2 query heads per group
  s.head_dim = 32;
  s.context = 997;  // prime: divides by no cube, PE or tile count
  s.kv_tile = 64;
  s.dtype = dtype;
  s.input_range = 6.0;  // scores spread over tens of units (checked below)
  const double spread = score_spread(s, whole_input(s, 7, 0, 0), whole_input(s, 7, 0, 1));
  EXPECT_GT(spread, 40.0) << "inputs not high-contrast";
  MeshRunSpec spec;
  spec.config = mesh_config(m.h, m.w, m.pes, true);
  spec.kernel_name = long_ctx_case_name(c);
  spec.kernel = checked_case(c, s);
  const MeshRunResult r = run_mesh_isolated(spec);
  ASSERT_TRUE(r.ok) << r.error;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, LongCtxData,
    testing::Combine(testing::ValuesIn(kLongCtxCases), testing::Values(Dtype::kFp32, Dtype::kBf16),
                     testing::Values(MeshShape{2, 2, 2}, MeshShape{2, 4, 2}, MeshShape{1, 3, 3}, MeshShape{1, 4, 1})),
    [](const auto& param_info) {
      const MeshShape m = std::get<2>(param_info.param);
      return std::string(long_ctx_case_name(std::get<0>(param_info.param))) + "_" +
             (std::get<1>(param_info.param) == Dtype::kFp32 ? "fp32" : "bf16") + "_" + std::to_string(m.h) + "x" +
             std::to_string(m.w) + "x" + std::to_string(m.pes);
    });

// The plans cover every output row of every request exactly once (each
// PE of cube_sp_pe_sp ends with all of them), and every token of every
// head is some PE's work exactly once per request.
TEST(LongCtxPlan, CoversEveryRowAndTokenOnce) {
  GqaShape s;
  s.q_heads = 12;
  s.kv_heads = 6;
  s.context = 1001;
  for (MeshShape m : {MeshShape{2, 4, 8}, MeshShape{1, 1, 1}, MeshShape{3, 2, 4}, MeshShape{1, 8, 3}}) {
    for (LongCtxCase c : kLongCtxCases) {
      const uint32_t cubes = m.h * m.w, n = cubes * m.pes;
      const int64_t requests = long_ctx_requests(c, PePlace{0, 0, 0, m.h, m.w, m.pes});
      std::map<int64_t, std::vector<int>> rows, work;  // per request
      for (int64_t r = 0; r < requests; ++r) {
        rows[r].assign(size_t(s.q_heads), 0);
        work[r].assign(size_t(s.kv_heads * s.context), 0);
      }
      for (uint32_t g = 0; g < n; ++g) {
        const LongCtxPlan p = long_ctx_plan(c, s, PePlace{g, g / m.pes, g % m.pes, m.h, m.w, m.pes});
        for (int64_t h = p.heads.begin; h < p.heads.begin + p.heads.size; ++h)
          for (int64_t t = p.tokens.begin; t < p.tokens.begin + p.tokens.size; ++t) ++work[p.request][size_t(h * s.context + t)];
        if (p.writes_output && c != LongCtxCase::kCubeSpPeSp) {
          const int64_t gq = s.q_heads / s.kv_heads;
          for (int64_t q = p.heads.begin * gq; q < (p.heads.begin + p.heads.size) * gq; ++q) ++rows[p.request][size_t(q)];
        }
        if (p.heads.size > 0 && p.merge_to != g && c != LongCtxCase::kCubeSpPeSp) {
          EXPECT_FALSE(p.writes_output);  // it sends its state on
        }
      }
      for (int64_t r = 0; r < requests; ++r) {
        for (int x : work[r]) ASSERT_EQ(x, 1) << long_ctx_case_name(c) << " on " << m.h << "x" << m.w << "x" << m.pes;
        if (c == LongCtxCase::kCubeSpPeSp) continue;
        for (int x : rows[r]) ASSERT_EQ(x, 1) << long_ctx_case_name(c) << " on " << m.h << "x" << m.w << "x" << m.pes;
      }
    }
  }
}

TEST(LongCtxPlan, ATooShortContextIsAKernelError) {
  GqaShape s;
  s.q_heads = 4;
  s.kv_heads = 2;
  s.head_dim = 16;
  s.context = 5;  // 8 sequence parts on a 2 x 2 mesh of 2-PE cubes
  MeshRunSpec spec;
  spec.config = mesh_config(2, 2, 2, false);
  spec.kernel_name = "short";
  spec.kernel = [=](Tl& tl) { gqa_long_ctx(tl, LongCtxCase::kCubeSpPeSp, s); };
  const MeshRunResult r = run_mesh_isolated(spec);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("no tokens"), std::string::npos) << r.error;
}

// On a 1 x 1 mesh of one PE every case is the base kernel: single-PE opt2
// on the same shape (the single-PE top), to the picosecond and command.
TEST(LongCtxOnOnePe, EveryCaseHasSingleOpt2sLatency) {
  GqaShape s;
  s.context = 1000;  // a tail tile
  RunSpec one;
  one.launches = {{"opt2", [=](Tl& tl) { gqa_decode_opt2(tl, s); }}};
  const RunResult base = run_isolated(one);
  ASSERT_TRUE(base.ok) << base.error;
  ASSERT_EQ(base.launches.size(), 1u);
  for (LongCtxCase c : kLongCtxCases) {
    MeshRunSpec spec;
    spec.config = mesh_config(1, 1, 1, false);
    spec.kernel_name = long_ctx_case_name(c);
    spec.kernel = [=](Tl& tl) { gqa_long_ctx(tl, c, s); };
    const MeshRunResult r = run_mesh_isolated(spec);
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.latency_ps(), base.launches[0].latency_ps()) << long_ctx_case_name(c);
    EXPECT_EQ(r.commands, base.launches[0].commands) << long_ctx_case_name(c);
  }
}

// A partial state of `rows` rows with maxima far apart (high contrast).
struct HostState {
  std::vector<float> m, l, o;
};
HostState host_state(int64_t rows, int64_t d, uint64_t seed, float m_offset) {
  HostState h;
  for (int64_t r = 0; r < rows; ++r) {
    h.m.push_back(m_offset + float(r % 5) * 7.0f - 10.0f);
    h.l.push_back(1.0f + float((seed * 13 + uint64_t(r) * 7) % 11));
    for (int64_t c = 0; c < d; ++c) h.o.push_back(float(int64_t((seed * 31 + uint64_t(r * d + c) * 17) % 23) - 11) / 4.0f);
  }
  return h;
}

// The exact merge of several states, in double.
HostState exact_merge(const std::vector<HostState>& in, int64_t rows, int64_t d) {
  HostState out{std::vector<float>(size_t(rows)), std::vector<float>(size_t(rows)),
                std::vector<float>(size_t(rows * d))};
  for (int64_t r = 0; r < rows; ++r) {
    double m = -std::numeric_limits<double>::infinity();
    for (const HostState& s : in) m = std::max(m, double(s.m[size_t(r)]));
    double l = 0;
    std::vector<double> o(size_t(d), 0.0);
    for (const HostState& s : in) {
      const double c = std::exp(double(s.m[size_t(r)]) - m);
      l += double(s.l[size_t(r)]) * c;
      for (int64_t k = 0; k < d; ++k) o[size_t(k)] += double(s.o[size_t(r * d + k)]) * c;
    }
    out.m[size_t(r)] = float(m);
    out.l[size_t(r)] = float(l);
    for (int64_t k = 0; k < d; ++k) out.o[size_t(r * d + k)] = float(o[size_t(k)]);
  }
  return out;
}

// state_merge is associative: ((A + B) + C) and (A + (B + C)) agree within
// fp32 rounding, and both equal the exact merge of the three.
TEST(StateMerge, IsAssociative) {
  constexpr int64_t rows = 6, d = 16;
  const std::vector<HostState> abc = {host_state(rows, d, 1, 0.0f), host_state(rows, d, 2, 25.0f),
                                      host_state(rows, d, 3, -18.0f)};
  const HostState exact = exact_merge(abc, rows, d);
  MeshRunSpec spec;
  spec.config = mesh_config(1, 1, 1, true);
  spec.kernel_name = "state_merge";
  spec.kernel = [=](Tl& tl) {
    // A state in TCM, loaded from host-written HBM. m has two buffers (it ping-pongs).
    struct Dev {
      Tensor m[2], l, o;
    };
    int n = 0;
    auto dev = [&](const HostState& h) {
      const std::string k = std::to_string(n++);
      Dev s{{tl.tcm("m0_" + k, rows, 1, Dtype::kFp32), tl.tcm("m1_" + k, rows, 1, Dtype::kFp32)},
            tl.tcm("l_" + k, rows, 1, Dtype::kFp32), tl.tcm("o_" + k, rows, d, Dtype::kFp32)};
      const Tensor hm = tl.hbm("hm_" + k, rows, 1, Dtype::kFp32), hl = tl.hbm("hl_" + k, rows, 1, Dtype::kFp32),
                   ho = tl.hbm("ho_" + k, rows, d, Dtype::kFp32);
      tl.host_write(hm, h.m);
      tl.host_write(hl, h.l);
      tl.host_write(ho, h.o);
      tl.load(s.m[0], hm);
      tl.load(s.l, hl);
      tl.load(s.o, ho);
      return s;
    };
    const StateMergeScratch x{tl.tcm("corr_a", rows, 1, Dtype::kFp32), tl.tcm("corr_b", rows, 1, Dtype::kFp32),
                              tl.tcm("l_b", rows, 1, Dtype::kFp32)};
    // acc (+)= in; acc's max moves from m[from] to m[1 - from].
    auto merge = [&](Dev& acc, int from, const Dev& in, int in_m) {
      state_merge(tl, SoftmaxMergeState{acc.m[from], acc.m[1 - from], acc.l, acc.o},
                  PartialState{in.m[in_m], in.l, in.o}, x);
    };
    Dev left[3] = {dev(abc[0]), dev(abc[1]), dev(abc[2])};
    Dev right[3] = {dev(abc[0]), dev(abc[1]), dev(abc[2])};
    merge(left[0], 0, left[1], 0);    // (A + B): max in m[1]
    merge(left[0], 1, left[2], 0);    // + C: max in m[0]
    merge(right[1], 0, right[2], 0);  // (B + C): max in m[1]
    merge(right[0], 0, right[1], 1);  // A + (B + C): max in m[1]
    tl.wait();
    auto check = [&](const char* what, const std::vector<float>& got, const std::vector<float>& want) {
      std::vector<double> ref(want.begin(), want.end());
      const ErrorStats e = compare(got, ref);
      if (!e.ok()) throw KernelError(std::string(what) + ": " + e.describe());
    };
    check("(A+B)+C m", tl.host_read(left[0].m[0]), exact.m);
    check("A+(B+C) m", tl.host_read(right[0].m[1]), exact.m);
    check("(A+B)+C l", tl.host_read(left[0].l), exact.l);
    check("A+(B+C) l", tl.host_read(right[0].l), exact.l);
    check("(A+B)+C O", tl.host_read(left[0].o), exact.o);
    check("A+(B+C) O", tl.host_read(right[0].o), exact.o);
    check("(A+B)+C vs A+(B+C) O", tl.host_read(left[0].o), tl.host_read(right[0].o));
    check("(A+B)+C vs A+(B+C) l", tl.host_read(left[0].l), tl.host_read(right[0].l));
  };
  const MeshRunResult r = run_mesh_isolated(spec);
  ASSERT_TRUE(r.ok) << r.error;
}

// cube_sp_pe_sp reduces to the LRAB root, cube 6 of a 2 x 4 mesh, as the
// op log's LINK rows show: every link carries exactly the partial states
// whose XY route to cube 6 crosses it plus the broadcasts whose route from
// cube 6 crosses it, a fixed number of bytes per state and per broadcast.
TEST(LongCtxSpSp, ReducesToRootCubeSixOverTheLinks) {
  constexpr uint32_t h = 2, w = 4, root = 6;
  ASSERT_EQ(lrab_root(h, w), root);
  GqaShape s;
  s.q_heads = 8;
  s.kv_heads = 2;
  s.head_dim = 32;
  s.context = 4096;
  test::TempDir dir;
  MeshRunSpec spec;
  spec.config = mesh_config(h, w, 2, false);
  spec.kernel_name = "sp_sp";
  spec.kernel = [=](Tl& tl) { gqa_long_ctx(tl, LongCtxCase::kCubeSpPeSp, s); };
  spec.oplog_path = dir.file("oplog.csv");
  const MeshRunResult r = run_mesh_isolated(spec);
  ASSERT_TRUE(r.ok) << r.error;
  // Bytes per link from the op log: component,kind,...,bytes (9th column).
  std::map<std::string, uint64_t> logged;
  std::istringstream csv(test::read_file(spec.oplog_path));
  for (std::string line; std::getline(csv, line);) {
    if (line.find(",LINK,") == std::string::npos) continue;
    std::vector<std::string> col;
    std::istringstream fields(line);
    for (std::string f; std::getline(fields, f, ',');) col.push_back(f);
    ASSERT_GE(col.size(), 9u) << line;
    logged[col[0]] += std::stoull(col[8]);
  }
  ASSERT_FALSE(logged.empty());
  std::map<std::pair<uint32_t, uint32_t>, std::pair<int, int>> uses;  // link -> (states, broadcasts)
  for (uint32_t c = 0; c < h * w; ++c) {
    if (c == root) continue;
    const std::vector<uint32_t> up = xy_route(c, root, h, w), down = xy_route(root, c, h, w);
    for (size_t i = 0; i + 1 < up.size(); ++i) ++uses[{up[i], up[i + 1]}].first;
    for (size_t i = 0; i + 1 < down.size(); ++i) ++uses[{down[i], down[i + 1]}].second;
  }
  const uint64_t state_payload = uint64_t(s.q_heads) * (s.head_dim + 2) * 4, o_payload = uint64_t(s.q_heads) * s.head_dim * 4;
  // Per state and per broadcast, from the links that carry only one kind.
  uint64_t per_state = 0, per_bcast = 0;
  for (const MeshLinkResult& l : r.links) {
    uint32_t a = 0, b = 0;
    ASSERT_EQ(std::sscanf(l.name.c_str(), "link.c%u-c%u", &a, &b), 2) << l.name;
    EXPECT_EQ(logged[l.name], l.bytes) << l.name;
    const auto [st, bc] = uses[{a, b}];
    if (st > 0 && bc == 0 && per_state == 0) per_state = logged[l.name] / uint64_t(st);
    if (bc > 0 && st == 0 && per_bcast == 0) per_bcast = logged[l.name] / uint64_t(bc);
  }
  ASSERT_GE(per_state, state_payload);
  ASSERT_GE(per_bcast, o_payload);
  EXPECT_LT(per_state, state_payload + 256) << "more than message headers on top of the state";
  EXPECT_LT(per_bcast, o_payload + 256);
  uint64_t into_root = 0;
  for (const MeshLinkResult& l : r.links) {
    uint32_t a = 0, b = 0;
    std::sscanf(l.name.c_str(), "link.c%u-c%u", &a, &b);
    const auto [st, bc] = uses[{a, b}];
    EXPECT_EQ(logged[l.name], uint64_t(st) * per_state + uint64_t(bc) * per_bcast) << l.name;
    if (b == root) into_root += logged[l.name];
  }
  EXPECT_EQ(into_root, uint64_t(h * w - 1) * per_state);
}

}  // namespace
}  // namespace kb
