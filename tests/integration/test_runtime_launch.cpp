// A kernel launched while the simulation runs, from any
// process, through Pe::launch. It starts when launched if the PE is idle,
// else after the launches before it; its cost model is unchanged (the same
// latency as at time 0); sc_start() still returns by itself.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

#include "models/tl/tl.h"
#include "models/top/pe_top.h"
#include "tb/run/runner.h"

namespace kb {
namespace {

constexpr uint64_t kUs = 1000000;  // ps

// A load and a GEMM on it: dispatch, DMA and GEMM time.
void load_gemm(Tl& tl) {
  const Tensor x = tl.hbm("x", 128, 128, Dtype::kBf16);
  const Tensor a = tl.tcm("a", 128, 128, Dtype::kBf16);
  const Tensor c = tl.tcm("c", 128, 128, Dtype::kFp32);
  tl.host_random(x, 1);
  tl.load(a, x);
  tl.dot(c, a, a);
}

// Runs `setup` on a fresh PE (it launches, spawns processes), then the
// simulation; returns the launches and the end time.
nlohmann::json simulate(const std::function<void(Pe&)>& setup) {
  nlohmann::json j = run_function_isolated([&setup] {
    PeTop top(PeConfig{});
    setup(top.pe());
    sc_core::sc_start();
    nlohmann::json r;
    r["launches"] = nlohmann::json::array();
    for (const LaunchResult& l : top.pe().pe_cpu.results())
      r["launches"].push_back({{"kernel", l.kernel}, {"start", l.start_ps}, {"end", l.end_ps},
                               {"error", l.error}, {"commands", l.commands}});
    r["end_ps"] = uint64_t(sc_core::sc_time_stamp().value());
    r["busy"] = top.pe().pe_cpu.busy();
    r["failed"] = top.pe().pe_cpu.failed();
    return r;
  });
  EXPECT_FALSE(j.contains("error")) << j.dump();
  return j;
}

// A thread that waits `at`, then runs `f`.
void at(sc_core::sc_time t, const char* name, std::function<void()> f) {
  sc_core::sc_spawn(
      [t, f] {
        sc_core::wait(t);
        f();
      },
      name);
}

uint64_t latency(const nlohmann::json& l) { return l["end"].get<uint64_t>() - l["start"].get<uint64_t>(); }

// The same kernel launched before sc_start: its latency at time 0.
uint64_t latency_at_zero() {
  static const uint64_t ps = [] {
    const nlohmann::json j = simulate([](Pe& pe) { pe.launch("k", load_gemm); });
    return latency(j["launches"].at(0));
  }();
  return ps;
}

TEST(RuntimeLaunch, FromAThreadStartsAtItsTimeWithTheSameCost) {
  const nlohmann::json j = simulate([](Pe& pe) {
    at(sc_core::sc_time(5, sc_core::SC_US), "late", [&pe] { pe.launch("late", load_gemm); });
  });
  ASSERT_EQ(j["launches"].size(), 1u) << j.dump();
  const auto& l = j["launches"][0];
  EXPECT_EQ(l["kernel"].get<std::string>(), "late");
  EXPECT_EQ(l["error"].get<std::string>(), "");
  EXPECT_EQ(l["start"].get<uint64_t>(), 5 * kUs);
  EXPECT_EQ(l["commands"].get<uint64_t>(), 2u);
  EXPECT_GT(latency(l), 0u);
  EXPECT_EQ(latency(l), latency_at_zero());
  EXPECT_EQ(j["end_ps"].get<uint64_t>(), l["end"].get<uint64_t>());  // sc_start returned by itself
  EXPECT_FALSE(j["busy"].get<bool>());
}

// Launches queue behind each other: two at once, a third made while the
// first runs. Each starts when the one before it ends, each costs what it
// costs alone.
TEST(RuntimeLaunch, LaunchesQueueInOrder) {
  const nlohmann::json j = simulate([](Pe& pe) {
    at(sc_core::sc_time(5, sc_core::SC_US), "two", [&pe] {
      pe.launch("a", load_gemm);
      pe.launch("b", load_gemm);
    });
    at(sc_core::sc_time(5001, sc_core::SC_NS), "third", [&pe] { pe.launch("c", load_gemm); });
  });
  ASSERT_EQ(j["launches"].size(), 3u) << j.dump();
  const auto& ls = j["launches"];
  EXPECT_EQ(ls[0]["kernel"].get<std::string>(), "a");
  EXPECT_EQ(ls[1]["kernel"].get<std::string>(), "b");
  EXPECT_EQ(ls[2]["kernel"].get<std::string>(), "c");
  EXPECT_EQ(ls[0]["start"].get<uint64_t>(), 5 * kUs);
  ASSERT_GT(ls[0]["end"].get<uint64_t>(), 5 * kUs + 1000) << "the third launch is made while the first runs";
  EXPECT_EQ(ls[1]["start"], ls[0]["end"]);
  EXPECT_EQ(ls[2]["start"], ls[1]["end"]);
  for (const auto& l : ls) {
    EXPECT_EQ(l["error"].get<std::string>(), "");
    EXPECT_EQ(latency(l), latency_at_zero());
  }
}

// From a method, and behind a launch made before sc_start that is still
// running; then one from a method when the PE is idle again.
TEST(RuntimeLaunch, FromAMethodBehindALaunchMadeBeforeStart) {
  const nlohmann::json j = simulate([](Pe& pe) {
    pe.launch("first", [](Tl& tl) { tl.cycles(10000); });  // 10 us at 1 GHz
    for (const auto& [t, name] : {std::pair<uint64_t, const char*>{2, "second"}, {50, "third"}}) {
      sc_core::sc_spawn_options opts;
      opts.spawn_method();
      opts.dont_initialize();
      auto* ev = new sc_core::sc_event;  // lives as long as the process
      ev->notify(sc_core::sc_time(double(t), sc_core::SC_US));
      opts.set_sensitivity(ev);
      const std::string kernel = name;
      sc_core::sc_spawn([&pe, kernel] { pe.launch(kernel, load_gemm); }, (std::string("m_") + name).c_str(),
                        &opts);
    }
  });
  ASSERT_EQ(j["launches"].size(), 3u) << j.dump();
  const auto& ls = j["launches"];
  EXPECT_EQ(ls[0]["kernel"].get<std::string>(), "first");
  EXPECT_EQ(ls[0]["start"].get<uint64_t>(), 0u);
  EXPECT_GT(ls[0]["end"].get<uint64_t>(), 2 * kUs);
  EXPECT_EQ(ls[1]["kernel"].get<std::string>(), "second");
  EXPECT_EQ(ls[1]["start"], ls[0]["end"]);
  ASSERT_LT(ls[1]["end"].get<uint64_t>(), 50 * kUs);
  EXPECT_EQ(ls[2]["kernel"].get<std::string>(), "third");
  EXPECT_EQ(ls[2]["start"].get<uint64_t>(), 50 * kUs);
  EXPECT_EQ(latency(ls[2]), latency_at_zero());
}

// After a failed launch no later launch runs; a launch made after the
// failure is refused, and on_launch_failed hears of both.
TEST(RuntimeLaunch, NothingRunsAfterAFailedLaunch) {
  const nlohmann::json j = run_function_isolated([] {
    PeTop top(PeConfig{});
    Pe& pe = top.pe();
    nlohmann::json r;
    r["told"] = nlohmann::json::array();
    pe.pe_cpu.on_launch_failed([&r](const std::string& kernel, const std::string& error) {
      r["told"].push_back({kernel, error, uint64_t(sc_core::sc_time_stamp().value())});
    });
    pe.launch("failing", [](Tl& tl) {
      const Tensor a = tl.tcm("a", 8, 8, Dtype::kFp32);
      tl.cycles(1000);
      tl.load(a, a);  // src must be in HBM
    });
    pe.launch("queued", load_gemm);
    at(sc_core::sc_time(5, sc_core::SC_US), "late", [&pe] { pe.launch("late", load_gemm); });
    sc_core::sc_start();
    r["launches"] = pe.pe_cpu.results().size();
    r["launch_error"] = pe.pe_cpu.results().at(0).error;
    r["failed"] = pe.pe_cpu.failed();
    r["busy"] = pe.pe_cpu.busy();
    return r;
  });
  ASSERT_FALSE(j.contains("error")) << j.dump();
  EXPECT_EQ(j["launches"].get<size_t>(), 1u);
  EXPECT_TRUE(j["failed"].get<bool>());
  EXPECT_FALSE(j["busy"].get<bool>());
  ASSERT_EQ(j["told"].size(), 2u) << j.dump();
  EXPECT_EQ(j["told"][0][0].get<std::string>(), "failing");
  EXPECT_EQ(j["told"][0][1], j["launch_error"]);
  EXPECT_EQ(j["told"][1][0].get<std::string>(), "late");
  EXPECT_EQ(j["told"][1][1].get<std::string>(), "launch of kernel 'late' refused: an earlier launch failed");
  EXPECT_EQ(j["told"][1][2].get<uint64_t>(), 5 * kUs);
}

// Nothing launched: the PE waits for work and sc_start() returns at once.
TEST(RuntimeLaunch, AnIdlePeEndsTheSimulation) {
  const nlohmann::json j = simulate([](Pe&) {});
  EXPECT_EQ(j["launches"].size(), 0u);
  EXPECT_EQ(j["end_ps"].get<uint64_t>(), 0u);
  EXPECT_FALSE(j["busy"].get<bool>());
}

}  // namespace
}  // namespace kb
