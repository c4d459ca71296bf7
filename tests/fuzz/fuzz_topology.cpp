// libFuzzer harness: the `topology:` block of the configuration loader,
// kb::load_pe_config (models/config/pe_config.h), as the CLI's --config FILE
// and --set KEY=VALUE reach it: topology.mesh.h/w, topology.cube.pes and
// interconnect_latency_cycles, topology.link.gbps/latency_cycles, in nested,
// dotted and mixed spellings, with the one rule across keys (at most
// kMaxMeshPes PEs). fuzz_config covers the loader's YAML guards and the
// pe.* keys; this harness checks what a loaded topology promises.
//
// An input is a YAML config file; its comment lines `# set KEY=VALUE` (at
// most 8) are also --set overrides, applied over the file, as
// `kernbench run --config FILE --set ...` does. Each input is loaded as the
// file alone, as the overrides alone and as both. ConfigError (and
// InputFileError) are the expected answers to bad input. After a load that
// succeeds:
// - every key lies within the bounds of its row of the key table
//   (pe_config_keys(), the bounds --help and docs/cli.md document), and the
//   mesh has 1 to kMaxMeshPes PEs;
// - the dump (kernbench config) loads back to the same configuration;
// - the loaded topology written in other spellings loads to the same
//   topology: every key dotted at the top level, blocks split between
//   dotted and nested spellings (split_block.yaml), and as --set overrides;
// - file + overrides loads exactly as the file's dump + the same overrides,
//   and each override's value is what that override alone gives (a --set
//   means the same whatever the file holds);
// - what the mesh is built from is consistent: ring_order (kernels/ccl) is
//   a permutation of the PEs stepping between neighbouring cubes,
//   lrab_root and xy_route stay in the mesh, a 64 KiB burst's link time
//   (link_cycles) fits in 64 bits, and the alpha-beta model
//   (all_reduce_model_ps) is finite and not negative.
// A finding is a broken invariant above, a crash, a sanitizer report,
// another exception, a hang (-timeout) or unbounded memory (-rss_limit_mb).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "kernels/ccl/all_reduce.h"
#include "models/config/pe_config.h"
#include "models/mesh/mesh_router.h"
#include "models/mesh/ucie_link.h"
#include "models/pe/engines/pe_dma.h"
#include "models/util/input_file.h"
#include "tb/benches/allreduce_model.h"
#include "tb/benches/ipc_cost_model.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

kb::fuzz::ScratchFile* g_input = nullptr;
kb::fuzz::ScratchFile* g_other = nullptr;

using Leaves = std::vector<std::pair<std::string, std::string>>;  // dotted key, value text

// The leaves of a dump (dump_pe_config_yaml: two spaces per level, one key
// per line, "name: value  # doc" for a leaf), as dotted keys in order.
Leaves leaves_of(const std::string& dump) {
  Leaves out;
  std::vector<std::string> path;
  std::istringstream in(dump);
  for (std::string line; std::getline(in, line);) {
    const size_t indent = line.find_first_not_of(' ');
    const size_t colon = line.find(':');
    if (indent == std::string::npos || colon == std::string::npos || indent % 2 != 0)
      kb::fuzz::finding("a dump line not in the dump's shape: '" + line + "'\n--- dump:\n" + dump);
    path.resize(indent / 2);
    const std::string name = line.substr(indent, colon - indent);
    std::string value = line.substr(colon + 1);
    value = value.substr(0, value.find('#'));
    value.erase(0, value.find_first_not_of(' '));
    value.erase(value.find_last_not_of(' ') + 1);
    if (value.empty()) {
      path.push_back(name);
      continue;
    }
    std::string key;
    for (const std::string& p : path) key += p + ".";
    out.emplace_back(key + name, value);
  }
  return out;
}

std::map<std::string, std::string> as_map(const Leaves& l) { return {l.begin(), l.end()}; }

Leaves topology_of(const Leaves& all) {
  Leaves t;
  for (const auto& kv : all)
    if (kv.first.rfind("topology.", 0) == 0) t.push_back(kv);
  return t;
}

std::string text_of(const Leaves& l) {
  std::string s;
  for (const auto& [k, v] : l) s += k + ": " + v + "\n";
  return s;
}

