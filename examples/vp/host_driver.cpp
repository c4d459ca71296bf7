#include "host_driver.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include <kernbench/models/isa/descriptor.h>
#include <kernbench/models/isa/register_map.h>
#include <kernbench/models/tl/tl.h>

namespace {
const sc_core::sc_time kAccessTime(10, sc_core::SC_NS);

// Seeded inputs in [-1, 1): a small LCG, so the VP needs nothing else.
std::vector<float> inputs(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  for (float& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = float(seed >> 8) / float(1u << 24) * 2.0f - 1.0f;
  }
  return v;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<double>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(double(a[i]) - b[i]));
  return worst;
}
}  // namespace

HostDriver::HostDriver(sc_core::sc_module_name name) : sc_module(name), regs("regs"), mem("mem"), irq("irq") {
  SC_HAS_PROCESS(HostDriver);
  SC_THREAD(run);
}

void HostDriver::access(tlm_utils::simple_initiator_socket<HostDriver>& s, tlm::tlm_command cmd,
                        uint64_t address, void* data, unsigned n) {
  tlm::tlm_generic_payload p;
  p.set_command(cmd);
  p.set_address(address);
  p.set_data_ptr(static_cast<unsigned char*>(data));
  p.set_data_length(n);
  p.set_streaming_width(n);
  p.set_byte_enable_ptr(nullptr);
  p.set_dmi_allowed(false);
  p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time delay = kAccessTime;
  s->b_transport(p, delay);
  wait(delay);
  if (!p.is_response_ok()) {
    char where[32];
    std::snprintf(where, sizeof where, "0x%llx", static_cast<unsigned long long>(address));
    SC_REPORT_FATAL(name(), (std::string("access at ") + where + " failed: " + p.get_response_string()).c_str());
  }
}

void HostDriver::write32(uint64_t offset, uint32_t v) { access(regs, tlm::TLM_WRITE_COMMAND, offset, &v, 4); }
uint32_t HostDriver::read32(uint64_t offset) {
  uint32_t v = 0;
  access(regs, tlm::TLM_READ_COMMAND, offset, &v, 4);
  return v;
}
uint64_t HostDriver::read64(uint64_t offset) {
  uint64_t v = 0;
  access(regs, tlm::TLM_READ_COMMAND, offset, &v, 8);
  return v;
}

void HostDriver::put(uint64_t address, const std::vector<float>& v) {
  access(mem, tlm::TLM_WRITE_COMMAND, address, const_cast<float*>(v.data()), unsigned(v.size() * 4));
}
std::vector<float> HostDriver::get(uint64_t address, size_t n) {
  std::vector<float> v(n);
  access(mem, tlm::TLM_READ_COMMAND, address, v.data(), unsigned(n * 4));
  return v;
}

kb::Tensor HostDriver::tensor(const std::string& name, kb::MemSpace space, uint64_t address, int64_t rows,
                              int64_t cols) {
  kb::TensorDesc d;
  d.space = space;
  d.dtype = kb::Dtype::kFp32;
  d.address = address;
  d.rows = rows;
  d.cols = cols;
  d.row_stride = cols;
  const uint64_t handle = kb::regs::kTensorTable + kb::regs::kTensorDescBytes * next_slot_++;
  auto bytes = kb::desc::encode_tensor(d, name);
  access(regs, tlm::TLM_WRITE_COMMAND, handle, bytes.data(), unsigned(bytes.size()));
  kb::Tensor t;
  t.handle = handle;
  t.rows = rows;
  t.cols = cols;
  t.dtype = d.dtype;
  t.space = space;
  return t;
}

void HostDriver::submit(const kb::Command& c) {
  std::vector<uint8_t> bytes = kb::desc::encode(c, next_id_++);  // exactly logical_bytes(c)
  access(regs, tlm::TLM_WRITE_COMMAND, kb::regs::kQueue, bytes.data(), unsigned(bytes.size()));
  ++submitted_;
}

