// A consumer of the installed package: its own sc_main builds a PeTop,
// launches two tl kernels and prints their latencies.
//   spin: tl.cycles(kSpinCycles) only; it costs exactly that many PE_CPU
//         cycles (docs/cost-model.md D5), so its latency is kSpinCycles clock
//         periods of the configured clock.
//   gemm: the project's tiled GEMM (kernbench_sc::kernels), a small shape.
// Exit 0 only if both launches completed and spin's latency is the formula.
#include <cstdint>
#include <cstdio>

#include <systemc>

#include <kernbench/kernels/gemm/gemm_tiled_single_op.h>
#include <kernbench/models/top/pe_top.h>

namespace {
constexpr uint64_t kSpinCycles = 3000;
}  // namespace

int sc_main(int, char*[]) {
  kb::PeConfig cfg;
  cfg.clock_freq_ghz = 2.0;  // 500 ps a cycle: not the default, so the config reaches the model
  kb::PeTop top(cfg);
  kb::Pe& pe = top.pe();
  pe.pe_cpu.launch("spin", [](kb::Tl& tl) { tl.cycles(kSpinCycles); });
  pe.pe_cpu.launch("gemm", [](kb::Tl& tl) {
    kb::GemmShape s;
    s.m = s.n = s.k = 128;
    kb::gemm_tiled_single_op(tl, s);
  });
  sc_core::sc_start();

  const auto& results = pe.pe_cpu.results();
  if (pe.pe_cpu.failed() || results.size() != 2) {
    std::printf("consumer: %zu of 2 launches completed%s%s\n", results.size(),
                results.empty() ? "" : ": ", results.empty() ? "" : results.back().error.c_str());
    return 1;
  }
  const uint64_t expected_spin_ps = kSpinCycles * 500;
  for (const kb::LaunchResult& r : results)
    std::printf("%s latency_ps=%llu commands=%llu\n", r.kernel.c_str(),
                static_cast<unsigned long long>(r.latency_ps()),
                static_cast<unsigned long long>(r.commands));
  if (results[0].latency_ps() != expected_spin_ps) {
    std::printf("consumer: spin latency %llu ps, expected %llu ps\n",
                static_cast<unsigned long long>(results[0].latency_ps()),
                static_cast<unsigned long long>(expected_spin_ps));
    return 1;
  }
  if (results[1].commands == 0 || results[1].latency_ps() == 0) {
    std::printf("consumer: the gemm launch ran no command\n");
    return 1;
  }
  return 0;
}
