// Helpers shared by the simulation tests: run a kernel in a child process
// (tb/run/runner.h) and pick records out of its op log.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "models/tl/tl.h"
#include "tb/run/runner.h"

namespace kb::test {

// Gives tensors host-initialised values, as a kernel's inputs (reading a
// tensor nothing has written is an error in both modes).
inline void init(Tl& tl, std::initializer_list<Tensor> tensors) {
  uint64_t seed = 1;
  for (const Tensor& t : tensors) tl.host_random(t, seed++);
}

// A configuration whose topology is an h x w mesh of `pes`-PE cubes (the
// defaults otherwise); `data`: data mode.
inline PeConfig mesh_config(uint64_t h, uint64_t w, uint64_t pes, bool data = false) {
  PeConfig cfg;
  cfg.topology.mesh.h = h;
  cfg.topology.mesh.w = w;
  cfg.topology.cube.pes = pes;
  cfg.data_mode = data;
  return cfg;
}

inline RunResult run_kernel(const Kernel& kernel, const PeConfig& cfg = PeConfig{},
                            const std::string& name = "test_kernel") {
  RunSpec spec;
  spec.config = cfg;
  spec.launches = {{name, kernel}};
  spec.keep_records = true;
  RunResult r = run_isolated(spec);
  EXPECT_TRUE(r.ok) << r.error;
  return r;
}

inline std::vector<OpRecord> select(const RunResult& r,
                                    const std::function<bool(const OpRecord&)>& pred) {
  std::vector<OpRecord> out;
  for (const OpRecord& rec : r.records)
    if (pred(rec)) out.push_back(rec);
  return out;
}

inline std::vector<OpRecord> of_kind(const RunResult& r, RecordKind k) {
  return select(r, [k](const OpRecord& rec) { return rec.kind == k; });
}

// The single engine-stage record of a single-op command.
inline OpRecord stage_of(const RunResult& r, uint64_t cmd_id) {
  const auto v = select(r, [cmd_id](const OpRecord& rec) {
    return rec.cmd_id == cmd_id && rec.component != Component::kPeCpu;
  });
  EXPECT_EQ(v.size(), 1u) << "command " << cmd_id;
  return v.empty() ? OpRecord{} : v.front();
}

inline uint64_t period_ps(const PeConfig& cfg) {
  return uint64_t(1000.0 / cfg.clock_freq_ghz + 0.5);
}

}  // namespace kb::test
