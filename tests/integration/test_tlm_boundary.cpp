// The PE as a TLM-2.0 component. A base-protocol checker
// (tests/tlm/base_protocol_checker.h) sits on every binding of the PE while
// real kernels run, in timing and data mode; HBM is a memory target outside
// the PE whose bandwidth is shared; data travels in the payloads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "models/mem/address_map.h"
#include "models/mem/sparse_memory.h"
#include "models/pe/engines/engine_timing.h"
#include "models/pe/engines/pe_dma.h"
#include "models/pe/engines/pe_gemm.h"
#include "models/pe/engines/pe_math.h"
#include "models/pe/engines/pe_tcm.h"
#include "models/tl/tl.h"
#include "models/top/pe_top.h"
#include "tb/benches/bench_registry.h"
#include "tb/run/runner.h"
#include "tests/tlm/base_protocol_checker.h"

namespace kb {
namespace {

using test::BaseProtocolChecker;

// Puts a checker on a binding and keeps it for the report.
struct Checked {
  std::vector<std::unique_ptr<BaseProtocolChecker>> checkers;
  std::vector<std::string> links;
  LinkBinder binder() {
    return [this](tlm::tlm_initiator_socket<32>& from, TargetSocketBase& to, const std::string& link) {
      checkers.push_back(std::make_unique<BaseProtocolChecker>(
          sc_core::sc_gen_unique_name("checker")));
      from.bind(checkers.back()->in);
      checkers.back()->out.bind(to);
      links.push_back(link);
    };
  }
  nlohmann::json report() const {
    nlohmann::json j;
    j["violations"] = BaseProtocolChecker::violation_count();
    j["first"] = nlohmann::json::array();
    for (size_t i = 0; i < BaseProtocolChecker::violations().size() && i < 5; ++i)
      j["first"].push_back(BaseProtocolChecker::violations()[i]);
    for (size_t i = 0; i < checkers.size(); ++i) j["transactions"][links[i]] = checkers[i]->transactions();
    return j;
  }
};

std::vector<std::pair<std::string, Kernel>> bench_launches(const std::string& bench,
                                                           const std::vector<std::string>& overrides,
                                                           const PeConfig& cfg) {
  register_builtin_benches();
  const Bench& b = BenchRegistry::instance().get(bench);
  return b.launches(BenchRegistry::instance().params(b, overrides), cfg);
}

// Runs `launches` on a PE whose every binding (and its `mem`) is checked.
nlohmann::json run_checked(const std::vector<std::pair<std::string, Kernel>>& launches, bool data) {
  return run_function_isolated([&] {
    PeConfig cfg;
    cfg.data_mode = data;
    Checked c;
    PeTop top(cfg, 1, c.binder(), c.binder());
    for (const auto& [name, k] : launches) top.pe().pe_cpu.launch(name, k);
    sc_core::sc_start();
    nlohmann::json j = c.report();
    for (const LaunchResult& l : top.pe().pe_cpu.results()) j["errors"].push_back(l.error);
    j["launches"] = top.pe().pe_cpu.results().size();
    return j;
  });
}

struct Case {
  const char* name;
  bool data;
};

class Compliance : public ::testing::TestWithParam<bool> {};

void expect_clean(const nlohmann::json& j, size_t launches) {
  ASSERT_FALSE(j.contains("error")) << j.dump();
  EXPECT_EQ(j["violations"].get<uint64_t>(), 0u) << j["first"].dump(1);
  EXPECT_EQ(j["launches"].get<size_t>(), launches);
  // The bindings: cmd, PE_REGS's queue (idle here), a stage link per
  // engine, PE_CPU's, PE_DMA's and PE_IPC's memory sockets, a data socket
  // per engine, the bus to TCM, and mem (PE_IPC's idle here): 17 for five
  // engines.
  EXPECT_EQ(j["transactions"].size(), size_t(2 + kNumEngines + 3 + kNumEngines + 2)) << j["transactions"].dump(1);
  EXPECT_EQ(j["transactions"]["pe.pe_regs.queue -> pe.pe_scheduler.in"].get<uint64_t>(), 0u);
}

TEST_P(Compliance, GqaDecodeOpt2AndOpt3) {
  const bool data = GetParam();
  const nlohmann::json j = run_checked(
      bench_launches("gqa-decode", {"context=384", "q_heads=8", "kv_heads=2"}, PeConfig{}), data);
  expect_clean(j, 2);
  for (const auto& e : j["errors"]) EXPECT_EQ(e.get<std::string>(), "");
  const auto& t = j["transactions"];
  EXPECT_GT(t["pe.pe_cpu.cmd -> pe.pe_scheduler.in"].get<uint64_t>(), 100u);
  EXPECT_GT(t["pe.pe_dma.mem -> pe.pe_bus.in"].get<uint64_t>(), 0u);
  EXPECT_GT(t["pe.mem -> interconnect.in"].get<uint64_t>(), 0u);
  // Engines reach TCM through their data sockets only in data mode.
  EXPECT_EQ(t["pe.pe_gemm.data -> pe.pe_bus.in"].get<uint64_t>() > 0, data);
}

TEST_P(Compliance, CompositeGemm) {
  const nlohmann::json j =
      run_checked(bench_launches("gemm-composite", {"m=256", "n=192", "k=320"}, PeConfig{}), GetParam());
  expect_clean(j, 1);
  EXPECT_EQ(j["errors"][0].get<std::string>(), "");
}

TEST_P(Compliance, FailingKernel) {
  // Commands run, then a shape mismatch ends the launch.
  const nlohmann::json j = run_checked(
      {{"failing", [](Tl& tl) {
          const Tensor x = tl.hbm("x", 64, 64, Dtype::kBf16);
          const Tensor a = tl.tcm("a", 64, 64, Dtype::kBf16);
          const Tensor b = tl.tcm("b", 32, 64, Dtype::kBf16);
          tl.host_random(x, 1);
          tl.load(a, x);
          tl.copy(b, a);  // shapes differ
        }}},
      GetParam());
  expect_clean(j, 1);
  EXPECT_NE(j["errors"][0].get<std::string>().find("shape"), std::string::npos) << j.dump();
}

INSTANTIATE_TEST_SUITE_P(BothModes, Compliance, ::testing::Bool(),
                         [](const auto& p) { return std::string(p.param ? "data" : "timing"); });

// --- HBM: bandwidth is state, shared by its initiators.

// n loads of `bytes` each from HBM into TCM, one after another (each
// writes the same buffer: WAW orders them): a DMA-bound stream.
Kernel stream_kernel(int n, int64_t rows) {
  return [n, rows](Tl& tl) {
    const Tensor buf = tl.tcm("buf", rows, 1024, Dtype::kBf16);
    for (int i = 0; i < n; ++i) {
      const Tensor src = tl.hbm("src" + std::to_string(i), rows, 1024, Dtype::kBf16);
      tl.host_random(src, uint64_t(i + 1));
      tl.load(buf, src);
    }
  };
}

TEST(HbmContention, TwoStreamsAtFullBandwidthEachTakeAboutTwiceAsLong) {
  const int n = 8;
  const int64_t rows = 512;  // 1 MiB per load
  const nlohmann::json j = run_function_isolated([&] {
    PeConfig cfg;
    PeTop one(cfg);
    one.pe().pe_cpu.launch("alone", stream_kernel(n, rows));
    sc_core::sc_start();
    return nlohmann::json{{"alone", one.pe().pe_cpu.results().at(0).latency_ps()}};
  });
  ASSERT_FALSE(j.contains("error")) << j.dump();
  const nlohmann::json k = run_function_isolated([&] {
    PeConfig cfg;
    PeTop two(cfg, 2);
    two.pe(0).pe_cpu.launch("a", stream_kernel(n, rows));
    two.pe(1).pe_cpu.launch("b", stream_kernel(n, rows));
    sc_core::sc_start();
    return nlohmann::json{{"a", two.pe(0).pe_cpu.results().at(0).latency_ps()},
                          {"b", two.pe(1).pe_cpu.results().at(0).latency_ps()},
                          {"hbm_transactions", two.hbm().transactions()}};
  });
  ASSERT_FALSE(k.contains("error")) << k.dump();
  const double alone = j["alone"].get<double>();
  // Alone: n DMA stages of the formula, plus the dispatch of the first.
  const PeConfig cfg;
  Stage s;
  s.kind = RecordKind::kDmaRead;
  s.bytes = uint64_t(rows) * 1024 * 2;
  const double stage_ps = double(dma_cycles(cfg, s)) * 1000.0 / cfg.clock_freq_ghz;
  EXPECT_GE(alone, n * stage_ps);
  EXPECT_LT(alone, n * stage_ps * 1.02);
  // Together the pipe never idles: the two streams' 2n transfers end one
  // after another, so the later stream ends after 2n transfers (plus one
  // setup and latency), the earlier one a transfer before it.
  const double transfer_ps = std::ceil(double(s.bytes) / cfg.hbm_bytes_per_cycle()) * 1000.0 / cfg.clock_freq_ghz;
  const double later = std::max(k["a"].get<double>(), k["b"].get<double>());
  const double earlier = std::min(k["a"].get<double>(), k["b"].get<double>());
  EXPECT_GE(later, 2 * n * transfer_ps);
  EXPECT_LT(later, 2 * n * transfer_ps + 2 * (stage_ps - transfer_ps) + 2000.0);
  EXPECT_GE(earlier, (2 * n - 1) * transfer_ps);
  // About twice as long as alone, each.
  for (const char* pe : {"a", "b"}) {
    const double ratio = k[pe].get<double>() / alone;
    EXPECT_GT(ratio, 1.75) << pe;
    EXPECT_LT(ratio, 2.05) << pe;
  }
  EXPECT_GE(k["hbm_transactions"].get<uint64_t>(), uint64_t(2 * n));
}

// --- HBM as a memory target: data mode values, debug transport, errors.

struct Poker : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Poker> out;
  std::function<void(Poker&)> body;
  Poker(sc_core::sc_module_name n, std::function<void(Poker&)> f) : sc_module(n), out("out"), body(std::move(f)) {
    SC_HAS_PROCESS(Poker);
    SC_THREAD(run);
  }
  void run() { body(*this); }
  // One b_transport; returns the response.
  tlm::tlm_response_status access(tlm::tlm_command cmd, uint64_t address, void* data, unsigned n,
                                  sc_core::sc_time* took = nullptr) {
    tlm::tlm_generic_payload p;
    p.set_command(cmd);
    p.set_address(address);
    p.set_data_ptr(static_cast<unsigned char*>(data));
    p.set_data_length(n);
    p.set_streaming_width(n);
    p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    out->b_transport(p, delay);
    if (took) *took = delay;
    return p.get_response_status();
  }
  unsigned debug(tlm::tlm_command cmd, uint64_t address, void* data, unsigned n) {
    tlm::tlm_generic_payload p;
    p.set_command(cmd);
    p.set_address(address);
    p.set_data_ptr(static_cast<unsigned char*>(data));
    p.set_data_length(n);
    return out->transport_dbg(p);
  }
};

TEST(HbmTarget, DebugReadsTheValuesAKernelStored) {
  const nlohmann::json j = run_function_isolated([] {
    PeConfig cfg;
    cfg.data_mode = true;
    PeTop top(cfg);
    Poker debugger("debugger", [](Poker&) {});
    debugger.out.bind(top.interconnect().in);  // a second initiator on the interconnect
    uint64_t address = 0;
    std::vector<float> values(16 * 32);
    for (size_t i = 0; i < values.size(); ++i) values[i] = float(i) * 0.25f - 7.0f;  // exact in fp32
    top.pe().pe_cpu.launch("store", [&](Tl& tl) {
      const Tensor a = tl.tcm("a", 16, 32, Dtype::kFp32);
      const Tensor out = tl.hbm("out", 16, 32, Dtype::kFp32);
      tl.host_write(a, values);
      tl.store(out, a);  // DMA_WRITE: the bytes travel over mem
      address = top.pe().tensors().at(out.handle).address;
    });
    sc_core::sc_start();
    std::vector<float> back(values.size());
    const unsigned n = debugger.debug(tlm::TLM_READ_COMMAND, address, back.data(), unsigned(back.size() * 4));
    // And a debug write, read back by a kernel-less debug read.
    const float pi = 3.25f;
    const unsigned w = debugger.debug(tlm::TLM_WRITE_COMMAND, address, const_cast<float*>(&pi), 4);
    float again = 0;
    debugger.debug(tlm::TLM_READ_COMMAND, address, &again, 4);
    return nlohmann::json{{"n", n},        {"same", back == values}, {"w", w},
                          {"again", again}, {"launch_error", top.pe().pe_cpu.results().at(0).error}};
  });
  ASSERT_FALSE(j.contains("error")) << j.dump();
  EXPECT_EQ(j["launch_error"].get<std::string>(), "") << j.dump();
  EXPECT_EQ(j["n"].get<unsigned>(), 16u * 32u * 4u);
  EXPECT_TRUE(j["same"].get<bool>());
  EXPECT_EQ(j["w"].get<unsigned>(), 4u);
  EXPECT_EQ(j["again"].get<float>(), 3.25f);
}

TEST(HbmTarget, TimingModeKeepsNoValues) {
  const nlohmann::json j = run_function_isolated([] {
    PeConfig cfg;  // timing mode
    PeTop top(cfg);
    Poker debugger("debugger", [](Poker&) {});
    debugger.out.bind(top.interconnect().in);
    top.pe().pe_cpu.launch("store", [](Tl& tl) {
      const Tensor a = tl.tcm("a", 16, 32, Dtype::kFp32);
      const Tensor out = tl.hbm("out", 16, 32, Dtype::kFp32);
      tl.host_random(a, 1);
      tl.store(out, a);
    });
    sc_core::sc_start();
    float x = 0;
    return nlohmann::json{{"n", debugger.debug(tlm::TLM_READ_COMMAND, kHbmBase, &x, 4)},
                          {"stored", top.data_bytes()},
                          {"transactions", top.hbm().transactions()}};
  });
  ASSERT_FALSE(j.contains("error")) << j.dump();
  EXPECT_EQ(j["n"].get<unsigned>(), 0u);  // nothing to read back
  EXPECT_EQ(j["stored"].get<uint64_t>(), 0u);
  EXPECT_EQ(j["transactions"].get<uint64_t>(), 1u);  // the store: one burst of 2 KiB
}

TEST(HbmTarget, AddressErrorsAndTheUncontendedFormula) {
  const nlohmann::json j = run_function_isolated([] {
    const PeConfig cfg;
    Hbm hbm("hbm", hbm_timing(cfg), MemoryRange{kHbmBase, 0}, true);
    Router bus("bus", {{"hbm", MemoryRange{kHbmBase, 0}}});
    nlohmann::json r;
    Poker poker("poker", [&](Poker& p) {
      uint32_t word = 0x12345678, back = 0;
      sc_core::sc_time took;
      r["below_hbm"] = int(p.access(tlm::TLM_READ_COMMAND, kHbmBase - 4, &back, 4));
      r["write"] = int(p.access(tlm::TLM_WRITE_COMMAND, kHbmBase + 64, &word, 4, &took));
      r["write_took_ps"] = took.value();
      sc_core::wait(took);  // the pipe is idle again
      r["read"] = int(p.access(tlm::TLM_READ_COMMAND, kHbmBase + 64, &back, 4));
      r["read_back"] = back;
      r["wraps"] = int(p.access(tlm::TLM_READ_COMMAND, ~uint64_t(0) - 1, &back, 4));
      r["dbg_below"] = p.debug(tlm::TLM_READ_COMMAND, 16, &back, 4);
    });
    poker.out.bind(bus.in);
    bus.out[0].bind(hbm.in);
    sc_core::sc_start();
    r["address_errors"] = bus.address_errors();
    return r;
  });
  ASSERT_FALSE(j.contains("error")) << j.dump();
  EXPECT_EQ(j["below_hbm"].get<int>(), int(tlm::TLM_ADDRESS_ERROR_RESPONSE));
  EXPECT_EQ(j["write"].get<int>(), int(tlm::TLM_OK_RESPONSE));
  const PeConfig cfg;
  EXPECT_EQ(j["write_took_ps"].get<uint64_t>(), hbm_access_cycles(cfg, 4) * 1000);  // uncontended
  EXPECT_EQ(j["read"].get<int>(), int(tlm::TLM_OK_RESPONSE));
  EXPECT_EQ(j["read_back"].get<uint32_t>(), 0x12345678u);
  EXPECT_EQ(j["wraps"].get<int>(), int(tlm::TLM_ADDRESS_ERROR_RESPONSE));
  EXPECT_EQ(j["dbg_below"].get<unsigned>(), 0u);
  EXPECT_EQ(j["address_errors"].get<uint64_t>(), 2u);  // no region holds either: below HBM, past 2^64
}

// count_enabled against a byte loop: any byte but 0xff disables its lane,
// at every length and alignment (counted eight at a time).
TEST(ByteEnables, CountEnabledIsTheByteLoop) {
  std::mt19937_64 rng(7);
  const unsigned char values[] = {0xff, 0x00, 0xfe, 0x7f, 0x80, 0x01};
  std::vector<unsigned char> be(300);
  for (int round = 0; round < 4000; ++round) {
    const int kinds = 1 + int(rng() % 6);  // runs of 0xff and 0x00 only, or any of them
    for (auto& b : be) b = values[rng() % uint64_t(kinds)];
    const size_t from = rng() % 8, n = rng() % (be.size() - from);
    uint64_t loop = 0;
    for (size_t i = 0; i < n; ++i) loop += be[from + i] == TLM_BYTE_ENABLED;
    ASSERT_EQ(count_enabled(be.data() + from, n), loop) << "round " << round << ", n " << n;
  }
}

// The HBM's time for masked bursts whose pattern changes in place (one
// buffer, as PE_DMA's), cycling through more patterns than it keeps: each
// burst takes the uncontended formula for the bytes its enables let
// through, counted here byte by byte.
TEST(HbmTarget, MaskedBurstsTakeTheTimeOfTheirEnabledBytes) {
  const nlohmann::json j = run_function_isolated([] {
    const PeConfig cfg;
    Hbm hbm("hbm", hbm_timing(cfg), MemoryRange{kHbmBase, 0}, false);
    nlohmann::json r = nlohmann::json::array();
    Poker poker("poker", [&](Poker& p) {
      std::mt19937_64 rng(11);
      std::vector<unsigned char> data(4096), be(512);
      for (int i = 0; i < 200; ++i) {
        const size_t period = 64 + 64 * size_t(i % 7);  // seven patterns in turn
        const size_t run = 1 + size_t(i % 5) * 9;
        std::fill(be.begin(), be.end(), TLM_BYTE_DISABLED);
        std::fill(be.begin(), be.begin() + long(run), TLM_BYTE_ENABLED);
        const unsigned n = unsigned(period * (1 + rng() % 5) + rng() % period);
        uint64_t enabled = 0;
        for (unsigned k = 0; k < n; ++k) enabled += be[k % period] == TLM_BYTE_ENABLED;
        tlm::tlm_generic_payload t;
        t.set_command(tlm::TLM_READ_COMMAND);
        t.set_address(kHbmBase);
        t.set_data_ptr(data.data());
        t.set_data_length(n);
        t.set_streaming_width(n);
        t.set_byte_enable_ptr(be.data());
        t.set_byte_enable_length(unsigned(period));
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        p.out->b_transport(t, delay);
        r.push_back({{"enabled", enabled}, {"took_ps", delay.value()}, {"ok", t.is_response_ok()}});
        sc_core::wait(delay);  // the pipe is idle again: every burst uncontended
      }
    });
    poker.out.bind(hbm.in);
    sc_core::sc_start();
    return nlohmann::json{{"bursts", r}};
  });
  ASSERT_FALSE(j.contains("error")) << j.dump();
  const PeConfig cfg;
  ASSERT_EQ(j["bursts"].size(), 200u);
  for (const auto& b : j["bursts"]) {
    ASSERT_TRUE(b["ok"].get<bool>());
    EXPECT_EQ(b["took_ps"].get<uint64_t>(), hbm_access_cycles(cfg, b["enabled"].get<uint64_t>()) * 1000)
        << b.dump();
  }
}

// --- A memory a VP brings: b_transport only (the socket converts the PE's
// nb_transport), with its own latency. The PE works behind it unchanged,
// values included; the DMA takes the memory's time.
struct VpMemory : sc_core::sc_module {
  tlm_utils::simple_target_socket<VpMemory> in;
  SparseMemory store;
  uint64_t accesses = 0;
  explicit VpMemory(sc_core::sc_module_name n) : sc_module(n), in("in") {
    in.register_b_transport(this, &VpMemory::b_transport);
    in.register_transport_dbg(this, &VpMemory::dbg);
  }
  void b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
    ++accesses;
    sc_core::wait(delay + sc_core::sc_time(50, sc_core::SC_NS));  // a thread: it may wait
    delay = sc_core::SC_ZERO_TIME;
    memory_access(p, MemoryRange{kHbmBase, 0}, &store);
  }
  unsigned dbg(tlm::tlm_generic_payload& p) { return memory_debug(p, MemoryRange{kHbmBase, 0}, &store); }
};

