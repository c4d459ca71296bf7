// PE_SCHEDULER decodes descriptors from the payload bytes:
// - the extension is only a fast path: opt2, opt3 and a composite GEMM give
//   byte-identical op logs with and without it, in timing and data mode;
// - a malformed descriptor written by an initiator of its own gets an error
//   response, a kernbench/descriptor_error report and the hook's call with
//   its ErrorCode, and the simulation goes on (a later write still works),
//   on b_transport and on nb_transport_fw with the queue full;
// - completion ids are unwrapped to 64-bit command ids.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>

#include "kernels/attention/gqa_decode.h"
#include "kernels/gemm/gemm_composite.h"
#include "models/isa/descriptor.h"
#include "models/pe/pe.h"
#include "models/pe/scheduler/pe_scheduler.h"
#include "models/top/pe_top.h"
#include "models/util/module_payload.h"
#include "tb/run/runner.h"
#include "tests/test_files.h"
#include "tests/tlm/base_protocol_checker.h"

namespace kb {
namespace {

using ::testing::HasSubstr;
using test::read_file;
using test::TempDir;

// --- the extension is a fast path

struct Workload {
  const char* name;
  Kernel kernel;
};

std::vector<Workload> workloads(bool data) {
  GqaShape g;
  g.q_heads = 8, g.kv_heads = 2, g.head_dim = 64;
  g.context = data ? 300 : 1000, g.kv_tile = 128;  // a tail tile
  GemmShape m;
  m.m = 192, m.n = 160, m.k = data ? 128 : 320;  // several tiles, partial ones
  // In data mode the outputs' sums are metrics: the values match too.
  const auto sum = [](Tl& tl, const Tensor& t) {
    double s = 0;
    for (float v : tl.host_read(t)) s += double(v);
    return s;
  };
  return {{"opt2",
           [g, data, sum](Tl& tl) {
             const GqaTensors t = gqa_inputs(tl, g, 5);
             gqa_decode_opt2(tl, g, t);
             if (data) tl.metric("out", sum(tl, t.out));
           }},
          {"opt3",
           [g, data, sum](Tl& tl) {
             const GqaTensors t = gqa_inputs(tl, g, 5);
             gqa_decode_opt3(tl, g, t);
             if (data) tl.metric("out", sum(tl, t.out));
           }},
          {"composite gemm", [m, data, sum](Tl& tl) {
             const GemmTensors t = gemm_inputs(tl, m);
             gemm_composite(tl, m, t);
             if (data) tl.metric("out", sum(tl, t.c));
           }}};
}

class ExtensionIsAFastPath : public ::testing::TestWithParam<bool> {};

TEST_P(ExtensionIsAFastPath, OpLogsAreByteIdenticalWithAndWithoutIt) {
  const bool data = GetParam();
  for (const Workload& w : workloads(data)) {
    TempDir dir;
    std::string logs[2];
    RunResult results[2];
    for (int ext = 0; ext < 2; ++ext) {
      RunSpec spec;
      spec.config.data_mode = data;
      spec.config.cpu.descriptor_extension = ext == 1;
      spec.launches = {{w.name, w.kernel}};
      spec.oplog_path = dir.file(std::string("oplog") + char('0' + ext) + ".csv");
      results[ext] = run_isolated(spec);
      ASSERT_TRUE(results[ext].ok) << w.name << " extension " << ext << ": " << results[ext].error;
      logs[ext] = read_file(spec.oplog_path);
    }
    // Many commands, every engine: the comparison has something to compare.
    EXPECT_GE(results[0].launches.at(0).commands, 1u) << w.name;
    EXPECT_GT(std::count(logs[0].begin(), logs[0].end(), '\n'), 10) << w.name;
    EXPECT_EQ(logs[0], logs[1]) << w.name << ": op logs differ with the extension off and on";
    EXPECT_EQ(results[0].end_ps, results[1].end_ps) << w.name;
    if (data) {
      const auto out = [](const RunResult& r) {
        for (const auto& [k, v] : r.launches.at(0).metrics)
          if (k == "out") return v;
        return -1.0;
      };
      EXPECT_EQ(out(results[0]), out(results[1])) << w.name;
      EXPECT_NE(out(results[0]), 0.0) << w.name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, ExtensionIsAFastPath, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "Data" : "Timing"; });

// --- malformed descriptors from a driver of its own

int g_descriptor_reports = 0;
std::string g_last_report;

// Counts the descriptor reports, lets SystemC act on them (SC_THROW: the
// scheduler catches its own report); any other warning or error fails.
void count_reports(const sc_core::sc_report& r, const sc_core::sc_actions& actions) {
  if (std::strcmp(r.get_msg_type(), kDescriptorErrorType) == 0 && r.get_severity() == sc_core::SC_ERROR) {
    ++g_descriptor_reports;
    g_last_report = r.get_msg();
  } else if (r.get_severity() >= sc_core::SC_WARNING) {
    throw std::runtime_error(std::string("unexpected SystemC report ") + r.get_msg_type() + ": " + r.get_msg());
  }
  sc_core::sc_report_handler::default_handler(r, actions);
}

struct HookCall {
  regs::ErrorCode code;
  uint32_t id;
  std::string what;
};

// A VP driver: writes descriptors straight into PE_SCHEDULER's `in`.
struct Driver : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Driver> out;
  ModulePayload p;
  std::vector<uint8_t> bytes;
  sc_core::sc_event resp;
  Driver(sc_core::sc_module_name n) : sc_module(n), out("out") {
    out.register_nb_transport_bw(this, &Driver::nb_transport_bw);
  }
  void prepare(const std::vector<uint8_t>& b, const CommandExtension* ext) {
    bytes = b;
    p.set_command(tlm::TLM_WRITE_COMMAND);
    p.set_address(kQueueAddress);
    p.set_data_ptr(bytes.data());
    p.set_data_length(unsigned(bytes.size()));
    p.set_streaming_width(unsigned(bytes.size()));
    p.set_byte_enable_ptr(nullptr);
    p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    if (CommandExtension* old = p.get_extension<CommandExtension>()) {
      p.clear_extension(old);
      delete old;
    }
    if (ext) p.set_extension(static_cast<CommandExtension*>(ext->clone()));
  }
  tlm::tlm_response_status write(const std::vector<uint8_t>& b, const CommandExtension* ext = nullptr) {
    prepare(b, ext);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    out->b_transport(p, d);
    return p.get_response_status();
  }
  // `delay`: the write begins that far ahead (base protocol annotation).
  tlm::tlm_sync_enum write_nb(const std::vector<uint8_t>& b, sc_core::sc_time delay = sc_core::SC_ZERO_TIME) {
    prepare(b, nullptr);
    tlm::tlm_phase ph = tlm::BEGIN_REQ;
    p.acquire();  // base protocol memory management: released when the write completes
    const tlm::tlm_sync_enum r = out->nb_transport_fw(p, ph, delay);
    if (r == tlm::TLM_COMPLETED) p.release();
    return r;
  }
  uint64_t drain() {
    uint64_t completed = 0;
    tlm::tlm_generic_payload r;
    r.set_command(tlm::TLM_READ_COMMAND);
    r.set_address(kDrainAddress);
    r.set_data_ptr(reinterpret_cast<unsigned char*>(&completed));
    r.set_data_length(8);
    r.set_streaming_width(8);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    out->b_transport(r, d);
    return completed;
  }
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload&, tlm::tlm_phase& ph, sc_core::sc_time&) {
    if (ph == tlm::BEGIN_RESP) {
      p.release();
      resp.notify();
    }
    return tlm::TLM_COMPLETED;
  }
};

constexpr Handle kDst = regs::kTensorTable;                               // entry 0: TCM
constexpr Handle kSrc = regs::kTensorTable + regs::kTensorDescBytes;      // entry 1: HBM
constexpr Handle kEmpty = regs::kTensorTable + 5 * regs::kTensorDescBytes;  // never written

void install_tensors(TensorTable& t) {
  TensorDesc dst, src;
  dst.space = MemSpace::kTcm, dst.dtype = Dtype::kBf16, dst.rows = dst.cols = dst.row_stride = 64;
  dst.address = kTcmBase;
  src = dst, src.space = MemSpace::kHbm, src.address = kHbmBase;
  // Through the bytes a driver writes.
  const auto d = desc::encode_tensor(dst, "dst"), s = desc::encode_tensor(src, "src");
  t.install(kDst, desc::decode_tensor(d.data(), d.size()));
  t.install(kSrc, desc::decode_tensor(s.data(), s.size()));
}

std::vector<uint8_t> load(uint32_t id, Handle dst = kDst, Handle src = kSrc) {
  return desc::encode(DmaReadCmd{dst, src}, id);
}

// A composite over the D7 cap (1024 bytes by default): 60 ops of 20 bytes.
CompositeCmd big_composite() {
  CompositeCmd c;
  for (int i = 0; i < 60; ++i) {
    OpSpec op;
    op.kind = "exp";
    op.scope = OpScope::kPrologue;
    op.operands = {{"src_a", kDst}};
    op.has_out = true;
    op.out = kDst;
    c.ops.push_back(op);
  }
  return c;
}

TEST(MalformedDescriptors, EachGetsAnErrorResponseAReportAndTheHookAndTheSimulationGoesOn) {
  const nlohmann::json j = run_function_isolated([] {
    sc_core::sc_report_handler::set_handler(count_reports);
    PeConfig cfg;
    PeTop top(cfg);
    Pe& pe = top.pe();
    Driver drv("driver");
    drv.out.bind(pe.pe_scheduler.in);
    std::vector<HookCall> hooks;
    pe.pe_scheduler.on_descriptor_error(
        [&](regs::ErrorCode c, uint32_t id, const std::string& w) { hooks.push_back({c, id, w}); });
    install_tensors(pe.tensors());
    nlohmann::json cases = nlohmann::json::array();
    uint64_t completed = 0;
    sc_core::sc_spawn([&] {
      struct Case {
        const char* name;
        std::vector<uint8_t> bytes;
        regs::ErrorCode code;
        uint32_t id;
        const CommandExtension* ext = nullptr;
      };
      std::vector<uint8_t> unknown = load(11), longer = load(12), shorter = load(13), flag;
      unknown[0] = 0xEE;  // past the last command type
      longer.push_back(0);
      shorter.pop_back();
      GemmCmd g{kDst, kDst, kDst, 64, 64, 64, false, false};
      flag = desc::encode(g, 16);
      flag[40] = 2;  // transpose_b: 0 or 1
      const Command fast = DmaReadCmd{kDst, kSrc};
      CommandExtension ext;
      ext.cmd = &fast;
      ext.id = 21;
      std::vector<Case> cs = {
          {"unknown type", unknown, regs::ErrorCode::kUnknownType, 11},
          {"longer than its logical bytes", longer, regs::ErrorCode::kBadLength, 12},
          {"shorter than its logical bytes", shorter, regs::ErrorCode::kBadLength, 13},
          {"handle outside the table", load(14, kDst, regs::kTensorTableEnd), regs::ErrorCode::kBadHandle, 14},
          {"empty table entry", load(15, kDst, kEmpty), regs::ErrorCode::kBadHandle, 15},
          {"misaligned handle", load(17, kDst, kSrc + 8), regs::ErrorCode::kBadHandle, 17},
          {"field that does not decode", flag, regs::ErrorCode::kMalformed, 16},
          {"composite over the D7 cap", desc::encode(big_composite(), 18), regs::ErrorCode::kCompositeCap, 18},
          {"command that does not fit its tensors", load(19, kSrc, kDst), regs::ErrorCode::kInvalidCommand, 19},
          {"extension with bytes of another length", std::vector<uint8_t>(19, 0), regs::ErrorCode::kBadLength, 21,
           &ext},
          {"extension whose bytes name another command", load(22), regs::ErrorCode::kMalformed, 21, &ext},
      };
      for (const Case& c : cs) {
        const size_t hooks_before = hooks.size();
        const int reports_before = g_descriptor_reports;
        const tlm::tlm_response_status st = drv.write(c.bytes, c.ext);
        nlohmann::json r = {{"name", c.name},
                            {"status", int(st)},
                            {"expected_code", int(c.code)},
                            {"expected_id", c.id},
                            {"hooks", hooks.size() - hooks_before},
                            {"reports", g_descriptor_reports - reports_before},
                            {"report", g_last_report}};
        if (hooks.size() > hooks_before) {
          r["code"] = int(hooks.back().code);
          r["id"] = hooks.back().id;
          r["what"] = hooks.back().what;
        }
        cases.push_back(r);
      }
      // The simulation goes on: valid descriptors, ids unwrapped (7, then
      // 3 after 7: 2^24 + 3), and the fast path with a matching framing.
      const int ok1 = drv.write(load(7)) == tlm::TLM_OK_RESPONSE;
      const int ok2 = drv.write(load(3)) == tlm::TLM_OK_RESPONSE;
      const Command fast2 = DmaReadCmd{kDst, kSrc};
      CommandExtension e2;
      e2.cmd = &fast2;
      e2.id = (uint64_t(1) << 24) + 9;
      const int ok3 = drv.write(load(9), &e2) == tlm::TLM_OK_RESPONSE;
      completed = drv.drain();
      cases.push_back({{"valid_ok", ok1 + ok2 + ok3}});
    });
    sc_core::sc_start();
    pe.op_log().flush();
    std::vector<uint64_t> ids;
    for (const OpRecord& r : pe.op_log().records())
      if (r.component == Component::kPeDma) ids.push_back(r.cmd_id);
    return nlohmann::json{{"cases", cases}, {"completed", completed}, {"dma_ids", ids}};
  });
  ASSERT_FALSE(j.contains("error")) << j.dump();
  const auto& cases = j.at("cases");
  for (size_t i = 0; i + 1 < cases.size(); ++i) {
    const auto& c = cases[i];
    SCOPED_TRACE(c.dump());
    EXPECT_EQ(c.at("status").get<int>(), int(tlm::TLM_GENERIC_ERROR_RESPONSE));
    EXPECT_EQ(c.at("reports").get<int>(), 1);
    ASSERT_EQ(c.at("hooks").get<int>(), 1);
    EXPECT_EQ(c.at("code"), c.at("expected_code"));
    EXPECT_EQ(c.at("id"), c.at("expected_id"));
    EXPECT_EQ(c.at("report"), c.at("what"));
  }
  EXPECT_THAT(cases[0].at("what").get<std::string>(), HasSubstr("descriptor type 238 is unknown"));
  EXPECT_THAT(cases[3].at("what").get<std::string>(), HasSubstr("outside the tensor table"));
  EXPECT_THAT(cases[4].at("what").get<std::string>(), HasSubstr("entry 5"));
  EXPECT_THAT(cases[7].at("what").get<std::string>(), HasSubstr("docs/cost-model.md D7"));
  EXPECT_EQ(cases.back().at("valid_ok").get<int>(), 3);
  EXPECT_EQ(j.at("completed").get<uint64_t>(), 3u);
  const uint64_t wrap = uint64_t(1) << 24;
  EXPECT_EQ(j.at("dma_ids").get<std::vector<uint64_t>>(), (std::vector<uint64_t>{7, wrap + 3, wrap + 9}));
}

TEST(MalformedDescriptors, NbTransportRefusesAtOnceEvenWithTheQueueFull) {
  const nlohmann::json j = run_function_isolated([] {
    sc_core::sc_report_handler::set_handler(count_reports);
    PeConfig cfg;
    cfg.scheduler.queue_depth = 1;
    PeTop top(cfg);
    Pe& pe = top.pe();
    Driver drv("driver");
    drv.out.bind(pe.pe_scheduler.in);
    std::vector<HookCall> hooks;
    pe.pe_scheduler.on_descriptor_error(
        [&](regs::ErrorCode c, uint32_t id, const std::string& w) { hooks.push_back({c, id, w}); });
    install_tensors(pe.tensors());
    nlohmann::json r;
    sc_core::sc_spawn([&] {
      r["first"] = int(drv.write_nb(load(1)));  // accepted at once
      r["first_ok"] = drv.p.is_response_ok();
      std::vector<uint8_t> bad = load(2);
      bad[0] = 0;
      r["bad"] = int(drv.write_nb(bad));  // the queue is full: refused all the same
      r["bad_status"] = int(drv.p.get_response_status());
      r["bad_at_ps"] = now_ps();
      r["occupancy"] = pe.pe_scheduler.occupancy();
      r["second"] = int(drv.write_nb(load(3)));  // waits for the slot
      sc_core::wait(drv.resp);
      r["second_ok"] = drv.p.is_response_ok();
      r["second_at_ps"] = now_ps();
      r["completed"] = drv.drain();
    });
    sc_core::sc_start();
    r["hooks"] = hooks.size();
    r["code"] = hooks.empty() ? -1 : int(hooks[0].code);
    r["reports"] = g_descriptor_reports;
    return r;
  });
  ASSERT_FALSE(j.contains("error")) << j.dump();
  EXPECT_EQ(j.at("first").get<int>(), int(tlm::TLM_COMPLETED));
  EXPECT_TRUE(j.at("first_ok").get<bool>());
  EXPECT_EQ(j.at("bad").get<int>(), int(tlm::TLM_COMPLETED));
  EXPECT_EQ(j.at("bad_status").get<int>(), int(tlm::TLM_GENERIC_ERROR_RESPONSE));
  EXPECT_EQ(j.at("bad_at_ps").get<uint64_t>(), 0u);
  EXPECT_EQ(j.at("occupancy").get<int>(), 1);
  EXPECT_EQ(j.at("second").get<int>(), int(tlm::TLM_ACCEPTED));
  EXPECT_TRUE(j.at("second_ok").get<bool>());
  EXPECT_GT(j.at("second_at_ps").get<uint64_t>(), 0u);
  EXPECT_EQ(j.at("completed").get<uint64_t>(), 2u);
  EXPECT_EQ(j.at("hooks").get<int>(), 1);
  EXPECT_EQ(j.at("code").get<int>(), int(regs::ErrorCode::kUnknownType));
  EXPECT_EQ(j.at("reports").get<int>(), 1);
}

// --- writes annotated ahead (base protocol timing annotation on BEGIN_REQ)

// A BEGIN_REQ with a delay begins then: taken at its beginning when a slot
// is free, else when one frees; two initiators' writes waiting for the one
// slot are taken in the order they began, not the order they were sent.
TEST(AnnotatedWrites, BeginAtTheirTimeAndWaitInTheOrderTheyBegan) {
  const nlohmann::json j = run_function_isolated([] {
    PeConfig cfg;
    cfg.scheduler.queue_depth = 1;
    PeTop top(cfg);
    Pe& pe = top.pe();
    Driver a("a"), b("b");
    test::BaseProtocolChecker ca("checker_a"), cb("checker_b");
    a.out.bind(ca.in);
    ca.out.bind(pe.pe_scheduler.in);
    b.out.bind(cb.in);
    cb.out.bind(pe.pe_scheduler.in);
    install_tensors(pe.tensors());
    nlohmann::json r;
    const sc_core::sc_time ns(1, sc_core::SC_NS);
    sc_core::sc_spawn([&] {
      r["a1"] = int(a.write_nb(load(1), 10 * ns));  // begins at 10 ns, the queue empty
      sc_core::wait(a.resp);
      r["a1_at"] = now_ps();
      r["a2"] = int(a.write_nb(load(2), 5 * ns));  // begins at 15 ns: #1 runs
      sc_core::wait(a.resp);
      r["a2_at"] = now_ps();
    });
    sc_core::sc_spawn([&] {
      r["b3"] = int(b.write_nb(load(3), 20 * ns));  // sent first, begins after a's #2
      sc_core::wait(b.resp);
      r["b3_at"] = now_ps();
      r["completed"] = b.drain();
    });
    sc_core::sc_start();
    pe.op_log().flush();
    for (const OpRecord& rec : pe.op_log().records())
      if (rec.kind == RecordKind::kDmaRead) r["end"][std::to_string(rec.cmd_id)] = rec.end_ps;
    r["violations"] = test::BaseProtocolChecker::violation_count();
    r["first"] = nlohmann::json::array();
    for (size_t i = 0; i < test::BaseProtocolChecker::violations().size() && i < 5; ++i)
      r["first"].push_back(test::BaseProtocolChecker::violations()[i]);
    return r;
  });
  ASSERT_FALSE(j.contains("error")) << j.dump();
  EXPECT_EQ(j.at("a1").get<int>(), int(tlm::TLM_ACCEPTED));
  EXPECT_EQ(j.at("a2").get<int>(), int(tlm::TLM_ACCEPTED));
  EXPECT_EQ(j.at("b3").get<int>(), int(tlm::TLM_ACCEPTED));
  EXPECT_EQ(j.at("a1_at").get<uint64_t>(), 10000u);
  const uint64_t end1 = j.at("end").at("1"), end2 = j.at("end").at("2");
  ASSERT_GT(end1, 20000u) << j.dump();  // both others began while #1 ran
  EXPECT_EQ(j.at("a2_at").get<uint64_t>(), end1);  // began at 15 ns: first
  EXPECT_EQ(j.at("b3_at").get<uint64_t>(), end2);  // began at 20 ns: after it
  EXPECT_EQ(j.at("completed").get<uint64_t>(), 3u);
  EXPECT_EQ(j.at("violations").get<uint64_t>(), 0u) << j.at("first").dump(1);
}

// --- tensor descriptors and the table

TEST(TensorDescriptor, RoundTripAndTheTableResolvesIt) {
  TensorDesc d;
  d.space = MemSpace::kTcm, d.dtype = Dtype::kFp16, d.rows = 3, d.cols = 5, d.row_stride = 8;
  d.address = kTcmBase + 128;
  const auto b = desc::encode_tensor(d, "q_tile");
  EXPECT_EQ(b.size(), regs::kTensorDescBytes);
  EXPECT_EQ(b[0], 1);
  EXPECT_EQ(b[1], 2);
  EXPECT_EQ(b[40], 1);  // column stride
  const TensorDesc back = desc::decode_tensor(b.data(), b.size());
  EXPECT_EQ(back.space, d.space);
  EXPECT_EQ(back.dtype, d.dtype);
  EXPECT_EQ(back.rows, d.rows);
  EXPECT_EQ(back.cols, d.cols);
  EXPECT_EQ(back.row_stride, d.row_stride);
  EXPECT_EQ(back.address, d.address);
  EXPECT_EQ(back.name, "q_tile");
  EXPECT_EQ(desc::encode_tensor(back, back.name), b);

  TensorTable t(1 << 20);
  const Handle h = regs::kTensorTable + 7 * regs::kTensorDescBytes;
  EXPECT_FALSE(t.contains(h));
  EXPECT_THAT(t.why_unknown(h), HasSubstr("entry 7"));
  t.install(h, back);
  ASSERT_TRUE(t.contains(h));
  EXPECT_EQ(t.at(h).handle, h);
  EXPECT_EQ(t.at(h).address, d.address);
  EXPECT_FALSE(t.contains(h + 8));  // misaligned
  EXPECT_THAT(t.why_unknown(h + 8), HasSubstr("not at the start"));
  EXPECT_THROW(t.install(regs::kTensorTableEnd, back), KernelError);  // outside the window
  EXPECT_THROW(t.install(h + 8, back), KernelError);
  TensorDesc bad = back;
  bad.row_stride = 2;  // below cols: validate_tensor refuses, the entry stays
  EXPECT_THROW(t.install(h, bad), KernelError);
  EXPECT_EQ(t.at(h).row_stride, 8);
  // Declared handles never fall in the table window, however many.
  for (int i = 0; i < 3; ++i) {
    const Handle dh = t.declare("x", MemSpace::kHbm, 1, 1, Dtype::kFp32);
    EXPECT_FALSE(dh >= regs::kTensorTable && dh < regs::kTensorTableEnd);
    EXPECT_EQ(t.at(dh).name, "x");
  }
}

TEST(TensorDescriptor, EveryMalformedFieldIsRefusedNamingIt) {
  TensorDesc d;
  d.rows = d.cols = d.row_stride = 4;
  d.address = kHbmBase;
  const auto good = desc::encode_tensor(d, "t");
  struct Case {
    size_t at;
    uint8_t value;
    const char* says;  // with "byte <field offset>"
  };
  const Case cases[] = {{0, 2, "byte 0: memory space 2"}, {1, 4, "byte 1: dtype 4"},
                        {2, 1, "byte 2: reserved"},       {7, 9, "byte 7: reserved"},
                        {40, 2, "byte 40: column stride 2"}, {41, 1, "byte 40: column stride 257"},
                        {48, 7, "byte 48: name byte 7 is not printable"}, {60, 'x', "byte 60: name padding"}};
  for (const Case& c : cases) {
    auto b = good;
    b[c.at] = c.value;
    try {
      desc::decode_tensor(b.data(), b.size());
      ADD_FAILURE() << "byte " << c.at << " = " << int(c.value) << " decoded";
    } catch (const desc::DecodeError& e) {
      EXPECT_EQ(e.code, regs::ErrorCode::kBadTensor);
      EXPECT_THAT(e.what(), HasSubstr(c.says));
    }
  }
  EXPECT_THROW(desc::decode_tensor(good.data(), good.size() - 1), desc::DecodeError);
  EXPECT_THROW(desc::encode_tensor(d, std::string(17, 'a')), desc::EncodeError);
  EXPECT_THROW(desc::encode_tensor(d, "tab\there"), desc::EncodeError);
}

}  // namespace
}  // namespace kb
