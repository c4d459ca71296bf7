// Collectives (issue 14 item 6): LRAB and ring all-reduce, written with tl
// only (kernels/ccl), on meshes of cubes. Each mesh runs in a forked child
// (tb/mesh_run.h).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/ccl/all_reduce.h"
#include "models/config/pe_config.h"
#include "models/pe/tl.h"
#include "tb/mesh_run.h"

namespace kb {
namespace {

PeConfig mesh_config(uint32_t h, uint32_t w, uint32_t pes, bool data) {
  PeConfig cfg;
  cfg.topology.mesh.h = h;
  cfg.topology.mesh.w = w;
  cfg.topology.cube.pes = pes;
  cfg.data_mode = data;
  return cfg;
}

TEST(AllReduce, RootFormula) {
  // root = (h // 2) * w + w // 2 (ORIGIN-NOTES "The machine").
  EXPECT_EQ(lrab_root(1, 1), 0u);
  EXPECT_EQ(lrab_root(2, 4), 6u);
  EXPECT_EQ(lrab_root(4, 2), 5u);
  EXPECT_EQ(lrab_root(4, 4), 10u);
  EXPECT_EQ(lrab_root(3, 5), 7u);
}

TEST(AllReduce, RingOrderVisitsEveryPeOnceThroughNeighbouringCubes) {
  for (auto [h, w, p] : {std::tuple{2u, 4u, 8u}, {3u, 5u, 2u}, {1u, 1u, 3u}, {4u, 1u, 1u}}) {
    const std::vector<uint32_t> order = ring_order(h, w, p);
    ASSERT_EQ(order.size(), size_t(h * w * p));
    std::vector<bool> seen(order.size());
    for (size_t i = 0; i < order.size(); ++i) {
      ASSERT_FALSE(seen.at(order[i]));
      seen[order[i]] = true;
      if (i == 0) continue;
      const uint32_t a = order[i - 1] / p, b = order[i] / p;
      const int dx = std::abs(int(a % w) - int(b % w)), dy = std::abs(int(a / w) - int(b / w));
      EXPECT_LE(dx + dy, 1) << "cubes " << a << " -> " << b;
    }
  }
}

// Every PE's x holds small integers (exact in fp32, and so are their sums);
// after the all-reduce each PE compares its x with the sum it expects.
Kernel all_reduce_checked(bool ring, int64_t elems, AllReduceOptions opt) {
  return [=](Tl& tl) {
    auto value = [](uint32_t pe, int64_t i) { return float(int64_t(pe * 7 + i * 3) % 13 - 6); };
    const Tensor x = tl.hbm("x", 1, elems, Dtype::kFp32);
    std::vector<float> mine(static_cast<size_t>(elems)), sum(static_cast<size_t>(elems), 0.0f);
    for (int64_t i = 0; i < elems; ++i) {
      mine[size_t(i)] = value(tl.global_pe(), i);
      for (uint32_t g = 0; g < tl.num_pes(); ++g) sum[size_t(i)] += value(g, i);
    }
    tl.host_write(x, mine);
    if (ring) all_reduce_ring(tl, x, opt);
    else all_reduce_lrab(tl, x, opt);
    tl.wait();
    const std::vector<float> got = tl.host_read(x);
    for (int64_t i = 0; i < elems; ++i) {
      if (got[size_t(i)] != sum[size_t(i)]) {
        throw KernelError("PE " + std::to_string(tl.global_pe()) + " element " + std::to_string(i) + ": " +
                          std::to_string(got[size_t(i)]) + ", expected " + std::to_string(sum[size_t(i)]));
      }
    }
  };
}

struct Case {
  uint32_t h, w, pes;
  int64_t elems, chunk;
};

class AllReduceData : public testing::TestWithParam<std::tuple<bool, Case>> {};

TEST_P(AllReduceData, EveryPeHoldsTheExactSum) {
  const auto [ring, c] = GetParam();
  MeshRunSpec spec;
  spec.config = mesh_config(c.h, c.w, c.pes, true);
  spec.kernel_name = ring ? "ring" : "lrab";
  spec.kernel = all_reduce_checked(ring, c.elems, AllReduceOptions{c.chunk, 2});
  const MeshRunResult r = run_mesh_isolated(spec);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.pes.size(), size_t(c.h * c.w * c.pes));
  if (c.h * c.w * c.pes > 1) {
    EXPECT_GT(r.latency_ps(), 0u);
  }
}

// 1, 2, 8 and 64 PEs; uneven chunks, ring segments that do not divide, and
// (64 PEs, 50 elements) segments that are empty.
INSTANTIATE_TEST_SUITE_P(
    Meshes, AllReduceData,
    testing::Combine(testing::Bool(),
                     testing::Values(Case{1, 1, 1, 300, 64}, Case{1, 1, 2, 1000, 96}, Case{1, 1, 8, 1000, 96},
                                     Case{1, 2, 1, 777, 128}, Case{2, 4, 8, 1000, 64}, Case{2, 4, 8, 50, 16},
                                     Case{3, 5, 1, 333, 32})),
    [](const auto& p) {
      const Case& c = std::get<1>(p.param);
      return std::string(std::get<0>(p.param) ? "ring_" : "lrab_") + std::to_string(c.h) + "x" +
             std::to_string(c.w) + "x" + std::to_string(c.pes) + "_n" + std::to_string(c.elems);
    });

}  // namespace
}  // namespace kb