void HostDriver::wait_drained() {
  while (!irq.read()) wait(irq.posedge_event());
  const uint32_t raised = read32(kb::regs::kIrqStatus);
  write32(kb::regs::kIrqStatus, raised);  // write 1 to clear
  if (raised & kb::regs::kIrqError) {
    const auto code = kb::regs::ErrorCode(read32(kb::regs::kErrorCode));
    std::printf("driver: the PE reports an error: %s (command %u)\n", kb::regs::to_string(code),
                read32(kb::regs::kErrorCommand));
  }
}

bool HostDriver::run_gemm() {
  constexpr int64_t n = 64;
  const uint64_t a_at = kDram, b_at = kDram + 0x10000, c_at = kDram + 0x20000;
  const std::vector<float> a = inputs(n * n, 1), b = inputs(n * n, 2);
  put(a_at, a);
  put(b_at, b);
  const kb::Tensor A = tensor("A", kb::MemSpace::kHbm, a_at, n, n);
  const kb::Tensor B = tensor("B", kb::MemSpace::kHbm, b_at, n, n);
  const kb::Tensor C = tensor("C", kb::MemSpace::kHbm, c_at, n, n);
  const kb::Tensor a_t = tensor("a", kb::MemSpace::kTcm, 0x0, n, n);
  const kb::Tensor b_t = tensor("b", kb::MemSpace::kTcm, 0x4000, n, n);
  const kb::Tensor c_t = tensor("c", kb::MemSpace::kTcm, 0x8000, n, n);

  const sc_core::sc_time start = sc_core::sc_time_stamp();
  const uint64_t first = submitted_;
  submit(kb::DmaReadCmd{a_t.handle, A.handle});
  submit(kb::DmaReadCmd{b_t.handle, B.handle});
  kb::GemmCmd g;
  g.a = a_t.handle;
  g.b = b_t.handle;
  g.out = c_t.handle;
  g.m = g.n = g.k = n;
  submit(g);
  submit(kb::DmaWriteCmd{C.handle, c_t.handle});
  wait_drained();
  const sc_core::sc_time took = sc_core::sc_time_stamp() - start;

  std::vector<double> ref(n * n, 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < n; ++k)
      for (int64_t j = 0; j < n; ++j) ref[i * n + j] += double(a[i * n + k]) * double(b[k * n + j]);
  const double err = max_abs_diff(get(c_at, n * n), ref);
  const bool ok = err < 1e-3;
  std::printf("driver gemm 64x64x64: %s, max_abs_err=%.2e, %llu descriptors, %s\n", took.to_string().c_str(), err,
              (unsigned long long)(submitted_ - first), ok ? "OK" : "MISMATCH");
  return ok;
}

