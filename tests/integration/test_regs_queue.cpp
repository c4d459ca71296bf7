// A VP's CPU drives the PE through `regs` alone. It
// writes tensor descriptors into the table and binary command descriptors
// (models/isa/descriptor.h) into the QUEUE window; PE_CPU is bypassed. The
// queue's back-pressure holds a write while the queue is full; the drained
// IRQ tells the CPU that everything completed; a descriptor that does not
// decode is refused and recorded.
//
// Needs PE_SCHEDULER's decoding of descriptor bytes, TensorTable::install
// and kb::desc::encode_tensor: the integrator
// registers it in CMakeLists.txt once those are merged and Pe wires
// pe_regs.on_tensor_write to the table.
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>
#include <tlm>

#include "models/mem/address_map.h"
#include "models/isa/descriptor.h"
#include "models/isa/register_map.h"
#include "models/top/pe_top.h"
#include "tb/run/runner.h"
#include "tests/integration/regs_initiator.h"
#include "tests/tlm/base_protocol_checker.h"

namespace kb {
namespace {

using namespace regs;
using test::RegsInitiator;

constexpr int64_t kN = 64;                       // every tensor is kN x kN
constexpr int kLoads = 9;                        // one more than the default queue depth
constexpr uint64_t kTileBytes = kN * kN * 2;     // bf16

Handle entry(int i) { return kTensorTable + kTensorDescBytes * uint64_t(i); }

// Table entries: 0 is x in HBM, 1..kLoads the TCM tiles t_i, kLoads + 1
// the fp32 product c.
TensorDesc tensor(int i) {
  TensorDesc d;
  d.handle = entry(i);
  d.rows = kN;
  d.cols = kN;
  d.row_stride = kN;
  if (i == 0) {
    d.space = MemSpace::kHbm;
    d.dtype = Dtype::kBf16;
    d.address = hbm_alloc_base(0);
  } else if (i <= kLoads) {
    d.space = MemSpace::kTcm;
    d.dtype = Dtype::kBf16;
    d.address = kTcmBase + uint64_t(i - 1) * kTileBytes;
  } else {
    d.space = MemSpace::kTcm;
    d.dtype = Dtype::kFp32;
    d.address = kTcmBase + uint64_t(kLoads) * kTileBytes;
  }
  return d;
}

void write_tensors(RegsInitiator& cpu) {
  for (int i = 0; i <= kLoads + 1; ++i) {
    const std::array<uint8_t, 64> bytes = desc::encode_tensor(tensor(i), "t" + std::to_string(i));
    const auto s = cpu.write_bytes(entry(i), std::vector<uint8_t>(bytes.begin(), bytes.end()));
    if (s != tlm::TLM_OK_RESPONSE) throw std::runtime_error("tensor " + std::to_string(i) + " refused");
  }
}

std::vector<uint8_t> load(int i, uint32_t id) {
  DmaReadCmd c;
  c.dst = entry(i);
  c.src = entry(0);
  return desc::encode(Command(c), id);
}

std::vector<uint8_t> gemm(uint32_t id) {
  GemmCmd g;
  g.a = entry(1);
  g.b = entry(2);
  g.out = entry(kLoads + 1);
  g.m = g.n = g.k = kN;
  return desc::encode(Command(g), id);
}

// kLoads loads then a GEMM on the first two tiles, written at time 0 with
// a checker on regs and on every binding of the PE. The first kLoads - 1
// writes fill the queue (depth 8); the last load waits for the first
// command to complete; the drained IRQ comes once, when all are done.
TEST(RegsQueue, DescriptorsThroughRegsRunAndRaiseTheDrainedIrq) {
  const nlohmann::json j = run_function_isolated([] {
    nlohmann::json r;
    std::vector<std::unique_ptr<test::BaseProtocolChecker>> checkers;
    LinkBinder binder = [&checkers](tlm::tlm_initiator_socket<32>& from, TargetSocketBase& to, const std::string&) {
      checkers.push_back(std::make_unique<test::BaseProtocolChecker>(sc_core::sc_gen_unique_name("checker")));
      from.bind(checkers.back()->in);
      checkers.back()->out.bind(to);
    };
    PeConfig cfg;
    PeTop top(cfg, 1, binder);
    Pe& pe = top.pe();
    pe.op_log().configure(true, "");
    sc_core::sc_signal<bool> irq("irq_line");
    pe.irq.bind(irq);
    RegsInitiator cpu("cpu", [&](RegsInitiator& c) {
      c.write(kIrqEnable, kIrqDrained | kIrqError);
      write_tensors(c);
      for (int i = 1; i <= kLoads; ++i) {
        r["write_status"].push_back(int(c.write_bytes(kQueue, load(i, uint32_t(i)))));
        r["write_returned"].push_back(RegsInitiator::now_ps());
        r["occupancy"].push_back(c.read(kOccupancy));
      }
      r["write_status"].push_back(int(c.write_bytes(kQueue + 0x40, gemm(kLoads + 1))));  // the window aliases
      r["status_busy"] = c.read(kStatus);
      while (!irq.read()) sc_core::wait(irq.value_changed_event());
      r["irq_ps"] = RegsInitiator::now_ps();
      r["irq_status"] = c.read(kIrqStatus);
      r["completed"] = c.read(kCompleted, 8);
      r["occupancy_end"] = c.read(kOccupancy);
      r["status_end"] = c.read(kStatus);
      r["error_code"] = c.read(kErrorCode);
      c.write(kIrqStatus, kIrqDrained);
      r["irq_after_clear"] = irq.read();  // the line falls a delta later
      sc_core::wait(sc_core::SC_ZERO_TIME);
      sc_core::wait(sc_core::SC_ZERO_TIME);
      r["irq_after_clear_delta"] = irq.read();
    });
    test::bind_checked(cpu.socket, pe.regs, "regs_checker");
    sc_core::sc_start();
    pe.op_log().flush();  // no launch ended to flush the last instant's records
    uint64_t first_dma_end = UINT64_MAX, last_end = 0;
    int dma = 0, gemms = 0;
    for (const OpRecord& rec : pe.op_log().records()) {
      if (rec.component == Component::kPeCpu) continue;
      last_end = std::max(last_end, rec.end_ps);
      if (rec.kind == RecordKind::kDmaRead) {
        ++dma;
        first_dma_end = std::min(first_dma_end, rec.end_ps);
      }
      if (rec.kind == RecordKind::kGemm) ++gemms;
    }
    r["dma"] = dma;
    r["gemms"] = gemms;
    r["first_dma_end"] = first_dma_end;
    r["last_end"] = last_end;
    r["launches"] = pe.pe_cpu.results().size();
    r["violations"] = test::BaseProtocolChecker::violation_count();
    return r;
  });
  ASSERT_FALSE(j.contains("error")) << j.dump();
  for (const auto& s : j["write_status"]) EXPECT_EQ(s.get<int>(), int(tlm::TLM_OK_RESPONSE));
  const uint64_t depth = PeConfig{}.scheduler.queue_depth;
  ASSERT_EQ(depth + 1, uint64_t(kLoads)) << "the test fills the queue by one";
  for (size_t i = 0; i + 1 < size_t(kLoads); ++i) {
    EXPECT_EQ(j["write_returned"][i].get<uint64_t>(), 0u) << "write " << i + 1 << " had room";
    EXPECT_EQ(j["occupancy"][i].get<uint64_t>(), i + 1);
  }
  // Back-pressure: the last load waited for the first completion.
  EXPECT_EQ(j["write_returned"][size_t(kLoads - 1)].get<uint64_t>(), j["first_dma_end"].get<uint64_t>());
  EXPECT_EQ(j["status_busy"].get<uint32_t>(), uint32_t(Status::kBusy));
  EXPECT_EQ(j["dma"].get<int>(), kLoads);
  EXPECT_EQ(j["gemms"].get<int>(), 1);
  EXPECT_EQ(j["irq_ps"].get<uint64_t>(), j["last_end"].get<uint64_t>());
  EXPECT_EQ(j["irq_status"].get<uint32_t>(), uint32_t(kIrqDrained));
  EXPECT_EQ(j["completed"].get<uint64_t>(), uint64_t(kLoads + 1));
  EXPECT_EQ(j["occupancy_end"].get<uint64_t>(), 0u);
  EXPECT_EQ(j["status_end"].get<uint32_t>(), uint32_t(Status::kIdle));
  EXPECT_EQ(j["error_code"].get<uint32_t>(), 0u);
  EXPECT_TRUE(j["irq_after_clear"].get<bool>());
  EXPECT_FALSE(j["irq_after_clear_delta"].get<bool>());
  EXPECT_EQ(j["launches"].get<size_t>(), 0u) << "PE_CPU bypassed";
  EXPECT_EQ(j["violations"].get<uint64_t>(), 0u);
}

// A descriptor that does not decode: an error response, nothing queued,
// the error code, the completion id when the framing names one, kIrqError.
struct BadCase {
  const char* name;
  std::vector<uint8_t> (*bytes)();
  ErrorCode code;
  uint32_t command;
};

std::vector<uint8_t> unknown_type() {
  std::vector<uint8_t> b = load(1, 7);
  b[0] = 0xEE;
  return b;
}
std::vector<uint8_t> too_long() {
  std::vector<uint8_t> b = load(1, 7);
  b.push_back(0);
  return b;
}
std::vector<uint8_t> bad_handle() {
  DmaReadCmd c;
  c.dst = entry(1) + 4;  // not an entry's offset
  c.src = entry(0);
  return desc::encode(Command(c), 7);
}

class RegsQueueBad : public ::testing::TestWithParam<BadCase> {};

TEST_P(RegsQueueBad, IsRefusedAndRecorded) {
  const BadCase c = GetParam();
  const nlohmann::json j = run_function_isolated([&c] {
    nlohmann::json r;
    PeTop top(PeConfig{});
    Pe& pe = top.pe();
    RegsInitiator cpu("cpu", [&](RegsInitiator& i) {
      i.write(kIrqEnable, kIrqError);
      write_tensors(i);
      r["response"] = int(i.write_bytes(kQueue, c.bytes()));
      r["occupancy"] = i.read(kOccupancy);
      r["status"] = i.read(kStatus);
      r["error_code"] = i.read(kErrorCode);
      r["error_command"] = i.read(kErrorCommand);
      r["irq_status"] = i.read(kIrqStatus);
      // The queue still takes a good descriptor.
      r["good"] = int(i.write_bytes(kQueue, load(2, 8)));
    });
    cpu.socket.bind(pe.regs);
    sc_core::sc_start();
    r["completed"] = pe.pe_scheduler.completed();
    return r;
  });
  ASSERT_FALSE(j.contains("error")) << j.dump();
  EXPECT_NE(j["response"].get<int>(), int(tlm::TLM_OK_RESPONSE));
  EXPECT_EQ(j["occupancy"].get<uint32_t>(), 0u);
  EXPECT_EQ(j["status"].get<uint32_t>(), uint32_t(Status::kError));
  EXPECT_EQ(j["error_code"].get<uint32_t>(), uint32_t(c.code));
  EXPECT_EQ(j["error_command"].get<uint32_t>(), c.command);
  EXPECT_EQ(j["irq_status"].get<uint32_t>(), uint32_t(kIrqError));
  EXPECT_EQ(j["good"].get<int>(), int(tlm::TLM_OK_RESPONSE));
  EXPECT_EQ(j["completed"].get<uint64_t>(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Descriptors, RegsQueueBad,
                         ::testing::Values(BadCase{"unknown_type", unknown_type, ErrorCode::kUnknownType, 7},
                                           BadCase{"too_long", too_long, ErrorCode::kBadLength, 7},
                                           BadCase{"bad_handle", bad_handle, ErrorCode::kBadHandle, 7}),
                         [](const auto& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace kb