TEST(ForeignMemory, BTransportOnlyMemoryBehindMemServesDmaWithValues) {
  const nlohmann::json j = run_function_isolated([] {
    PeConfig cfg;
    cfg.data_mode = true;
    Checked c;
    Pe pe("pe", cfg, PePlace{}, c.binder());
    VpMemory mem("vp_memory");
    c.binder()(pe.mem, mem.in, "pe.mem -> vp_memory.in");
    std::vector<float> got, want;
    pe.pe_cpu.launch("roundtrip", [&](Tl& tl) {
      const Tensor x = tl.hbm("x", 64, 256, Dtype::kBf16);
      const Tensor y = tl.hbm("y", 64, 256, Dtype::kBf16);
      const Tensor a = tl.tcm("a", 64, 128, Dtype::kBf16);
      tl.host_random(x, 7);
      want = tl.host_read(x);
      const Tensor xa = tl.view(x, 0, 64, 64, 128);  // strided: a column slice
      tl.load(a, xa);
      tl.store(tl.view(y, 0, 64, 128, 128), a);
      tl.wait();
      const std::vector<float> yv = tl.host_read(tl.view(y, 0, 64, 128, 128));
      got = yv;
    });
    sc_core::sc_start();
    nlohmann::json r = c.report();
    r["launch_error"] = pe.pe_cpu.results().at(0).error;
    std::vector<float> expect;
    for (int row = 0; row < 64; ++row)
      for (int col = 64; col < 192; ++col) expect.push_back(want[size_t(row * 256 + col)]);
    r["same"] = got == expect && !got.empty();
    r["accesses"] = mem.accesses;
    r["latency_ps"] = pe.pe_cpu.results().at(0).latency_ps();
    return r;
  });
  ASSERT_FALSE(j.contains("error")) << j.dump();
  EXPECT_EQ(j["launch_error"].get<std::string>(), "") << j.dump();
  EXPECT_EQ(j["violations"].get<uint64_t>(), 0u) << j["first"].dump(1);
  EXPECT_TRUE(j["same"].get<bool>());
  EXPECT_GE(j["accesses"].get<uint64_t>(), 2u);  // the load and the store, as bursts
}

