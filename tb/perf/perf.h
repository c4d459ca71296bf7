// `kernbench perf`: simulation speed against the SystemC ceiling. Each
// workload runs in its own child process; rates are simulated commands (or
// engine stages) per wall-second of sc_start. The ceiling is a minimal TLM
// initiator/target pair doing one b_transport and one wait per command, in
// the same binary and run, measured right before each workload run, so
// ratios are comparable on a noisy machine.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace kb {

struct PerfOptions {
  int64_t context = 131072;     // gqa-decode context (opt3: 16 commands per KV tile)
  int64_t gemm = 2048;          // composite GEMM m = n = k
  uint64_t ceiling_commands = 1000000;  // about as long as one workload run
  bool scaling = true;          // also run opt3 at twice the context
  int repeats = 5;              // runs per workload, each after a ceiling run
  std::string only;             // run only workloads whose name contains this (profiling)
  // Mesh workloads, on a 2 x 4 mesh of 8-PE cubes.
  int64_t mesh_context = 524288;       // long-context decode, run at it and at twice it
  int64_t mesh_allreduce_bytes = 512 << 20;  // all-reduce message per PE (fp32): about 1 s
};

int run_perf(const PerfOptions& o, std::ostream& os);

}  // namespace kb