bool HostDriver::run_gqa_tile() {
  constexpr int64_t g = 4, d = 64, T = 64;  // query heads of one group, head dim, KV tile
  const uint64_t q_at = kDram + 0x40000, k_at = kDram + 0x50000, v_at = kDram + 0x60000,
                 out_at = kDram + 0x70000;
  const std::vector<float> q = inputs(g * d, 3), k = inputs(T * d, 4), v = inputs(T * d, 5);
  put(q_at, q);
  put(k_at, k);
  put(v_at, v);
  using kb::MemSpace;
  const kb::Tensor Q = tensor("Q", MemSpace::kHbm, q_at, g, d), K = tensor("K", MemSpace::kHbm, k_at, T, d),
                   V = tensor("V", MemSpace::kHbm, v_at, T, d), OUT = tensor("OUT", MemSpace::kHbm, out_at, g, d);
  uint64_t tcm = 0x10000;
  auto scratch = [&](const char* name, int64_t rows, int64_t cols) {
    const kb::Tensor t = tensor(name, MemSpace::kTcm, tcm, rows, cols);
    tcm += uint64_t(rows * cols * 4 + 63) / 64 * 64;
    return t;
  };
  const kb::Tensor q_t = scratch("q", g, d), s = scratch("S", g, T), out_t = scratch("out", g, d);
  const kb::SoftmaxMergeState st{scratch("m0", g, 1), scratch("m1", g, 1), scratch("l", g, 1), scratch("O", g, d)};
  const kb::SoftmaxMergeScratch x{scratch("m_tile", g, 1), scratch("corr", g, 1), scratch("P", g, T),
                                  scratch("row_sum", g, 1)};
  const double scale = 1.0 / std::sqrt(double(d));

  auto math = [](kb::MathOp op, const kb::Tensor& out, std::vector<kb::Handle> in, kb::Extras extra = {}) {
    kb::MathCmd m;
    m.op = op;
    m.operands = std::move(in);
    m.out = out.handle;
    m.extra = std::move(extra);
    return m;
  };
  auto composite = [](std::vector<kb::OpSpec> ops, std::vector<kb::Handle> rw) {
    kb::CompositeCmd c;
    c.ops = std::move(ops);
    c.rw_handles = std::move(rw);
    return c;
  };
  const sc_core::sc_time start = sc_core::sc_time_stamp();
  const uint64_t first = submitted_;
  submit(kb::DmaReadCmd{q_t.handle, Q.handle});
  submit(math(kb::MathOp::kFill, st.m_in, {}, {{"value", -std::numeric_limits<double>::infinity()}}));
  submit(math(kb::MathOp::kFill, st.l, {}, {{"value", 0.0}}));
  submit(math(kb::MathOp::kFill, st.o, {}, {{"value", 0.0}}));
  // The same OpSpecs opt2 writes per tile (kernels/attention/gqa_decode.cpp).
  submit(composite({kb::gemm_op(kb::OpScope::kTile, s, q_t, K, {/*transpose_b=*/true}),
                    kb::math_op(kb::MathOp::kScale, kb::OpScope::kTile, s, {s}, {{"factor", scale}})},
                   {s.handle}));
  const kb::CompositeCmd merge = composite(kb::softmax_merge_ops(s, V, st, x), {st.l.handle, st.o.handle});
  std::printf("driver softmax_merge composite: %u bytes (docs/cost-model.md D2 logical_bytes %u)\n",
              unsigned(kb::desc::encode(merge, 0).size()), merge.logical_bytes());
  submit(merge);
  submit(math(kb::MathOp::kDivBcast, out_t, {st.o.handle, st.l.handle}));
  submit(kb::DmaWriteCmd{OUT.handle, out_t.handle});
  wait_drained();
  const sc_core::sc_time took = sc_core::sc_time_stamp() - start;

  std::vector<double> ref(g * d, 0.0);
  for (int64_t h = 0; h < g; ++h) {
    std::vector<double> p(T);
    double mx = -std::numeric_limits<double>::infinity(), sum = 0;
    for (int64_t j = 0; j < T; ++j) {
      double dot = 0;
      for (int64_t c = 0; c < d; ++c) dot += double(q[h * d + c]) * double(k[j * d + c]);
      p[j] = dot * scale;
      mx = std::max(mx, p[j]);
    }
    for (double& e : p) sum += (e = std::exp(e - mx));
    for (int64_t j = 0; j < T; ++j)
      for (int64_t c = 0; c < d; ++c) ref[h * d + c] += p[j] / sum * double(v[j * d + c]);
  }
  const double err = max_abs_diff(get(out_at, g * d), ref);
  const bool ok = err < 1e-4;
  std::printf("driver gqa tile g=%lld d=%lld T=%lld: %s, max_abs_err=%.2e, %llu descriptors, %s\n", (long long)g,
              (long long)d, (long long)T, took.to_string().c_str(), err, (unsigned long long)(submitted_ - first),
              ok ? "OK" : "MISMATCH");
  return ok;
}

void HostDriver::run() {
  write32(kb::regs::kIrqEnable, kb::regs::kIrqDrained | kb::regs::kIrqError);
  const bool gemm_ok = run_gemm();
  const bool gqa_ok = run_gqa_tile();
  const auto status = kb::regs::Status(read32(kb::regs::kStatus));
  const uint64_t completed = read64(kb::regs::kCompleted);
  std::printf("driver: status=%s completed=%llu of %llu submitted\n",
              status == kb::regs::Status::kIdle ? "idle" : status == kb::regs::Status::kBusy ? "busy" : "error",
              static_cast<unsigned long long>(completed), static_cast<unsigned long long>(submitted_));
  passed_ = gemm_ok && gqa_ok && status == kb::regs::Status::kIdle && completed == submitted_;
}
