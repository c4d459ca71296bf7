// Collectives: LRAB and ring all-reduce, written with tl
// only (kernels/ccl), on meshes of cubes. Each mesh runs in a forked child
// (tb/run/mesh_run.h).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/ccl/all_reduce.h"
#include "models/config/pe_config.h"
#include "models/tl/tl.h"
#include "tb/benches/allreduce_model.h"
#include "tb/run/mesh_run.h"
#include "tests/sim_util.h"

namespace kb {
namespace {

using test::mesh_config;

TEST(AllReduce, RootFormula) {
  // root = (h // 2) * w + w // 2.
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
    [](const auto& param_info) {
      const Case& c = std::get<1>(param_info.param);
      return std::string(std::get<0>(param_info.param) ? "ring_" : "lrab_") + std::to_string(c.h) + "x" +
             std::to_string(c.w) + "x" + std::to_string(c.pes) + "_n" + std::to_string(c.elems);
    });

}  // namespace
}  // namespace kb

namespace kb {
namespace {

// The alpha-beta model (tb/benches/allreduce_model.h, derived in docs/mesh.md) against
// the simulation: within 10% on two mesh shapes and three sizes, for both
// algorithms (timing mode).
class AllReduceModel : public testing::TestWithParam<std::tuple<bool, std::tuple<uint32_t, uint32_t, uint32_t>>> {};

TEST_P(AllReduceModel, SimulationWithinTenPercentOfTheModel) {
  const auto [ring, shape] = GetParam();
  const auto [h, w, pes] = shape;
  const AllReduceAlgo algo = ring ? AllReduceAlgo::kRing : AllReduceAlgo::kLrab;
  const AllReduceOptions opt;
  for (uint64_t bytes : {uint64_t(4) << 20, uint64_t(16) << 20, uint64_t(64) << 20}) {
    MeshRunSpec spec;
    spec.config = mesh_config(h, w, pes, false);
    spec.kernel_name = "model";
    spec.kernel = [=](Tl& tl) {
      const Tensor x = tl.hbm("x", 1, int64_t(bytes / 4), Dtype::kFp32);
      tl.host_random(x, tl.global_pe());
      if (ring) all_reduce_ring(tl, x, opt);
      else all_reduce_lrab(tl, x, opt);
    };
    const MeshRunResult r = run_mesh_isolated(spec);
    ASSERT_TRUE(r.ok) << r.error;
    const double model = all_reduce_model_ps(algo, spec.config, bytes, opt);
    const double ratio = double(r.latency_ps()) / model;
    EXPECT_NEAR(ratio, 1.0, 0.10) << (ring ? "ring " : "lrab ") << bytes << " bytes: simulated "
                                  << r.latency_ps() << " ps, model " << model << " ps";
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, AllReduceModel,
                         testing::Combine(testing::Bool(), testing::Values(std::tuple{2u, 4u, 8u},
                                                                           std::tuple{1u, 2u, 4u},
                                                                           std::tuple{2u, 2u, 2u})),
                         [](const auto& param_info) {
                           const auto& shape = std::get<1>(param_info.param);
                           return std::string(std::get<0>(param_info.param) ? "ring_" : "lrab_") +
                                  std::to_string(std::get<0>(shape)) + "x" + std::to_string(std::get<1>(shape)) +
                                  "x" + std::to_string(std::get<2>(shape));
                         });

}  // namespace
}  // namespace kb

namespace kb {
namespace {

// SPMD: every PE learns where it sits through tl.
TEST(Spmd, EveryPeLearnsItsCubePeAndTheMeshShape) {
  MeshRunSpec spec;
  spec.config = mesh_config(2, 3, 2, false);
  spec.kernel_name = "where";
  spec.kernel = [](Tl& tl) {
    const uint32_t g = tl.global_pe();
    if (tl.mesh_h() != 2 || tl.mesh_w() != 3 || tl.pes_per_cube() != 2 || tl.num_cubes() != 6 ||
        tl.num_pes() != 12 || tl.cube_id() != g / 2 || tl.pe_id() != g % 2) {
      throw KernelError("PE " + std::to_string(g) + " sees cube " + std::to_string(tl.cube_id()) + " pe " +
                        std::to_string(tl.pe_id()));
    }
    tl.cycles(100 * (g + 1));  // each PE's launch ends at its own time
  };
  const MeshRunResult r = run_mesh_isolated(spec);
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.pes.size(), 12u);
  for (const MeshPeResult& p : r.pes) {
    EXPECT_EQ(p.name, "cube" + std::to_string(p.global / 2) + ".pe" + std::to_string(p.global % 2));
    EXPECT_TRUE(p.launched);
    EXPECT_EQ(p.launch.end_ps - p.launch.start_ps, 100000u * (p.global + 1));
  }
}

// A launch on a chosen set of PEs: the others run nothing.
TEST(Spmd, LaunchOnChosenPesOnly) {
  MeshRunSpec spec;
  spec.config = mesh_config(1, 2, 2, true);
  spec.kernel_name = "pair";
  spec.pes = {0, 3};
  spec.kernel = [](Tl& tl) {
    const Tensor t = tl.tcm("t", 4, 4, Dtype::kFp32);
    if (tl.global_pe() == 0) {
      tl.host_write(t, std::vector<float>(16, 7.0f));
      tl.send(t, 3);
    } else {
      tl.recv(t, 0);
      tl.wait();
      if (tl.host_read(t) != std::vector<float>(16, 7.0f)) throw KernelError("PE 3 got other values");
    }
  };
  const MeshRunResult r = run_mesh_isolated(spec);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(r.pes[0].launched);
  EXPECT_FALSE(r.pes[1].launched);
  EXPECT_FALSE(r.pes[2].launched);
  EXPECT_TRUE(r.pes[3].launched);
  EXPECT_EQ(r.pes[1].launch.commands, 0u);
}

}  // namespace
}  // namespace kb

namespace kb {
namespace {

// A transfer that crosses the end of a PE's HBM slice is an address error
// the launch reports, not a route that goes round the mesh; a send no recv
// takes fails the run, naming the message.
TEST(MeshErrors, BurstAcrossASliceEndAndUndeliveredMessages) {
  {
    MeshRunSpec spec;
    spec.config = mesh_config(1, 2, 1, false);
    spec.kernel_name = "cross";
    spec.pes = {0};
    spec.kernel = [](Tl& tl) {
      const Handle h = tl.cpu().declare_at("edge", MemSpace::kHbm, 1, 64, Dtype::kFp32,
                                           hbm_alloc_base(1) - 128, 64);  // 128 bytes in slice 0, 128 in slice 1
      const Tensor t = tl.tcm("t", 1, 64, Dtype::kFp32);
      tl.host_random(t, 1);
      tl.store(tl.tensor(h), t);
    };
    const MeshRunResult r = run_mesh_isolated(spec);
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("TLM_ADDRESS_ERROR_RESPONSE"), std::string::npos) << r.error;
  }
  {
    MeshRunSpec spec;
    spec.config = mesh_config(1, 1, 2, false);
    spec.kernel_name = "unanswered";
    spec.kernel = [](Tl& tl) {
      const Tensor t = tl.tcm("t", 4, 4, Dtype::kFp32);
      tl.host_random(t, 1);
      if (tl.global_pe() == 0) tl.send(t, 1);
    };
    const MeshRunResult r = run_mesh_isolated(spec);
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("cube0.pe1 holds messages no recv took: 64 bytes from PE 0"), std::string::npos) << r.error;
  }
}

}  // namespace
}  // namespace kb
