// PE configuration: the validated runtime object with every default.
//
// Two layers (docs/conventions.md 4): the YAML file is read into a generic
// node tree, checked key by key against the schema below (unknown keys, wrong
// types and out-of-range values are errors naming file, line and key), then
// copied into PeConfig. Every field's default lives here and nowhere else.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace kb {

// docs/cost-model.md D1/D4/D7/D8: cycle-domain knobs of the dispatch cost model.
struct CostModelConfig {
  uint64_t fixed_per_cmd_cycles = 40;           // FIXED(CompositeCmd), D3
  uint64_t fixed_per_single_op_cmd_cycles = 8;  // FIXED(single-op cmds), D8
  double byte_cycles_recip = 0.0625;            // R, cycles per byte, D3
  uint64_t max_composite_logical_bytes = 1024;  // D7 cap
};

// The HBM behind the PE's `mem` (models/mem/hbm.h): bandwidth
// pseudo_channels x channel_gbps x efficiency, one pipe that every PE of
// the top shares (models/top/pe_top.h), and a first-byte latency.
struct HbmConfig {
  uint64_t pseudo_channels = 8;
  double channel_gbps = 32.0;
  double efficiency = 0.8;
  uint64_t latency_cycles = 100;  // first-byte latency of a read or write
};

struct DmaConfig {
  uint64_t setup_cycles = 16;  // descriptor fetch + address generation
};

// R x C systolic array: ceil(m/R) * ceil(n/C) * k + (R + C) fill/drain.
struct GemmConfig {
  uint64_t array_rows = 32;
  uint64_t array_cols = 32;
};

// MATH: pipeline latency + ceil(elements / lanes) x the op's cycles per
// lane group, + ceil(log2(row length)) for the row reductions. Which op
// pays which: its cost class in models/isa/math_ops.h.
struct MathConfig {
  uint64_t lanes = 64;
  uint64_t pipeline_latency_cycles = 4;
  uint64_t elementwise_cycles = 1;     // an op of cost class elementwise
  uint64_t transcendental_cycles = 4;  // an op of cost class transcendental
};

// Tightly coupled SRAM: FETCH (TCM -> engine) and STORE (engine -> TCM).
struct TcmConfig {
  uint64_t size_bytes = 4u << 20;
  double bytes_per_cycle = 128.0;
  uint64_t latency_cycles = 2;
};

// Hardware tile used by the scheduler's composite tile plan.
struct TileConfig {
  uint64_t m = 128;
  uint64_t n = 128;
  uint64_t k = 64;
};

// PE_CPU's descriptor writes: the payload always holds
// the descriptor's bytes; the extension carrying the decoded command is a
// fast path PE_SCHEDULER may take instead of decoding them.
struct CpuConfig {
  bool descriptor_extension = true;
};

struct SchedulerConfig {
  uint64_t queue_depth = 8;  // accepted-but-incomplete descriptors
};

// PE_IPC: the receive queue holds, per source PE, at most
// queue_depth messages that arrived and no recv has taken yet; a send to a
// full queue waits (back-pressure).
struct IpcConfig {
  uint64_t queue_depth = 4;  // per source PE
};

// The system a mesh run builds (models/top/mesh_top.h):
// h x w cubes, row-major (cube = y * w + x), each of `pes` PEs with one HBM
// slice per PE (pe.attrs.hbm is one slice), joined by UCIe links between
// neighbours. Single-PE benches ignore it (the single-PE top stays the
// default); the defaults are the origin's 2 x 4 mesh of 8-PE cubes.
struct MeshShapeConfig {
  uint64_t h = 2;
  uint64_t w = 4;
};
struct CubeConfig {
  uint64_t pes = 8;
  // Added to every access that leaves a PE's own HBM slice through the cube
  // interconnect: another PE's slice or IPC queue, or the mesh.
  uint64_t interconnect_latency_cycles = 32;
};
// One UCIe link per direction between neighbouring cubes.
struct LinkConfig {
  double gbps = 128.0;            // per direction
  uint64_t latency_cycles = 20;   // per hop, first byte
};
// At most this many PEs in a mesh: a PE's IPC window has one HEADER/DATA
// port pair per source PE (models/pe/ipc/ipc_mailbox.h kMaxIpcSources).
constexpr uint64_t kMaxMeshPes = 2048;

struct TopologyConfig {
  MeshShapeConfig mesh;
  CubeConfig cube;
  LinkConfig link;
  uint64_t cubes() const { return mesh.h * mesh.w; }
  uint64_t pes() const { return cubes() * cube.pes; }
};

struct PeConfig {
  double clock_freq_ghz = 1.0;
  // Data mode: HBM and TCM hold real values and the engines compute them, so
  // kernels can be checked against a reference. Timing is identical either
  // way; timing mode allocates nothing per tensor element.
  bool data_mode = false;
  CostModelConfig cost_model;
  CpuConfig cpu;
  SchedulerConfig scheduler;
  IpcConfig ipc;
  TileConfig tile;
  DmaConfig dma;
  HbmConfig hbm;
  GemmConfig gemm;
  MathConfig math;
  TcmConfig tcm;
  TopologyConfig topology;  // the YAML's top-level `topology:` block

  double hbm_bytes_per_cycle() const {
    return double(hbm.pseudo_channels) * hbm.channel_gbps * hbm.efficiency /
           clock_freq_ghz;
  }
  double link_bytes_per_cycle() const { return topology.link.gbps / clock_freq_ghz; }
};

// A bad configuration: message names the source (file:line or --set), the
// dotted key and what was expected.
struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One schema entry, for documentation (--help, docs/cli.md) and dumping.
struct ConfigKeyInfo {
  std::string key;        // dotted path, e.g. pe.attrs.pe_cost_model.byte_cycles_recip
  std::string type;       // with its inclusive bounds: "uint in [1, 65536]", "float in [0.001, 1000]", "bool"
  std::string default_value;
  std::string doc;
};
const std::vector<ConfigKeyInfo>& pe_config_keys();

// Loads `path` (empty: defaults only), then applies each `KEY=VALUE` of
// `sets` in order (VALUE parsed as a YAML scalar). Throws ConfigError.
// The file is untrusted input: a regular file of at most kMaxConfigFileBytes
// without NUL bytes, one YAML document, no aliases, at most 16 levels deep,
// 10000 nodes and flow collections of 16 KiB, so that parsing takes bounded
// time and memory (yaml-cpp 0.7 loops on some inputs). Values in
// messages are cut to 60 bytes.
PeConfig load_pe_config(const std::string& path,
                        const std::vector<std::string>& sets = {});

// The effective configuration as YAML, in the file's own shape; loading the
// output gives back an equal PeConfig.
std::string dump_pe_config_yaml(const PeConfig& cfg);

}  // namespace kb