// Every key within its documented bounds ("uint in [1, 16]", "float in
// [0.001, 1000000]", "bool").
void check_ranges(const Leaves& leaves, const std::string& dump) {
  const auto values = as_map(leaves);
  const auto& keys = kb::pe_config_keys();
  if (values.size() != keys.size() || leaves.size() != keys.size())
    kb::fuzz::finding("the dump has " + std::to_string(leaves.size()) + " keys, the key table " +
                      std::to_string(keys.size()) + "\n--- dump:\n" + dump);
  for (const kb::ConfigKeyInfo& k : keys) {
    const auto it = values.find(k.key);
    if (it == values.end()) kb::fuzz::finding("key " + k.key + " is missing from the dump\n--- dump:\n" + dump);
    const std::string& v = it->second;
    if (k.type == "bool") {
      if (v != "true" && v != "false") kb::fuzz::finding(k.key + " = '" + v + "': not a bool");
      continue;
    }
    const size_t open = k.type.find('['), comma = k.type.find(", "), close = k.type.find(']');
    if (open == std::string::npos || comma == std::string::npos || close == std::string::npos)
      kb::fuzz::finding("key " + k.key + ": a type without bounds: '" + k.type + "'");
    const std::string lo = k.type.substr(open + 1, comma - open - 1), hi = k.type.substr(comma + 2, close - comma - 2);
    bool inside = false;
    if (k.type.rfind("uint in ", 0) == 0) {
      if (v.find_first_not_of("0123456789") != std::string::npos)
        kb::fuzz::finding(k.key + " = '" + v + "': not a whole number");
      const unsigned long long x = std::strtoull(v.c_str(), nullptr, 10);
      inside = x >= std::strtoull(lo.c_str(), nullptr, 10) && x <= std::strtoull(hi.c_str(), nullptr, 10);
    } else {
      const double x = std::strtod(v.c_str(), nullptr);
      inside = std::isfinite(x) && x >= std::strtod(lo.c_str(), nullptr) && x <= std::strtod(hi.c_str(), nullptr);
    }
    if (!inside) kb::fuzz::finding(k.key + " = " + v + " loaded, outside its documented " + k.type);
  }
}

// What the mesh is built from, for a topology that loaded.
void check_topology(const kb::PeConfig& cfg) {
  const kb::TopologyConfig& t = cfg.topology;
  if (t.mesh.h < 1 || t.mesh.w < 1 || t.cube.pes < 1 || t.pes() > kb::kMaxMeshPes)
    kb::fuzz::finding("a topology of " + std::to_string(t.mesh.h) + " x " + std::to_string(t.mesh.w) + " x " +
                      std::to_string(t.cube.pes) + " PEs loaded (1 to " + std::to_string(kb::kMaxMeshPes) + ")");
  const auto h = uint32_t(t.mesh.h), w = uint32_t(t.mesh.w), p = uint32_t(t.cube.pes), c = h * w;
  const std::vector<uint32_t> ring = kb::ring_order(h, w, p);
  if (ring.size() != t.pes()) kb::fuzz::finding("ring_order has " + std::to_string(ring.size()) + " PEs");
  std::vector<bool> seen(ring.size());
  for (size_t i = 0; i < ring.size(); ++i) {
    if (ring[i] >= ring.size() || seen[ring[i]]) kb::fuzz::finding("ring_order is not a permutation of the PEs");
    seen[ring[i]] = true;
    if (i > 0 && kb::hops_between(ring[i - 1] / p, ring[i] / p, w) > 1)
      kb::fuzz::finding("ring_order steps between cubes that are not neighbours");
  }
  const uint32_t root = kb::lrab_root(h, w);
  if (root >= c) kb::fuzz::finding("lrab_root " + std::to_string(root) + " outside the mesh");
  for (const auto& [a, b] : {std::pair<uint32_t, uint32_t>{0, c - 1}, {w - 1, c - w}, {root, 0}, {c - 1, root}}) {
    const std::vector<uint32_t> r = kb::xy_route(a, b, h, w);
    if (r.empty() || r.front() != a || r.back() != b || int(r.size()) != kb::hops_between(a, b, w) + 1)
      kb::fuzz::finding("xy_route " + std::to_string(a) + " -> " + std::to_string(b) + " is not a shortest path");
    for (size_t i = 0; i < r.size(); ++i)
      if (r[i] >= c || (i > 0 && kb::hops_between(r[i - 1], r[i], w) != 1))
        kb::fuzz::finding("xy_route leaves the mesh or jumps");
  }
  try {
    const uint64_t cycles = kb::link_cycles(kb::link_timing(cfg), kb::PeDma::kMaxBurstBytes);
    if (!(double(cycles) * 1000.0 / cfg.clock_freq_ghz < 18446744073709551615.0))
      kb::fuzz::finding("a 64 KiB burst's link time does not fit in 64-bit ps");
  } catch (const std::overflow_error& e) {
    kb::fuzz::finding(std::string("a 64 KiB burst over one link overflows: ") + e.what());
  }
  const kb::IpcCosts k(cfg);
  const double b = double(kb::PeDma::kMaxBurstBytes);
  const int far = kb::hops_between(0, c - 1, w);
  for (const double x : {k.path(b, far, true), k.header_path(far), k.send(b, far), k.recv_tcm(b)})
    if (!std::isfinite(x) || x < 0) kb::fuzz::finding("an IPC cost term is " + std::to_string(x));
  for (const auto algo : {kb::AllReduceAlgo::kLrab, kb::AllReduceAlgo::kRing}) {
    const double ps = kb::all_reduce_model_ps(algo, cfg, 4096, kb::AllReduceOptions{});
    if (!std::isfinite(ps) || ps < 0 || (t.pes() > 1) != (ps > 0))
      kb::fuzz::finding("all_reduce_model_ps of 4 KiB is " + std::to_string(ps) + " on " +
                        std::to_string(t.pes()) + " PEs");
  }
}