// A memory whose every access fails: the load's burst gets an address
// error, and the launch fails naming the command and the burst, whether the
// memory answers at once or later.
struct RefusingMemory : sc_core::sc_module {
  tlm_utils::simple_target_socket<RefusingMemory> in;
  RefusingMemory(sc_core::sc_module_name n, bool late) : sc_module(n), in("in") {
    if (late) in.register_b_transport(this, &RefusingMemory::b_transport);
    else in.register_nb_transport_fw(this, &RefusingMemory::nb_transport_fw);
    in.register_transport_dbg(this, &RefusingMemory::dbg);
  }
  void b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time&) {
    p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
  }
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& p, tlm::tlm_phase&, sc_core::sc_time&) {
    p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return tlm::TLM_COMPLETED;
  }
  unsigned dbg(tlm::tlm_generic_payload&) { return 0; }
};

class RefusedBurst : public ::testing::TestWithParam<bool> {};

TEST_P(RefusedBurst, FailsTheLaunchNamingTheCommandAndTheBurst) {
  const bool late = GetParam();
  const nlohmann::json j = run_function_isolated([late] {
    PeConfig cfg;
    Checked c;
    Pe pe("pe", cfg, PePlace{}, c.binder());
    RefusingMemory mem("refusing", late);
    c.binder()(pe.mem, mem.in, "pe.mem -> refusing.in");
    pe.pe_cpu.launch("load", [](Tl& tl) {
      const Tensor x = tl.hbm("x", 4, 64, Dtype::kFp32);
      const Tensor a = tl.tcm("a", 4, 64, Dtype::kFp32);
      tl.host_random(x, 1);
      tl.load(a, x);
    });
    sc_core::sc_start();
    nlohmann::json r = c.report();
    r["launch_error"] = pe.pe_cpu.results().at(0).error;
    return r;
  });
  ASSERT_FALSE(j.contains("error")) << j.dump();
  EXPECT_EQ(j["violations"].get<uint64_t>(), 0u) << j["first"].dump(1);
  EXPECT_EQ(j["launch_error"].get<std::string>(),
            "kernel 'load', command #1 DmaReadCmd: PE_DMA: read of 1024 bytes at 0x10000000000 failed: "
            "TLM_ADDRESS_ERROR_RESPONSE");
}

INSTANTIATE_TEST_SUITE_P(AtOnceAndLater, RefusedBurst, ::testing::Bool(),
                         [](const auto& p) { return std::string(p.param ? "later" : "at_once"); });

}  // namespace
}  // namespace kb
