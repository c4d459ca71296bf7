// Data mode: the model computes real values and every kernel matches a
// plain C++ reference; timing is identical with and without data; timing
// mode allocates no element storage; kernel-author mistakes are errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kernels/attention/gqa_decode.h"
#include "kernels/gemm/gemm_async.h"
#include "kernels/gemm/gemm_composite.h"
#include "kernels/recipes/softmax_merge.h"
#include "models/mem/sparse_memory.h"
#include "models/pe/engines/dtype_codec.h"
#include "tb/benches/reference.h"
#include "tests/sim_util.h"

namespace kb {
namespace {

using ::testing::HasSubstr;

PeConfig data_config() {
  PeConfig cfg;
  cfg.data_mode = true;
  return cfg;
}

double metric(const RunResult& r, const std::string& name) {
  for (const LaunchResult& l : r.launches)
    for (const auto& [n, v] : l.metrics)
      if (n == name) return v;
  ADD_FAILURE() << "no metric " << name << (r.ok ? "" : ": " + r.error);
  return std::numeric_limits<double>::quiet_NaN();
}

RunResult run_data(const Kernel& k, PeConfig cfg = data_config()) {
  RunSpec spec;
  spec.config = cfg;
  spec.launches = {{"data_kernel", k}};
  RunResult r = run_isolated(spec);
  EXPECT_TRUE(r.ok) << r.error;
  return r;
}

// --- bf16 storage

TEST(Bf16, RoundsToNearestEven) {
  // 1 + 2^-8 is halfway between bf16 1.0 and 1 + 2^-7: ties to even (1.0).
  EXPECT_EQ(round_to_dtype(1.0f + 0x1p-8f, Dtype::kBf16), 1.0f);
  // 1 + 3 x 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: ties to even.
  EXPECT_EQ(round_to_dtype(1.0f + 3 * 0x1p-8f, Dtype::kBf16), 1.0f + 0x1p-6f);
  EXPECT_EQ(round_to_dtype(1.0f + 0x1p-8f + 0x1p-20f, Dtype::kBf16), 1.0f + 0x1p-7f);  // above half
  EXPECT_EQ(round_to_dtype(-2.5f, Dtype::kBf16), -2.5f);  // exact
  EXPECT_TRUE(std::isnan(round_to_dtype(NAN, Dtype::kBf16)));
  EXPECT_EQ(round_to_dtype(INFINITY, Dtype::kBf16), INFINITY);
  EXPECT_EQ(round_to_dtype(1.2345678f, Dtype::kFp32), 1.2345678f);
}

TEST(Bf16, StoredValuesAreRounded) {
  const RunResult r = run_data([](Tl& tl) {
    const Tensor a = tl.tcm("a", 1, 2, Dtype::kBf16);
    tl.host_write(a, {1.0f + 0x1p-8f, 3.14159265f});
    const std::vector<float> v = tl.host_read(a);
    tl.metric("v0", v[0]);
    tl.metric("v1", v[1]);
  });
  EXPECT_EQ(metric(r, "v0"), 1.0);
  EXPECT_EQ(metric(r, "v1"), double(round_to_dtype(3.14159265f, Dtype::kBf16)));
  EXPECT_NE(metric(r, "v1"), double(3.14159265f));
}

// --- GEMM variants against a reference matmul

struct GemmCase {
  int64_t m, n, k;
  Dtype dtype;
};

class GemmData : public ::testing::TestWithParam<GemmCase> {};

TEST_P(GemmData, EveryVariantEqualsReferenceMatmul) {
  const GemmCase c = GetParam();
  const RunResult r = run_data([c](Tl& tl) {
    GemmShape s;
    s.m = c.m, s.n = c.n, s.k = c.k, s.dtype = c.dtype;
    s.tile_m = 64, s.tile_n = 64, s.tile_k = 64;
    using Fn = void (*)(Tl&, const GemmShape&, const GemmTensors&);
    const std::pair<const char*, Fn> variants[] = {{"composite", gemm_composite},
                                                   {"async_full", gemm_async_full},
                                                   {"async_tiled", gemm_async_tiled},
                                                   {"tiled_single_op", gemm_tiled_single_op}};
    uint64_t seed = 11;
    for (const auto& [name, fn] : variants) {
      const GemmTensors t = gemm_inputs(tl, s, seed += 2);
      fn(tl, s, t);
      const ErrorStats e = compare(tl.host_read(t.c), reference_matmul(tl.host_read(t.a), tl.host_read(t.b), s.m, s.n, s.k));
      tl.metric(std::string(name), e.max_rel);
    }
  });
  for (const char* v : {"composite", "async_full", "async_tiled", "tiled_single_op"}) {
    EXPECT_LE(metric(r, v), kDataTolerance) << v;
    std::printf("[ info ] %s %ldx%ldx%ld %s: max rel error %.3g\n", v, long(c.m), long(c.n), long(c.k),
                to_string(c.dtype), metric(r, v));
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, GemmData,
                         ::testing::Values(GemmCase{128, 128, 128, Dtype::kFp32},
                                           GemmCase{96, 200, 130, Dtype::kFp32},  // K % 64 != 0
                                           GemmCase{130, 70, 333, Dtype::kBf16},
                                           GemmCase{64, 256, 1000, Dtype::kBf16}),
                         [](const auto& param_info) {
                           const GemmCase& c = param_info.param;
                           return std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
                                  std::to_string(c.k) + "_" + to_string(c.dtype);
                         });

// A wrong result must be caught: the check is not vacuous.
TEST(GemmData, ReferenceCatchesAWrongOperand) {
  const RunResult r = run_data([](Tl& tl) {
    GemmShape s;
    s.m = 64, s.n = 64, s.k = 64, s.dtype = Dtype::kFp32;
    const GemmTensors t = gemm_inputs(tl, s, 3);
    const GemmTensors wrong{t.b, t.a, t.c};  // A and B swapped: C = B @ A
    gemm_composite(tl, s, wrong);
    tl.metric("err", compare(tl.host_read(t.c), reference_matmul(tl.host_read(t.a), tl.host_read(t.b), 64, 64, 64)).max_rel);
  });
  EXPECT_GT(metric(r, "err"), 0.1);
}

// --- softmax_merge against the closed form

TEST(SoftmaxMergeData, OverSeveralTilesEqualsOnlineSoftmaxAndDirectSoftmax) {
  const int64_t g = 4, T = 96, d = 64, tiles = 3;
  const RunResult r = run_data([=](Tl& tl) {
    std::vector<Tensor> s_tiles;
    for (int64_t t = 0; t < tiles; ++t) {
      s_tiles.push_back(tl.tcm("S" + std::to_string(t), g, T, Dtype::kFp32));
      tl.host_random(s_tiles.back(), 100 + uint64_t(t), -20.0, 20.0);  // high contrast
    }
    const Tensor v = tl.hbm("V", tiles * T, d, Dtype::kFp32);
    tl.host_random(v, 5);
    const Tensor m[2] = {tl.tcm("m0", g, 1, Dtype::kFp32), tl.tcm("m1", g, 1, Dtype::kFp32)};
    SoftmaxMergeState st{m[0], m[1], tl.tcm("l", g, 1, Dtype::kFp32), tl.tcm("O", g, d, Dtype::kFp32)};
    const SoftmaxMergeScratch x{tl.tcm("mt", g, 1, Dtype::kFp32), tl.tcm("corr", g, 1, Dtype::kFp32),
                                tl.tcm("P", g, T, Dtype::kFp32), tl.tcm("rs", g, 1, Dtype::kFp32)};
    tl.fill(m[0], -std::numeric_limits<double>::infinity());
    tl.fill(st.l, 0.0);
    tl.fill(st.o, 0.0);
    // Closed form, in double, applied tile by tile next to the model.
    std::vector<double> rm(size_t(g), -INFINITY), rl(size_t(g), 0.0), ro(size_t(g * d), 0.0);
    const std::vector<float> vv = tl.host_read(v);
    double worst_step = 0;
    for (int64_t t = 0; t < tiles; ++t) {
      st.m_in = m[t % 2];
      st.m_out = m[(t + 1) % 2];
      softmax_merge(tl, s_tiles[size_t(t)], tl.rows(v, t * T, T), st, x);
      const std::vector<float> sv = tl.host_read(s_tiles[size_t(t)]);
      for (int64_t i = 0; i < g; ++i) {
        double mt = -INFINITY;
        for (int64_t j = 0; j < T; ++j) mt = std::max(mt, double(sv[size_t(i * T + j)]));
        const double mn = std::max(rm[size_t(i)], mt), corr = std::exp(rm[size_t(i)] - mn);
        double rs = 0;
        for (int64_t c = 0; c < d; ++c) ro[size_t(i * d + c)] *= corr;
        for (int64_t j = 0; j < T; ++j) {
          const double p = std::exp(double(sv[size_t(i * T + j)]) - mn);
          rs += p;
          for (int64_t c = 0; c < d; ++c) ro[size_t(i * d + c)] += p * vv[size_t((t * T + j) * d + c)];
        }
        rl[size_t(i)] = rl[size_t(i)] * corr + rs;
        rm[size_t(i)] = mn;
      }
      // The model's state after this tile equals the closed-form update.
      worst_step = std::max(worst_step, compare(tl.host_read(st.o), ro).max_rel);
      worst_step = std::max(worst_step, compare(tl.host_read(st.l), rl).max_rel);
      worst_step = std::max(worst_step, compare(tl.host_read(st.m_out), rm).max_rel);
    }
    tl.metric("online_update_err", worst_step);
    // Final O / l against softmax(S) V computed directly over all tiles.
    tl.div_bcast(st.o, st.o, st.l);
    std::vector<double> direct(size_t(g * d), 0.0);
    for (int64_t i = 0; i < g; ++i) {
      std::vector<double> all;
      for (int64_t t = 0; t < tiles; ++t) {
        const std::vector<float> sv = tl.host_read(s_tiles[size_t(t)]);
        for (int64_t j = 0; j < T; ++j) all.push_back(sv[size_t(i * T + j)]);
      }
      const double mx = *std::max_element(all.begin(), all.end());
      double sum = 0;
      for (double& a : all) sum += (a = std::exp(a - mx));
      for (size_t j = 0; j < all.size(); ++j)
        for (int64_t c = 0; c < d; ++c) direct[size_t(i * d + c)] += all[j] / sum * vv[j * size_t(d) + size_t(c)];
    }
    tl.metric("direct_softmax_err", compare(tl.host_read(st.o), direct).max_rel);
  });
  EXPECT_LE(metric(r, "online_update_err"), kDataTolerance);
  EXPECT_LE(metric(r, "direct_softmax_err"), kDataTolerance);
}

// --- GQA decode: opt2 == opt3 == reference

class GqaData : public ::testing::TestWithParam<Dtype> {};

TEST_P(GqaData, Opt2AndOpt3EqualReferenceAttentionForHighContrastInputs) {
  const Dtype dtype = GetParam();
  const RunResult r = run_data([dtype](Tl& tl) {
    GqaShape s;
    s.q_heads = 8, s.kv_heads = 2, s.head_dim = 64;  // 4 query heads per KV group
    s.context = 300, s.kv_tile = 128;                // a 44-token tail tile
    s.dtype = dtype;
    s.input_range = 6.0;  // scaled scores spread about +/-40
    const GqaTensors a = gqa_inputs(tl, s, 21);
    GqaTensors b = a;
    b.out = tl.hbm("O_opt3", s.q_heads, s.head_dim, Dtype::kFp32);
    gqa_decode_opt2(tl, s, a);
    gqa_decode_opt3(tl, s, b);
    const std::vector<float> q = tl.host_read(a.q), k = tl.host_read(a.k), v = tl.host_read(a.v);
    // The spread of the scaled scores the kernels saw.
    double lo = INFINITY, hi = -INFINITY;
    for (int64_t qh = 0; qh < s.q_heads; ++qh)
      for (int64_t t = 0; t < s.context; ++t) {
        double dot = 0;
        const int64_t h = qh / 4;
        for (int64_t j = 0; j < s.head_dim; ++j)
          dot += double(q[size_t(qh * s.head_dim + j)]) * k[size_t((h * s.context + t) * s.head_dim + j)];
        dot /= std::sqrt(double(s.head_dim));
        lo = std::min(lo, dot), hi = std::max(hi, dot);
      }
    tl.metric("score_min", lo);
    tl.metric("score_max", hi);
    const std::vector<double> ref =
        reference_gqa_decode(q, k, v, s.q_heads, s.kv_heads, s.head_dim, s.context);
    const std::vector<float> o2 = tl.host_read(a.out), o3 = tl.host_read(b.out);
    tl.metric("opt2_err", compare(o2, ref).max_rel);
    tl.metric("opt3_err", compare(o3, ref).max_rel);
    tl.metric("opt2_vs_opt3", compare(o2, std::vector<double>(o3.begin(), o3.end())).max_rel);
  });
  std::printf("[ info ] %s: scores in [%.1f, %.1f]; max rel error opt2 %.3g, opt3 %.3g, opt2 vs opt3 %.3g\n",
              to_string(dtype), metric(r, "score_min"), metric(r, "score_max"), metric(r, "opt2_err"),
              metric(r, "opt3_err"), metric(r, "opt2_vs_opt3"));
  EXPECT_LE(metric(r, "score_min"), -30.0);  // high contrast: softmax far from uniform
  EXPECT_GE(metric(r, "score_max"), 30.0);
  // bf16 only rounds the inputs, which the reference reads back; every
  // accumulation is fp32 in both kernels, so one tolerance serves both.
  EXPECT_LE(metric(r, "opt2_err"), kDataTolerance);
  EXPECT_LE(metric(r, "opt3_err"), kDataTolerance);
  EXPECT_LE(metric(r, "opt2_vs_opt3"), kDataTolerance);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, GqaData, ::testing::Values(Dtype::kFp32, Dtype::kBf16),
                         [](const auto& param_info) { return std::string(to_string(param_info.param)); });

// --- timing is untouched, and timing mode stays lean

std::string csv(const RunResult& r) {
  std::string s;
  for (const OpRecord& rec : r.records) s += op_log_csv_row(rec) + "\n";
  return s;
}

void expect_same_timing(const Kernel& k) {
  RunSpec spec;
  spec.launches = {{"k", k}};
  spec.keep_records = true;
  const RunResult timing = run_isolated(spec);
  spec.config.data_mode = true;
  const RunResult data = run_isolated(spec);
  ASSERT_TRUE(timing.ok) << timing.error;
  ASSERT_TRUE(data.ok) << data.error;
  EXPECT_EQ(csv(timing), csv(data));
  EXPECT_EQ(timing.latency_ps(), data.latency_ps());
  EXPECT_EQ(timing.data_bytes, 0u);  // nothing stored per element
  EXPECT_GT(data.data_bytes, 0u);
}

TEST(TimingIdentity, GqaDecodeOpt2AndOpt3) {
  GqaShape s;
  s.q_heads = 8, s.kv_heads = 2, s.context = 300;
  expect_same_timing([s](Tl& tl) {
    const GqaTensors t = gqa_inputs(tl, s);
    gqa_decode_opt2(tl, s, t);
    gqa_decode_opt3(tl, s, t);
  });
}

TEST(TimingIdentity, GemmVariants) {
  GemmShape s;
  s.k = 200;
  expect_same_timing([s](Tl& tl) {
    const GemmTensors t = gemm_inputs(tl, s);
    gemm_composite(tl, s, t);
    gemm_async_full(tl, s, t);
    gemm_async_tiled(tl, s, t);
  });
}

// --- kernel-author mistakes, in both modes

class BadInput : public ::testing::TestWithParam<bool> {
 protected:
  std::string error_of(const Kernel& k) {
    RunSpec spec;
    spec.config.data_mode = GetParam();
    spec.launches = {{"bad_kernel", k}};
    const RunResult r = run_isolated(spec);
    EXPECT_FALSE(r.ok);
    return r.error;
  }
};

TEST_P(BadInput, ReadingAnUninitialisedTensor) {
  const std::string e = error_of([](Tl& tl) {
    const Tensor x = tl.hbm("x", 16, 16, Dtype::kFp32);
    const Tensor a = tl.tcm("a", 16, 16, Dtype::kFp32);
    tl.load(a, x);
  });
  EXPECT_THAT(e, HasSubstr("kernel 'bad_kernel', command #1 DmaReadCmd"));
  EXPECT_THAT(e, HasSubstr("reads uninitialised src 'x' [16, 16] fp32 hbm"));
}

TEST_P(BadInput, ReadingAPartlyWrittenTensor) {
  const std::string e = error_of([](Tl& tl) {
    const Tensor a = tl.tcm("a", 16, 16, Dtype::kFp32);
    const Tensor b = tl.tcm("b", 16, 16, Dtype::kFp32);
    tl.fill(tl.view(a, 0, 8), 1.0);  // only the top half
    tl.exp(b, a);
  });
  EXPECT_THAT(e, HasSubstr("command #2 MathCmd exp"));
  EXPECT_THAT(e, HasSubstr("reads uninitialised src_a 'a' [16, 16]"));
}

TEST_P(BadInput, UninitialisedOperandInsideAComposite) {
  const std::string e = error_of([](Tl& tl) {
    const Tensor a = tl.tcm("a", 8, 8, Dtype::kFp32), b = tl.tcm("b", 8, 8, Dtype::kFp32);
    tl.composite("c", {math_op(MathOp::kExp, OpScope::kPrologue, b, {a})}, {b});
  });
  EXPECT_THAT(e, HasSubstr("CompositeCmd 'c' op 0 (exp): reads uninitialised src_a 'a' [8, 8]"));
}

TEST_P(BadInput, DotShapeMismatch) {
  const std::string e = error_of([](Tl& tl) {
    const Tensor a = tl.tcm("a", 8, 16, Dtype::kFp32), b = tl.tcm("b", 8, 16, Dtype::kFp32);
    const Tensor c = tl.tcm("c", 8, 8, Dtype::kFp32);
    test::init(tl, {a, b});
    tl.dot(c, a, b);  // needs transpose_b
  });
  EXPECT_THAT(e, HasSubstr("kernel 'bad_kernel', command #1 GemmCmd: shape mismatch: a 'a' [8, 16]"));
  EXPECT_THAT(e, HasSubstr("b 'b' [8, 16]"));
}

TEST_P(BadInput, ElementwiseShapeMismatch) {
  const std::string e = error_of([](Tl& tl) {
    const Tensor a = tl.tcm("a", 8, 16, Dtype::kFp32), b = tl.tcm("b", 16, 8, Dtype::kFp32);
    test::init(tl, {a, b});
    tl.mul(a, a, b);
  });
  EXPECT_THAT(e, HasSubstr("command #1 MathCmd mul: shape mismatch: src_b 'b' [16, 8] fp32 tcm vs out 'a' [8, 16]"));
}

TEST_P(BadInput, OutOfBoundsLoad) {
  const std::string e = error_of([](Tl& tl) {
    const Tensor x = tl.hbm("x", 100, 16, Dtype::kFp32);
    const Tensor a = tl.tcm("a", 32, 16, Dtype::kFp32);
    test::init(tl, {x});
    tl.load(a, tl.rows(x, 80, 32));  // rows 80..112 of 100
  });
  EXPECT_THAT(e, HasSubstr("kernel 'bad_kernel'"));
  EXPECT_THAT(e, HasSubstr("view rows [80, 112) x cols [0, 16) is out of bounds of 'x' [100, 16] fp32 hbm"));
}

TEST_P(BadInput, OutOfBoundsStore) {
  const std::string e = error_of([](Tl& tl) {
    const Tensor y = tl.hbm("y", 64, 64, Dtype::kFp32);
    const Tensor a = tl.tcm("a", 64, 32, Dtype::kFp32);
    tl.fill(a, 0.0);
    tl.store(tl.view(y, 0, 64, 48, 32), a);  // cols 48..80 of 64
  });
  EXPECT_THAT(e, HasSubstr("kernel 'bad_kernel'"));
  EXPECT_THAT(e, HasSubstr("cols [48, 80) is out of bounds of 'y' [64, 64]"));
}

TEST_P(BadInput, LoadShapeMismatch) {
  const std::string e = error_of([](Tl& tl) {
    const Tensor x = tl.hbm("x", 64, 64, Dtype::kFp32);
    const Tensor a = tl.tcm("a", 32, 64, Dtype::kFp32);
    test::init(tl, {x});
    tl.load(a, x);
  });
  EXPECT_THAT(e, HasSubstr("command #1 DmaReadCmd: shape mismatch: dst 'a' [32, 64] fp32 tcm vs src 'x' [64, 64] fp32 hbm"));
}


// --- sizes and spans computed with checked arithmetic. Each of
// these was accepted before: the products overflowed (signed overflow,
// undefined) and wrapped to a small or negative figure.

TEST_P(BadInput, HbmTensorWhoseElementsOverflow) {
  const std::string e = error_of([](Tl& tl) { tl.hbm("x", int64_t(1) << 32, int64_t(1) << 32, Dtype::kFp32); });
  EXPECT_EQ(e, "kernel 'bad_kernel': tensor 'x' [4294967296, 4294967296] fp32 hbm at 0x10000000000: spans more "
               "than 2^63 - 1 elements ((rows - 1) x row stride 4294967296 + cols)");
}

TEST_P(BadInput, HbmTensorWhoseBytesOverflow) {
  // 2^62 elements fit in int64, their 2^64 bytes do not (wrapped to 0 bytes).
  const std::string e = error_of([](Tl& tl) { tl.hbm("x", int64_t(1) << 31, int64_t(1) << 31, Dtype::kFp32); });
  EXPECT_EQ(e, "kernel 'bad_kernel': tensor 'x' [2147483648, 2147483648] fp32 hbm at 0x10000000000: its span of "
               "4611686018427387904 elements x 4 bytes exceeds the 64-bit address space");
}

TEST_P(BadInput, TcmTensorWhoseBytesOverflow) {
  // 2^31 x 2^31 x 4 = 2^64 bytes: wrapped to 0 and "fitted" in TCM.
  const std::string e = error_of([](Tl& tl) { tl.tcm("a", int64_t(1) << 31, int64_t(1) << 31, Dtype::kFp32); });
  EXPECT_EQ(e, "kernel 'bad_kernel': tensor 'a' (2147483648 x 2147483648 x 4 bytes) does not fit in TCM: 0 of "
               "4194304 bytes used (pe.attrs.tcm.size_bytes)");
}

TEST_P(BadInput, HbmAllocationCannotWrapPast2To64) {
  // Three 2^62-byte tensors fit above 0x10000000000; a fourth would wrap
  // into TCM's addresses.
  const std::string e = error_of([](Tl& tl) {
    for (const char* n : {"a", "b", "c", "d"}) tl.hbm(n, int64_t(1) << 31, int64_t(1) << 31, Dtype::kInt8);
  });
  EXPECT_EQ(e, "kernel 'bad_kernel': tensor 'd' [2147483648, 2147483648] int8 hbm at 0xc000010000000000: "
               "its 4611686018427387904 bytes run past the end of the 64-bit address space");
}

// A tensor ending in the last 64 bytes below 2^64 leaves no aligned address
// for the next (the bump allocator saturates instead of wrapping to 0).
TEST_P(BadInput, HbmUsedUpToTheEnd) {
  const std::string e = error_of([](Tl& tl) {
    // Two int8 tensors from 0x10000000000: b, 64-byte aligned after a, ends
    // at 2^64 - 8, whose next 64-byte boundary would be 2^64.
    const int64_t half = int64_t((~uint64_t(0) - (uint64_t(1) << 40) - 15) / 2);
    tl.hbm("a", 1, half, Dtype::kInt8);
    tl.hbm("b", 1, half, Dtype::kInt8);
    tl.hbm("c", 1, 1, Dtype::kInt8);
  });
  EXPECT_EQ(e, "kernel 'bad_kernel': tensor 'c' does not fit in HBM: earlier tensors use its addresses up to the "
               "end of the 64-bit address space");
}

TEST_P(BadInput, ViewWhoseEndOverflows) {
  const std::string e = error_of([](Tl& tl) {
    const Tensor x = tl.hbm("x", 100, 16, Dtype::kFp32);
    tl.view(x, 1, std::numeric_limits<int64_t>::max());
  });
  EXPECT_EQ(e, "kernel 'bad_kernel': view rows [1, 1 + 9223372036854775807) x cols [0, 16) is out of bounds "
               "of 'x' [100, 16] fp32 hbm");
}

TEST_P(BadInput, ViewFromAColumnFarOutside) {
  const std::string e = error_of([](Tl& tl) {
    const Tensor x = tl.hbm("x", 100, 16, Dtype::kFp32);
    tl.view(x, 0, 1, std::numeric_limits<int64_t>::min());  // all columns from there
  });
  EXPECT_EQ(e, "kernel 'bad_kernel': view rows [0, 1) x cols [-9223372036854775808, -9223372036854775808) is "
               "out of bounds of 'x' [100, 16] fp32 hbm");
}

// --- a memory's store never writes past a page. The table keeps
// elements aligned (so they never straddle a 64 KiB page), but the store
// does not rely on it: bytes across two pages, or across 2^64, land byte
// for byte where their address says. Before, an fp32 two bytes before a
// page's end wrote past the end of the first page's allocation.

TEST(SparseMemoryPages, BytesStraddlingTwoPages) {
  SparseMemory mem;
  const uint64_t page = uint64_t(1) << 16;
  const uint8_t in[4] = {1, 2, 3, 4};
  mem.write(page - 2, in, 4);
  uint8_t out[4] = {};
  mem.read(page - 2, out, 4);
  EXPECT_EQ(std::vector<uint8_t>(out, out + 4), std::vector<uint8_t>(in, in + 4));
  uint8_t hi[2] = {};
  mem.read(page, hi, 2);  // the second page holds the upper half
  EXPECT_EQ(hi[0], 3);
  EXPECT_EQ(hi[1], 4);
  EXPECT_EQ(mem.bytes(), 2 * page);
}

TEST(SparseMemoryPages, BytesAcross2To64) {
  SparseMemory mem;
  const uint8_t in[4] = {5, 6, 7, 8};
  mem.write(~uint64_t(0) - 1, in, 4);
  uint8_t low[2] = {};
  mem.read(0, low, 2);  // the upper half wrapped to address 0
  EXPECT_EQ(low[0], 7);
  EXPECT_EQ(low[1], 8);
  EXPECT_EQ(mem.bytes(), uint64_t(2) << 16);
}

TEST(SparseMemoryPages, UnwrittenBytesReadAsZeroAndAllocateNothing) {
  SparseMemory mem;
  uint8_t out[8] = {9, 9, 9, 9, 9, 9, 9, 9};
  mem.read(12345, out, 8);
  for (uint8_t b : out) EXPECT_EQ(b, 0);
  EXPECT_EQ(mem.bytes(), 0u);
}

INSTANTIATE_TEST_SUITE_P(BothModes, BadInput, ::testing::Bool(),
                         [](const auto& param_info) { return std::string(param_info.param ? "data" : "timing"); });

}  // namespace
}  // namespace kb

namespace kb {
namespace {

// Data mode moves a host access's every element in zero simulated time, so
// it is bounded (PeCpu::kMaxHostElements): a fill of a 2^40-element tensor
// fails the launch at once instead of running for hours.
TEST(DataModeHostAccess, AFillPastTheBoundFailsTheLaunchBeforeWriting) {
  RunSpec spec;
  spec.config.data_mode = true;
  spec.launches = {{"huge", [](Tl& tl) {
                      const Tensor x = tl.hbm("x", int64_t(1) << 20, int64_t(1) << 20, Dtype::kBf16);
                      tl.host_random(x, 1);
                    }}};
  const RunResult r = run_isolated(spec);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "kernel 'huge': host fill of 'x' [1048576, 1048576] bf16 hbm: 1099511627776 elements, more than "
                     "data mode's 67108864 per host access");
  EXPECT_EQ(r.data_bytes, 0u);  // nothing was written
}

}  // namespace
}  // namespace kb