// A load that must succeed and give exactly `want` (the topology's leaves).
void expect_topology(const std::string& how, const std::string& path, const std::vector<std::string>& sets,
                     const Leaves& want, const std::string& text) {
  Leaves got;
  try {
    got = topology_of(leaves_of(kb::dump_pe_config_yaml(kb::load_pe_config(path, sets))));
  } catch (const std::exception& e) {
    kb::fuzz::finding("the topology " + how + " does not load: " + e.what() + "\n--- text:\n" + text);
  }
  if (got != want)
    kb::fuzz::finding("the topology " + how + " loads differently\n--- text:\n" + text + "--- expected:\n" +
                      text_of(want) + "--- got:\n" + text_of(got));
}

// The checks of a configuration that loaded.
void check_loaded(const kb::PeConfig& cfg) {
  const std::string once = kb::dump_pe_config_yaml(cfg);
  const Leaves all = leaves_of(once);
  check_ranges(all, once);
  check_topology(cfg);
  // The dump loads back to itself (docs/cli.md: kernbench config).
  g_other->write(once);
  std::string twice;
  try {
    twice = kb::dump_pe_config_yaml(kb::load_pe_config(g_other->path()));
  } catch (const std::exception& e) {
    kb::fuzz::finding(std::string("the dumped configuration does not load: ") + e.what() + "\n--- dump:\n" + once);
  }
  if (twice != once) kb::fuzz::finding("dump, load, dump differs\n--- first:\n" + once + "--- second:\n" + twice);

  // The topology in other spellings.
  const Leaves topo = topology_of(all);
  const auto v = as_map(topo);
  if (topo.size() != 6) kb::fuzz::finding("the dump has " + std::to_string(topo.size()) + " topology keys, not 6");
  const std::string dotted = text_of(topo);
  g_other->write(dotted);
  expect_topology("with every key dotted", g_other->path(), {}, topo, dotted);
  const std::string mixed = "topology.mesh:\n  h: " + v.at("topology.mesh.h") +
                            "\ntopology:\n  mesh.w: " + v.at("topology.mesh.w") +
                            "\n  cube:\n    pes: " + v.at("topology.cube.pes") +
                            "\n  cube.interconnect_latency_cycles: " + v.at("topology.cube.interconnect_latency_cycles") +
                            "\ntopology.link.gbps: " + v.at("topology.link.gbps") +
                            "\ntopology.link:\n  latency_cycles: " + v.at("topology.link.latency_cycles") + "\n";
  g_other->write(mixed);
  expect_topology("in split blocks (dotted and nested)", g_other->path(), {}, topo, mixed);
  std::vector<std::string> sets;
  for (const auto& [key, value] : topo) sets.push_back(key + "=" + value);
  expect_topology("as --set overrides", "", sets, topo, dotted);
}

