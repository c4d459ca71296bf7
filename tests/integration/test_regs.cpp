// The PE's register block (PE_REGS on `regs`) and
// its interrupt. Register reads and writes, every bad access, the IRQ rule
// (high while IRQ_STATUS & IRQ_ENABLE != 0), write-1-to-clear, debug reads
// without side effects, the doorbell, and the base protocol on `regs` and
// on pe_regs.queue -> pe_scheduler.in.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>
#include <tlm>

#include "models/isa/register_map.h"
#include "models/tl/tl.h"
#include "models/top/pe_top.h"
#include "tb/run/runner.h"
#include "tests/integration/regs_initiator.h"
#include "tests/tlm/base_protocol_checker.h"

namespace kb {
namespace {

using namespace regs;
using test::IrqProbe;
using test::RegsInitiator;

constexpr uint64_t kUs = 1000000;  // ps

// One DMA read: one descriptor, so the queue drains exactly once.
void one_load(Tl& tl) {
  const Tensor x = tl.hbm("x", 64, 64, Dtype::kBf16);
  const Tensor a = tl.tcm("a", 64, 64, Dtype::kBf16);
  tl.host_random(x, 1);
  tl.load(a, x);
}

void failing(Tl& tl) {
  const Tensor a = tl.tcm("a", 8, 8, Dtype::kFp32);
  const Tensor b = tl.tcm("b", 8, 8, Dtype::kFp32);
  tl.load(a, b);  // src must be in HBM
}

// A PE on a top, a CPU on its `regs`, a signal on its `irq` and a probe.
struct Bench {
  PeTop top;
  sc_core::sc_signal<bool> line{"irq_line"};
  IrqProbe probe{"probe", line};
  RegsInitiator cpu;
  test::BaseProtocolChecker* regs_checker = nullptr;
  explicit Bench(std::function<void(RegsInitiator&)> body, const LinkBinder& binder = {},
                 bool check_regs = false)
      : top(PeConfig{}, 1, binder), cpu("cpu", std::move(body)) {
    top.pe().irq.bind(line);
    if (check_regs) {
      regs_checker = &test::bind_checked(cpu.socket, top.pe().regs, "regs_checker");
    } else {
      cpu.socket.bind(top.pe().regs);
    }
  }
  Pe& pe() { return top.pe(); }
  nlohmann::json irq_changes() const {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& [t, level] : probe.changes) j.push_back({t, level});
    return j;
  }
};

nlohmann::json run(const std::function<nlohmann::json()>& f) {
  nlohmann::json j = run_function_isolated(f);
  EXPECT_FALSE(j.contains("error")) << j.dump();
  return j;
}

struct Readable {
  const char* name;
  uint64_t offset;
  unsigned width;
};
const Readable kReadable[] = {{"status", kStatus, 4},       {"error_code", kErrorCode, 4},
                              {"error_command", kErrorCommand, 4}, {"completed", kCompleted, 8},
                              {"occupancy", kOccupancy, 4}, {"irq_enable", kIrqEnable, 4},
                              {"irq_status", kIrqStatus, 4}, {"kernels", kKernels, 4}};

TEST(Registers, ResetValuesAndReadBack) {
  const nlohmann::json j = run([] {
    nlohmann::json r;
    Bench b([&r](RegsInitiator& cpu) {
      for (const Readable& reg : kReadable) r["reset"][reg.name] = cpu.read(reg.offset, reg.width);
      cpu.write(kIrqEnable, 0xFFFFFFFF);
      r["irq_enable_all"] = cpu.read(kIrqEnable);
      cpu.write(kIrqEnable, kIrqError);
      r["irq_enable_error"] = cpu.read(kIrqEnable);
      cpu.write(kIrqStatus, 0xFFFFFFFF);  // clears nothing that is not set
      r["irq_status"] = cpu.read(kIrqStatus);
    });
    r["index_a"] = b.pe().register_kernel("a", one_load);
    r["index_b"] = b.pe().register_kernel("b", one_load);
    sc_core::sc_start();
    r["irq_changes"] = b.irq_changes();
    return r;
  });
  for (const Readable& reg : kReadable) {
    const uint64_t expected = std::string(reg.name) == "kernels" ? 2 : 0;
    EXPECT_EQ(j["reset"][reg.name].get<uint64_t>(), expected) << reg.name;
  }
  EXPECT_EQ(j["index_a"].get<uint32_t>(), 0u);
  EXPECT_EQ(j["index_b"].get<uint32_t>(), 1u);
  EXPECT_EQ(j["irq_enable_all"].get<uint32_t>(), uint32_t(kIrqDrained | kIrqError));  // undefined bits read 0
  EXPECT_EQ(j["irq_enable_error"].get<uint32_t>(), uint32_t(kIrqError));
  EXPECT_EQ(j["irq_status"].get<uint32_t>(), 0u);
  EXPECT_TRUE(j["irq_changes"].empty()) << "nothing raised, the line never moved";
}

// Every bad access gets its standard error response, changes nothing and
// raises nothing.
TEST(Registers, BadAccessesGetTheirErrorResponse) {
  struct Bad {
    const char* name;
    tlm::tlm_command cmd;
    uint64_t address;
    unsigned length;
    unsigned streaming_width;  // 0: the length
    bool byte_enables;
    bool null_data;
    tlm::tlm_response_status expected;
  };
  constexpr auto R = tlm::TLM_READ_COMMAND;
  constexpr auto W = tlm::TLM_WRITE_COMMAND;
  constexpr auto I = tlm::TLM_IGNORE_COMMAND;
  const std::vector<Bad> cases = {
      {"status_2_bytes", R, kStatus, 2, 0, false, false, tlm::TLM_BURST_ERROR_RESPONSE},
      {"status_8_bytes", R, kStatus, 8, 0, false, false, tlm::TLM_BURST_ERROR_RESPONSE},
      {"completed_4_bytes", R, kCompleted, 4, 0, false, false, tlm::TLM_BURST_ERROR_RESPONSE},
      {"irq_enable_8_bytes", W, kIrqEnable, 8, 0, false, false, tlm::TLM_BURST_ERROR_RESPONSE},
      {"status_misaligned", R, kStatus + 2, 4, 0, false, false, tlm::TLM_ADDRESS_ERROR_RESPONSE},
      {"completed_upper_half", R, kCompleted + 4, 4, 0, false, false, tlm::TLM_ADDRESS_ERROR_RESPONSE},
      {"error_code_byte_1", R, kErrorCode + 1, 1, 0, false, false, tlm::TLM_ADDRESS_ERROR_RESPONSE},
      {"status_byte_enables", R, kStatus, 4, 0, true, false, tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE},
      {"irq_status_byte_enables", W, kIrqStatus, 4, 0, true, false, tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE},
      {"status_streaming_width", R, kStatus, 4, 2, false, false, tlm::TLM_BURST_ERROR_RESPONSE},
      {"queue_read", R, kQueue, 4, 0, false, false, tlm::TLM_COMMAND_ERROR_RESPONSE},
      {"queue_window_read", R, kQueue + 0x80, 8, 0, false, false, tlm::TLM_COMMAND_ERROR_RESPONSE},
      {"doorbell_read", R, kDoorbell, 4, 0, false, false, tlm::TLM_COMMAND_ERROR_RESPONSE},
      {"status_write", W, kStatus, 4, 0, false, false, tlm::TLM_COMMAND_ERROR_RESPONSE},
      {"error_code_write", W, kErrorCode, 4, 0, false, false, tlm::TLM_COMMAND_ERROR_RESPONSE},
      {"error_command_write", W, kErrorCommand, 4, 0, false, false, tlm::TLM_COMMAND_ERROR_RESPONSE},
      {"completed_write", W, kCompleted, 8, 0, false, false, tlm::TLM_COMMAND_ERROR_RESPONSE},
      {"occupancy_write", W, kOccupancy, 4, 0, false, false, tlm::TLM_COMMAND_ERROR_RESPONSE},
      {"kernels_write", W, kKernels, 4, 0, false, false, tlm::TLM_COMMAND_ERROR_RESPONSE},
      {"gap_0x10c", R, 0x10C, 4, 0, false, false, tlm::TLM_ADDRESS_ERROR_RESPONSE},
      {"gap_0x128", R, 0x128, 4, 0, false, false, tlm::TLM_ADDRESS_ERROR_RESPONSE},
      {"gap_0x138", W, 0x138, 4, 0, false, false, tlm::TLM_ADDRESS_ERROR_RESPONSE},
      {"gap_0x200", R, 0x200, 4, 0, false, false, tlm::TLM_ADDRESS_ERROR_RESPONSE},
      {"gap_0xfffc", R, 0xFFFC, 4, 0, false, false, tlm::TLM_ADDRESS_ERROR_RESPONSE},
      {"table_end", R, kTensorTableEnd, 64, 0, false, false, tlm::TLM_ADDRESS_ERROR_RESPONSE},
      {"far_away", W, uint64_t(1) << 40, 4, 0, false, false, tlm::TLM_ADDRESS_ERROR_RESPONSE},
      {"table_misaligned", R, kTensorTable + 4, 64, 0, false, false, tlm::TLM_ADDRESS_ERROR_RESPONSE},
      {"table_half_entry", R, kTensorTable, 32, 0, false, false, tlm::TLM_BURST_ERROR_RESPONSE},
      {"table_two_entries", R, kTensorTable, 128, 0, false, false, tlm::TLM_BURST_ERROR_RESPONSE},
      {"table_byte_enables", R, kTensorTable, 64, 0, true, false, tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE},
      {"queue_byte_enables", W, kQueue, 20, 0, true, false, tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE},
      {"queue_streaming_width", W, kQueue, 20, 4, false, false, tlm::TLM_BURST_ERROR_RESPONSE},
      {"queue_null_data", W, kQueue, 20, 0, false, true, tlm::TLM_GENERIC_ERROR_RESPONSE},
      {"queue_zero_length", W, kQueue, 0, 1, false, false, tlm::TLM_GENERIC_ERROR_RESPONSE},
      {"status_null_data", R, kStatus, 4, 0, false, true, tlm::TLM_GENERIC_ERROR_RESPONSE},
      {"ignore_status", I, kStatus, 4, 0, false, false, tlm::TLM_OK_RESPONSE},
      {"ignore_doorbell", I, kDoorbell, 4, 0, false, false, tlm::TLM_OK_RESPONSE},
      {"ignore_gap", I, 0x10C, 4, 0, false, false, tlm::TLM_ADDRESS_ERROR_RESPONSE},
  };
  const nlohmann::json j = run([&cases] {
    nlohmann::json r;
    Bench b([&](RegsInitiator& cpu) {
      for (const Bad& c : cases) {
        std::vector<unsigned char> data(std::max(c.length, 1u), 0xA5);
        std::vector<unsigned char> be(c.length ? c.length : 1, 0xFF);
        r["responses"][c.name] = int(cpu.access(c.cmd, c.address, c.null_data ? nullptr : data.data(), c.length,
                                                c.streaming_width, c.byte_enables ? be.data() : nullptr,
                                                c.byte_enables ? unsigned(be.size()) : 0));
        // A refused read writes nothing into the initiator's buffer.
        if (c.cmd == R && !c.null_data) {
          bool untouched = true;
          for (unsigned char d : data) untouched &= d == 0xA5;
          r["untouched"][c.name] = untouched;
        }
      }
      for (const Readable& reg : kReadable) r["after"][reg.name] = cpu.read(reg.offset, reg.width);
    });
    sc_core::sc_start();
    r["launches"] = b.pe().pe_cpu.results().size();
    r["irq_changes"] = b.irq_changes();
    return r;
  });
  for (const Bad& c : cases) {
    EXPECT_EQ(j["responses"][c.name].get<int>(), int(c.expected)) << c.name;
    if (j["untouched"].contains(c.name) && c.expected != tlm::TLM_OK_RESPONSE) {
      EXPECT_TRUE(j["untouched"][c.name].get<bool>()) << c.name;
    }
  }
  for (const Readable& reg : kReadable) EXPECT_EQ(j["after"][reg.name].get<uint64_t>(), 0u) << reg.name;
  EXPECT_EQ(j["launches"].get<size_t>(), 0u);
  EXPECT_TRUE(j["irq_changes"].empty());
}

// The IRQ rule on the drained condition: one descriptor, so one drain.
// The line rises at the drain, which is the launch's end; writing 1 to the
// bit clears it and the line falls at once.
TEST(Irq, RisesWhenTheQueueDrainsAndClearsByWriteOneToClear) {
  const nlohmann::json j = run([] {
    nlohmann::json r;
    std::vector<uint64_t> drains;
    Bench* bench = nullptr;
    Bench b([&](RegsInitiator& cpu) {
      cpu.write(kIrqEnable, kIrqDrained);
      r["status_at_start"] = cpu.read(kStatus);  // the launch is queued
      while (!bench->line.read()) sc_core::wait(bench->line.value_changed_event());
      r["rise_ps"] = RegsInitiator::now_ps();
      r["irq_status_high"] = cpu.read(kIrqStatus);
      r["completed"] = cpu.read(kCompleted, 8);
      r["occupancy"] = cpu.read(kOccupancy);
      cpu.write(kIrqStatus, kIrqError);  // not the raised bit: no change
      r["irq_status_other_cleared"] = cpu.read(kIrqStatus);
      cpu.write(kIrqStatus, kIrqDrained);
      r["clear_ps"] = RegsInitiator::now_ps();
      r["irq_status_cleared"] = cpu.read(kIrqStatus);
      sc_core::wait(1, sc_core::SC_US);  // the launch has ended
      r["status_at_end"] = cpu.read(kStatus);
    });
    bench = &b;
    b.pe().launch("load", one_load);
    sc_core::sc_spawn_options opts;
    opts.spawn_method();
    opts.dont_initialize();
    opts.set_sensitivity(&b.pe().pe_scheduler.drained_event());
    sc_core::sc_spawn([&drains] { drains.push_back(RegsInitiator::now_ps()); }, "drain_probe", &opts);
    sc_core::sc_start();
    r["irq_changes"] = b.irq_changes();
    r["drains"] = drains;
    r["end_ps"] = b.pe().pe_cpu.results().at(0).end_ps;
    r["commands"] = b.pe().pe_cpu.results().at(0).commands;
    return r;
  });
  EXPECT_EQ(j["status_at_start"].get<uint32_t>(), uint32_t(Status::kBusy));
  ASSERT_EQ(j["drains"].size(), 1u);
  const uint64_t drain = j["drains"][0].get<uint64_t>();
  EXPECT_GT(drain, 0u);
  EXPECT_EQ(drain, j["end_ps"].get<uint64_t>());
  EXPECT_EQ(j["rise_ps"].get<uint64_t>(), drain);
  EXPECT_EQ(j["irq_status_high"].get<uint32_t>(), uint32_t(kIrqDrained));
  EXPECT_EQ(j["completed"].get<uint64_t>(), j["commands"].get<uint64_t>());
  EXPECT_EQ(j["completed"].get<uint64_t>(), 1u);
  EXPECT_EQ(j["occupancy"].get<uint32_t>(), 0u);
  EXPECT_EQ(j["irq_status_other_cleared"].get<uint32_t>(), uint32_t(kIrqDrained));
  EXPECT_EQ(j["irq_status_cleared"].get<uint32_t>(), 0u);
  EXPECT_EQ(j["clear_ps"].get<uint64_t>(), drain);
  // One rise at the drain, one fall at the clear: the same instant.
  const nlohmann::json expected = {{drain, true}, {drain, false}};
  EXPECT_EQ(j["irq_changes"], expected);
  EXPECT_EQ(j["status_at_end"].get<uint32_t>(), uint32_t(Status::kIdle));
}

// The line follows IRQ_STATUS & IRQ_ENABLE: a bit raised while disabled
// leaves it low; enabling raises it then; disabling lowers it, the bit
// still set.
TEST(Irq, IsTheStatusMaskedByTheEnable) {
  const nlohmann::json j = run([] {
    nlohmann::json r;
    Bench b([&](RegsInitiator& cpu) {
      sc_core::wait(10, sc_core::SC_US);  // the launch has drained long before
      r["irq_status_disabled"] = cpu.read(kIrqStatus);
      cpu.write(kIrqEnable, kIrqDrained | kIrqError);
      sc_core::wait(1, sc_core::SC_US);
      cpu.write(kIrqEnable, kIrqError);  // kIrqDrained masked again
      r["irq_status_masked"] = cpu.read(kIrqStatus);
    });
    b.pe().launch("load", one_load);
    sc_core::sc_start();
    r["irq_changes"] = b.irq_changes();
    return r;
  });
  EXPECT_EQ(j["irq_status_disabled"].get<uint32_t>(), uint32_t(kIrqDrained));
  EXPECT_EQ(j["irq_status_masked"].get<uint32_t>(), uint32_t(kIrqDrained));
  const nlohmann::json expected = {{10 * kUs, true}, {11 * kUs, false}};
  EXPECT_EQ(j["irq_changes"], expected);
}

// An unknown doorbell index: an error response, STATUS kError, the code,
// kIrqError and the line. The error is sticky: clearing the IRQ leaves
// STATUS kError; a later error keeps the first code and raises the IRQ
// again.
TEST(Irq, RisesOnAnErrorThatStaysInStatus) {
  const nlohmann::json j = run([] {
    nlohmann::json r;
    Bench b([&](RegsInitiator& cpu) {
      cpu.write(kIrqEnable, kIrqError);
      sc_core::wait(2, sc_core::SC_US);
      r["doorbell_response"] = int(cpu.write_status(kDoorbell, 1));  // one kernel registered: index 0 only
      r["status"] = cpu.read(kStatus);
      r["error_code"] = cpu.read(kErrorCode);
      r["error_command"] = cpu.read(kErrorCommand);
      r["irq_status"] = cpu.read(kIrqStatus);
      sc_core::wait(1, sc_core::SC_US);
      cpu.write(kIrqStatus, kIrqError);
      r["status_after_clear"] = cpu.read(kStatus);
      sc_core::wait(1, sc_core::SC_US);
      cpu.write(kDoorbell, 0);  // a failing kernel: a second error
      sc_core::wait(1, sc_core::SC_US);
      r["error_code_after_second"] = cpu.read(kErrorCode);
      r["irq_status_after_second"] = cpu.read(kIrqStatus);
    });
    b.pe().register_kernel("failing", failing);
    sc_core::sc_start();
    r["irq_changes"] = b.irq_changes();
    r["message"] = b.pe().pe_regs.error_message();
    r["launch_error"] = b.pe().pe_cpu.results().at(0).error;
    r["launch_start"] = b.pe().pe_cpu.results().at(0).start_ps;
    return r;
  });
  EXPECT_EQ(j["doorbell_response"].get<int>(), int(tlm::TLM_GENERIC_ERROR_RESPONSE));
  EXPECT_EQ(j["status"].get<uint32_t>(), uint32_t(Status::kError));
  EXPECT_EQ(j["error_code"].get<uint32_t>(), uint32_t(ErrorCode::kUnknownKernel));
  EXPECT_EQ(j["error_command"].get<uint32_t>(), 0u);
  EXPECT_EQ(j["irq_status"].get<uint32_t>(), uint32_t(kIrqError));
  EXPECT_EQ(j["status_after_clear"].get<uint32_t>(), uint32_t(Status::kError));
  EXPECT_EQ(j["error_code_after_second"].get<uint32_t>(), uint32_t(ErrorCode::kUnknownKernel));
  EXPECT_EQ(j["irq_status_after_second"].get<uint32_t>(), uint32_t(kIrqError));
  EXPECT_EQ(j["message"].get<std::string>(), "DOORBELL 1: 1 kernels registered");
  EXPECT_NE(j["launch_error"].get<std::string>().find("must be in hbm"), std::string::npos) << j.dump();
  EXPECT_EQ(j["launch_start"].get<uint64_t>(), 4 * kUs);  // rung at 4 us: starts then
  // Up at 2 us, down at the clear (3 us), up again at the kernel's failure
  // (its first command is refused at once: 4 us).
  const nlohmann::json expected = {{2 * kUs, true}, {3 * kUs, false}, {4 * kUs, true}};
  EXPECT_EQ(j["irq_changes"], expected);
}

// A failed launch records kKernelError with the launch's message.
TEST(Irq, RisesWhenALaunchFails) {
  const nlohmann::json j = run([] {
    nlohmann::json r;
    Bench b([&](RegsInitiator& cpu) { cpu.write(kIrqEnable, kIrqError); });
    b.pe().launch("failing", failing);
    sc_core::sc_start();
    r["status"] = int(b.pe().pe_regs.status());
    r["code"] = int(b.pe().pe_regs.error_code());
    r["message"] = b.pe().pe_regs.error_message();
    r["launch_error"] = b.pe().pe_cpu.results().at(0).error;
    r["irq_changes"] = b.irq_changes();
    return r;
  });
  EXPECT_EQ(j["status"].get<int>(), int(Status::kError));
  EXPECT_EQ(j["code"].get<int>(), int(ErrorCode::kKernelError));
  EXPECT_EQ(j["message"].get<std::string>(), j["launch_error"].get<std::string>());
  const nlohmann::json expected = {{0, true}};
  EXPECT_EQ(j["irq_changes"], expected);
}

// A command that faults while it runs (its HBM access would end past
// 2^64 - 1 ps; test_kernel_error's AnEngineFaultStopsThePe): kCommandFault
// with the command's completion id, recorded before the launch's failure.
TEST(Irq, RisesOnACommandFaultNamingTheCommand) {
  const nlohmann::json j = run([] {
    nlohmann::json r;
    Bench b([&](RegsInitiator& cpu) { cpu.write(kIrqEnable, kIrqError); });
    const uint64_t spin = std::numeric_limits<uint64_t>::max() / 1000 - 5000;
    b.pe().launch("faulting", [spin](Tl& tl) {
      const Tensor x = tl.hbm("x", 1024, 1024, Dtype::kBf16);
      const Tensor big = tl.tcm("big", 1024, 1024, Dtype::kBf16);
      tl.host_random(x, 1);
      tl.cycles(spin);
      tl.load(big, x);  // #1: faults
    });
    sc_core::sc_start();
    r["code"] = int(b.pe().pe_regs.error_code());
    r["command"] = b.pe().pe_regs.error_command();
    r["message"] = b.pe().pe_regs.error_message();
    r["irq"] = b.line.read();
    r["launch_error"] = b.pe().pe_cpu.results().at(0).error;
    return r;
  });
  EXPECT_EQ(j["code"].get<int>(), int(ErrorCode::kCommandFault));
  EXPECT_EQ(j["command"].get<uint32_t>(), 1u);
  EXPECT_NE(j["message"].get<std::string>().find("command #1 DmaReadCmd: simulated time overflows"),
            std::string::npos)
      << j.dump();
  EXPECT_NE(j["launch_error"].get<std::string>(), "");
  EXPECT_TRUE(j["irq"].get<bool>());
}

// transport_dbg reads what b_transport reads and changes nothing: not
// IRQ_STATUS (a debug write does not clear it), not the doorbell (a debug
// write launches nothing), not the table.
TEST(Registers, DebugReadsHaveNoSideEffects) {
  const nlohmann::json j = run([] {
    nlohmann::json r;
    int installs = 0;
    Bench b([&](RegsInitiator& cpu) {
      cpu.write(kIrqEnable, kIrqError | kIrqDrained);
      (void)cpu.write_status(kDoorbell, 7);  // unknown: an error, kIrqError
      std::vector<uint8_t> entry(kTensorDescBytes);
      for (size_t i = 0; i < entry.size(); ++i) entry[i] = uint8_t(i * 3 + 1);
      r["table_write"] = int(cpu.write_bytes(kTensorTable + 3 * kTensorDescBytes, entry));
      for (const Readable& reg : kReadable) {
        r["dbg"][reg.name] = cpu.dbg_read(reg.offset, reg.width);
        r["dbg_again"][reg.name] = cpu.dbg_read(reg.offset, reg.width);
        r["bus"][reg.name] = cpu.read(reg.offset, reg.width);
      }
      unsigned char ones[4] = {0xFF, 0xFF, 0xFF, 0xFF};
      r["dbg_write_irq_status"] = cpu.dbg(tlm::TLM_WRITE_COMMAND, kIrqStatus, ones, 4);
      unsigned char zero[4] = {};
      r["dbg_write_doorbell"] = cpu.dbg(tlm::TLM_WRITE_COMMAND, kDoorbell, zero, 4);
      r["dbg_write_table"] = cpu.dbg(tlm::TLM_WRITE_COMMAND, kTensorTable + 3 * kTensorDescBytes, ones, 4);
      unsigned char buf[64] = {};
      r["dbg_queue"] = cpu.dbg(tlm::TLM_READ_COMMAND, kQueue, buf, 4);
      r["dbg_doorbell"] = cpu.dbg(tlm::TLM_READ_COMMAND, kDoorbell, buf, 4);
      r["dbg_short"] = cpu.dbg(tlm::TLM_READ_COMMAND, kStatus, buf, 2);
      r["dbg_misaligned"] = cpu.dbg(tlm::TLM_READ_COMMAND, kStatus + 1, buf, 4);
      r["dbg_gap"] = cpu.dbg(tlm::TLM_READ_COMMAND, 0x200, buf, 4);
      r["dbg_past_table"] = cpu.dbg(tlm::TLM_READ_COMMAND, kTensorTableEnd - 8, buf, 16);
      r["dbg_table_part"] = cpu.dbg(tlm::TLM_READ_COMMAND, kTensorTable + 3 * kTensorDescBytes + 8, buf, 16);
      r["table_part"] = std::vector<int>(buf, buf + 16);
      unsigned char whole[64] = {};
      (void)cpu.access(tlm::TLM_READ_COMMAND, kTensorTable + 3 * kTensorDescBytes, whole, 64);
      r["table_entry"] = std::vector<int>(whole, whole + 64);
      for (const Readable& reg : kReadable) r["after"][reg.name] = cpu.read(reg.offset, reg.width);
    });
    b.pe().register_kernel("load", one_load);
    b.pe().pe_regs.on_tensor_write([&installs](Handle, const uint8_t*) {
      ++installs;
      return std::string();
    });
    sc_core::sc_start();
    r["installs"] = installs;
    r["launches"] = b.pe().pe_cpu.results().size();
    r["irq_changes"] = b.irq_changes();
    return r;
  });
  EXPECT_EQ(j["table_write"].get<int>(), int(tlm::TLM_OK_RESPONSE));
  EXPECT_EQ(j["dbg"], j["bus"]);
  EXPECT_EQ(j["dbg_again"], j["bus"]);
  EXPECT_EQ(j["after"], j["bus"]);
  EXPECT_EQ(j["bus"]["irq_status"].get<uint32_t>(), uint32_t(kIrqError));
  EXPECT_EQ(j["bus"]["status"].get<uint32_t>(), uint32_t(Status::kError));
  for (const char* k : {"dbg_write_irq_status", "dbg_write_doorbell", "dbg_write_table", "dbg_queue",
                        "dbg_doorbell", "dbg_short", "dbg_misaligned", "dbg_gap", "dbg_past_table"}) {
    EXPECT_EQ(j[k].get<unsigned>(), 0u) << k;
  }
  EXPECT_EQ(j["dbg_table_part"].get<unsigned>(), 16u);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(j["table_part"][size_t(i)].get<int>(), (i + 8) * 3 + 1);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(j["table_entry"][size_t(i)].get<int>(), (i * 3 + 1) & 0xFF);
  EXPECT_EQ(j["installs"].get<int>(), 1);
  EXPECT_EQ(j["launches"].get<size_t>(), 0u);
  const nlohmann::json expected = {{0, true}};  // raised once, never cleared
  EXPECT_EQ(j["irq_changes"], expected);
}

// The tensor table window: the handler gets the entry's handle and bytes;
// an entry it refuses is not stored, gets an error response and records
// kBadTensor; a handler that throws is refused the same way; without a
// handler a write is a command error.
TEST(Registers, TensorTableWritesGoToTheHandler) {
  const nlohmann::json j = run([] {
    nlohmann::json r;
    std::vector<Handle> handles;
    Bench b([&](RegsInitiator& cpu) {
      std::vector<uint8_t> good(kTensorDescBytes, 0x11), bad(kTensorDescBytes, 0x22),
          throws(kTensorDescBytes, 0x33);
      r["good"] = int(cpu.write_bytes(kTensorTable + 5 * kTensorDescBytes, good));
      r["bad"] = int(cpu.write_bytes(kTensorTable + 6 * kTensorDescBytes, bad));
      r["code_after_bad"] = cpu.read(kErrorCode);
      r["throws"] = int(cpu.write_bytes(kTensorTable + 7 * kTensorDescBytes, throws));
      for (int e : {5, 6, 7}) {
        unsigned char buf[64] = {};
        (void)cpu.access(tlm::TLM_READ_COMMAND, kTensorTable + uint64_t(e) * kTensorDescBytes, buf, 64);
        r["first_byte"].push_back(int(buf[0]));
      }
    });
    b.pe().pe_regs.on_tensor_write([&handles](Handle h, const uint8_t* bytes) -> std::string {
      handles.push_back(h);
      if (bytes[0] == 0x22) return "dtype 34 is not a dtype";
      if (bytes[0] == 0x33) throw std::runtime_error("handler failed");
      return "";
    });
    sc_core::sc_start();
    r["handles"] = handles;
    r["message"] = b.pe().pe_regs.error_message();
    r["irq_status"] = b.pe().pe_regs.irq_status();
    return r;
  });
  EXPECT_EQ(j["good"].get<int>(), int(tlm::TLM_OK_RESPONSE));
  EXPECT_EQ(j["bad"].get<int>(), int(tlm::TLM_GENERIC_ERROR_RESPONSE));
  EXPECT_EQ(j["throws"].get<int>(), int(tlm::TLM_GENERIC_ERROR_RESPONSE));
  EXPECT_EQ(j["code_after_bad"].get<uint32_t>(), uint32_t(ErrorCode::kBadTensor));
  const nlohmann::json first = {0x11, 0, 0};  // refused entries are not stored
  EXPECT_EQ(j["first_byte"], first);
  const nlohmann::json handles = {kTensorTable + 5 * kTensorDescBytes, kTensorTable + 6 * kTensorDescBytes,
                                  kTensorTable + 7 * kTensorDescBytes};
  EXPECT_EQ(j["handles"], handles);
  EXPECT_EQ(j["message"].get<std::string>(), "tensor descriptor at 0x10180: dtype 34 is not a dtype");
  EXPECT_EQ(j["irq_status"].get<uint32_t>(), uint32_t(kIrqError));
}

TEST(Registers, TensorTableWriteWithoutAHandlerIsACommandError) {
  const nlohmann::json j = run([] {
    nlohmann::json r;
    Bench b([&](RegsInitiator& cpu) {
      r["write"] = int(cpu.write_bytes(kTensorTable, std::vector<uint8_t>(kTensorDescBytes, 1)));
      r["error_code"] = cpu.read(kErrorCode);
    });
    b.pe().pe_regs.on_tensor_write({});  // whatever Pe wired
    sc_core::sc_start();
    return r;
  });
  EXPECT_EQ(j["write"].get<int>(), int(tlm::TLM_COMMAND_ERROR_RESPONSE));
  EXPECT_EQ(j["error_code"].get<uint32_t>(), 0u);
}

// A DOORBELL write launches the kernel registered under its index, at the
// write's time; STATUS is busy from the write until the launch has ended;
// KERNELS counts the registered kernels.
TEST(Doorbell, LaunchesTheRegisteredKernelAtItsTime) {
  const nlohmann::json j = run([] {
    nlohmann::json r;
    Bench b([&](RegsInitiator& cpu) {
      r["kernels"] = cpu.read(kKernels);
      sc_core::wait(3, sc_core::SC_US);
      r["status_before"] = cpu.read(kStatus);
      cpu.write(kDoorbell, 1);
      r["status_after_write"] = cpu.read(kStatus);
      sc_core::wait(20, sc_core::SC_US);
      r["status_later"] = cpu.read(kStatus);
      r["completed"] = cpu.read(kCompleted, 8);
    });
    b.pe().register_kernel("spin", [](Tl& tl) { tl.cycles(10); });
    b.pe().register_kernel("load", one_load);
    sc_core::sc_start();
    for (const LaunchResult& l : b.pe().pe_cpu.results())
      r["launches"].push_back({{"kernel", l.kernel}, {"start", l.start_ps}, {"end", l.end_ps},
                               {"error", l.error}, {"commands", l.commands}});
    return r;
  });
  EXPECT_EQ(j["kernels"].get<uint32_t>(), 2u);
  EXPECT_EQ(j["status_before"].get<uint32_t>(), uint32_t(Status::kIdle));
  EXPECT_EQ(j["status_after_write"].get<uint32_t>(), uint32_t(Status::kBusy));
  EXPECT_EQ(j["status_later"].get<uint32_t>(), uint32_t(Status::kIdle));
  ASSERT_EQ(j["launches"].size(), 1u) << j.dump();
  const auto& l = j["launches"][0];
  EXPECT_EQ(l["kernel"].get<std::string>(), "load");
  EXPECT_EQ(l["error"].get<std::string>(), "");
  EXPECT_EQ(l["start"].get<uint64_t>(), 3 * kUs);
  EXPECT_GT(l["end"].get<uint64_t>(), 3 * kUs);
  EXPECT_LT(l["end"].get<uint64_t>(), 23 * kUs);
  EXPECT_EQ(j["completed"].get<uint64_t>(), l["commands"].get<uint64_t>());
}

// Puts a checker on every binding of the PE (LinkBinder) and keeps it.
struct Checked {
  std::vector<std::unique_ptr<test::BaseProtocolChecker>> checkers;
  std::vector<std::string> links;
  LinkBinder binder() {
    return [this](tlm::tlm_initiator_socket<32>& from, TargetSocketBase& to, const std::string& link) {
      checkers.push_back(std::make_unique<test::BaseProtocolChecker>(sc_core::sc_gen_unique_name("checker")));
      from.bind(checkers.back()->in);
      checkers.back()->out.bind(to);
      links.push_back(link);
    };
  }
};

// The base protocol on `regs` (a checker between the CPU and pe.regs) and
// on every internal binding, pe_regs.queue -> pe_scheduler.in included,
// while the CPU reads, writes, rings the doorbell, writes a descriptor and
// reads through debug transport: no violation.
TEST(Protocol, RegsAndTheQueueLinkFollowTheBaseProtocol) {
  const nlohmann::json j = run([] {
    nlohmann::json r;
    Checked c;
    uint64_t accesses = 0;
    Bench b(
        [&](RegsInitiator& cpu) {
          for (const Readable& reg : kReadable) {
            (void)cpu.read(reg.offset, reg.width);
            (void)cpu.dbg_read(reg.offset, reg.width);
            accesses += 2;
          }
          cpu.write(kIrqEnable, kIrqDrained | kIrqError);
          cpu.write(kDoorbell, 0);
          accesses += 2;
          sc_core::wait(5, sc_core::SC_US);
          // Not a descriptor (type 0xFF): refused by PE_SCHEDULER, which
          // answers with an error response.
          r["queue_write"] = int(cpu.write_bytes(kQueue, std::vector<uint8_t>(20, 0xFF)));
          cpu.write(kIrqStatus, 0xFFFFFFFF);
          (void)cpu.write_status(kStatus, 1);  // refused: read-only
          (void)cpu.write_status(0x200, 1);    // refused: no register
          accesses += 4;
          r["status"] = cpu.read(kStatus);
          ++accesses;
        },
        c.binder(), /*check_regs=*/true);
    b.pe().register_kernel("load", one_load);
    sc_core::sc_start();
    r["violations"] = test::BaseProtocolChecker::violation_count();
    r["first"] = nlohmann::json::array();
    for (size_t i = 0; i < test::BaseProtocolChecker::violations().size() && i < 5; ++i)
      r["first"].push_back(test::BaseProtocolChecker::violations()[i]);
    for (size_t i = 0; i < c.checkers.size(); ++i) r["transactions"][c.links[i]] = c.checkers[i]->transactions();
    r["accesses"] = accesses;
    r["regs_transactions"] = b.regs_checker->transactions();
    r["launch_error"] = b.pe().pe_cpu.results().at(0).error;
    return r;
  });
  EXPECT_EQ(j["violations"].get<uint64_t>(), 0u) << j["first"].dump(1);
  EXPECT_NE(j["queue_write"].get<int>(), int(tlm::TLM_OK_RESPONSE));
  EXPECT_EQ(j["launch_error"].get<std::string>(), "");
  const auto& t = j["transactions"];
  ASSERT_TRUE(t.contains("pe.pe_regs.queue -> pe.pe_scheduler.in")) << t.dump(1);
  EXPECT_EQ(t["pe.pe_regs.queue -> pe.pe_scheduler.in"].get<uint64_t>(), 1u);
  EXPECT_GT(t["pe.pe_cpu.cmd -> pe.pe_scheduler.in"].get<uint64_t>(), 0u);
  EXPECT_EQ(j["accesses"].get<uint64_t>(), 2 * std::size(kReadable) + 7);
  EXPECT_EQ(j["regs_transactions"], j["accesses"]);  // every access went through the checker
}

}  // namespace
}  // namespace kb
