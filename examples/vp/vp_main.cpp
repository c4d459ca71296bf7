// An example virtual platform, built against the
// installed package only (find_package(kernbench_sc)):
//
//   host driver --regs--> pe0          pe1 <-- launch() at 1 us (a tl kernel)
//        |  irq <-------- pe0           |
//        +--mem--> dram <--mem-- pe0    +--mem--> dram
//
// The driver programs PE 0 through its register map with tensor and
// command descriptors (host_driver.h); PE 1 runs a tl GEMM launched by a
// platform thread while the simulation runs. Both run in data mode and are
// checked against references. Exit 0 only if everything matched.
#include <cmath>
#include <cstdio>

#include <systemc>

#include <kernbench/models/pe/pe.h>
#include <kernbench/models/tl/tl.h>

#include "host_driver.h"
#include "vp_memory.h"

namespace {

// PE 1's kernel: C = A @ B in HBM through TCM, checked on the host side.
bool run_tl_gemm(kb::Tl& tl) {
  constexpr int64_t m = 32, k = 48, n = 40;
  const kb::Tensor A = tl.hbm("A", m, k, kb::Dtype::kFp32), B = tl.hbm("B", k, n, kb::Dtype::kFp32),
                   C = tl.hbm("C", m, n, kb::Dtype::kFp32);
  tl.host_random(A, 11);
  tl.host_random(B, 12);
  const kb::Tensor a = tl.tcm("a", m, k, kb::Dtype::kFp32), b = tl.tcm("b", k, n, kb::Dtype::kFp32),
                   c = tl.tcm("c", m, n, kb::Dtype::kFp32);
  tl.load(a, A);
  tl.load(b, B);
  tl.dot(c, a, b);
  tl.store(C, c);
  const std::vector<float> av = tl.host_read(A), bv = tl.host_read(B), cv = tl.host_read(C);
  double err = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double ref = 0;
      for (int64_t x = 0; x < k; ++x) ref += double(av[i * k + x]) * double(bv[x * n + j]);
      err = std::max(err, std::fabs(ref - double(cv[i * n + j])));
    }
  tl.metric("max_abs_err", err);
  return err < 1e-3;
}

// A platform thread: launches PE 1's kernel at 1 us.
struct Launcher : sc_core::sc_module {
  kb::Pe& pe;
  bool ok = false;
  Launcher(sc_core::sc_module_name name, kb::Pe& p) : sc_module(name), pe(p) {
    SC_HAS_PROCESS(Launcher);
    SC_THREAD(run);
  }
  void run() {
    wait(1, sc_core::SC_US);
    pe.launch("tl_gemm", [this](kb::Tl& tl) { ok = run_tl_gemm(tl); });
  }
};

}  // namespace

int sc_main(int, char*[]) {
  kb::PeConfig cfg;
  cfg.data_mode = true;  // values move and are checked
  VpMemory dram("dram", sc_core::sc_time(50, sc_core::SC_NS));
  kb::Pe pe0("pe0", cfg, kb::flat_place(0, 2)), pe1("pe1", cfg, kb::flat_place(1, 2));
  HostDriver driver("driver");
  Launcher launcher("launcher", pe1);
  sc_core::sc_signal<bool> irq0("irq0");

  pe0.mem.bind(dram.in);
  pe1.mem.bind(dram.in);
  driver.mem.bind(dram.in);
  driver.regs.bind(pe0.regs);
  pe0.irq.bind(irq0);
  driver.irq.bind(irq0);

  sc_core::sc_start();

  const auto& r = pe1.pe_cpu.results();
  const bool pe1_ok = r.size() == 1 && r[0].error.empty() && launcher.ok;
  if (r.size() == 1) {
    std::printf("pe1 tl_gemm launched at %llu ps: latency %llu ps, %llu commands, %s%s\n",
                static_cast<unsigned long long>(r[0].start_ps), static_cast<unsigned long long>(r[0].latency_ps()),
                static_cast<unsigned long long>(r[0].commands), pe1_ok ? "OK" : "MISMATCH ", r[0].error.c_str());
  } else {
    std::printf("pe1: %zu launches completed, expected 1\n", r.size());
  }
  const bool ok = driver.passed() && pe1_ok;
  std::printf("vp: %s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