// `# set KEY=VALUE` comment lines.
std::vector<std::string> set_lines(const std::string& text) {
  constexpr size_t kMaxSets = 8;
  static const std::string kSet = "# set ";
  std::vector<std::string> sets;
  std::istringstream in(text);
  for (std::string line; sets.size() < kMaxSets && std::getline(in, line);)
    if (line.rfind(kSet, 0) == 0) sets.push_back(line.substr(kSet.size()));
  return sets;
}

// True with `out` loaded; false with `error` the message of a ConfigError
// (or of the file's InputFileError), the expected answers to bad input.
bool try_load(const std::string& path, const std::vector<std::string>& sets, kb::PeConfig& out,
              std::string* error = nullptr) {
  try {
    out = kb::load_pe_config(path, sets);
    return true;
  } catch (const kb::ConfigError& e) {
    if (error) *error = e.what();
  } catch (const kb::InputFileError& e) {
    if (error) *error = e.what();
  }
  return false;
}

// The one rule across keys (load_pe_config): the file alone may break it
// and its overrides mend it.
bool is_pe_count_error(const std::string& m) {
  return m.find(": topology.mesh.h x topology.mesh.w x topology.cube.pes = ") != std::string::npos &&
         m.find(" PEs; expected at most " + std::to_string(kb::kMaxMeshPes)) != std::string::npos;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_input = new kb::fuzz::ScratchFile(".yaml");
  g_other = new kb::fuzz::ScratchFile(".yaml");
  std::atexit([] {
    delete g_input;
    delete g_other;
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  g_input->write(text);
  kb::PeConfig file_cfg, set_cfg, both_cfg;
  std::string file_error;
  const bool file_ok = try_load(g_input->path(), {}, file_cfg, &file_error);
  if (file_ok) check_loaded(file_cfg);
  const std::vector<std::string> sets = set_lines(text);
  if (sets.empty()) return 0;
  if (try_load("", sets, set_cfg)) check_loaded(set_cfg);
  const bool both_ok = try_load(g_input->path(), sets, both_cfg);
  if (both_ok && !file_ok && !is_pe_count_error(file_error))
    kb::fuzz::finding("the file fails alone (" + file_error + ") but loads with --set overrides");
  if (file_ok) {
    // The file's dump with the same overrides: the same answer.
    const std::string file_dump = kb::dump_pe_config_yaml(file_cfg);
    g_other->write(file_dump);
    kb::PeConfig again;
    const bool again_ok = try_load(g_other->path(), sets, again);
    if (both_ok != again_ok || (both_ok && kb::dump_pe_config_yaml(again) != kb::dump_pe_config_yaml(both_cfg)))
      kb::fuzz::finding("the file with --set overrides loads otherwise than its dump with them\n--- dump:\n" +
                        file_dump);
  }
  if (!both_ok) return 0;
  check_loaded(both_cfg);
  // Each override (the last of its key) means what it means alone.
  const auto both = as_map(leaves_of(kb::dump_pe_config_yaml(both_cfg)));
  std::map<std::string, std::string> last;
  for (const std::string& s : sets) last[s.substr(0, s.find('='))] = s;
  for (const auto& [key, set] : last) {
    kb::PeConfig alone;
    if (!try_load("", {set}, alone)) {
      // Only the PE count spans keys; one key over the defaults keeps it
      // within bounds (16 x 4 x 8 and 2 x 4 x 64 PEs).
      kb::fuzz::finding("--set " + set + " loads over the file but not alone");
    }
    const auto a = as_map(leaves_of(kb::dump_pe_config_yaml(alone)));
    if (!a.count(key) || !both.count(key) || a.at(key) != both.at(key))
      kb::fuzz::finding("--set " + set + " gives " + (both.count(key) ? both.at(key) : "?") + " over the file, " +
                        (a.count(key) ? a.at(key) : "?") + " alone");
  }
  return 0;
}

// libsystemc.so references sc_main; nothing here elaborates a simulation.
extern "C" int sc_main(int, char**) { return 0; }
