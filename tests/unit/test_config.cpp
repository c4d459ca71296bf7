// PE configuration: defaults, the shipped configs/pe.yaml, overrides from a
// file and from --set, the dump round trip, and the error messages for bad
// input (fixtures in tests/data/config/, paths relative to the repo root).
#include "models/config/pe_config.h"

#include "models/util/input_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <sys/resource.h>
#include <sys/wait.h>

#include <cstdio>
#include <functional>
#include <map>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <unistd.h>
#include <vector>

namespace kb {

// Field by field, written out rather than via the schema under test. In
// namespace kb so gtest finds it by ADL; static so it cannot clash.
static bool operator==(const PeConfig& a, const PeConfig& b) {
  auto fields = [](const PeConfig& c) {
    return std::tie(
        c.clock_freq_ghz, c.data_mode, c.cost_model.fixed_per_cmd_cycles,
        c.cost_model.fixed_per_single_op_cmd_cycles,
        c.cost_model.byte_cycles_recip, c.cost_model.max_composite_logical_bytes,
        c.cpu.descriptor_extension, c.scheduler.queue_depth, c.ipc.queue_depth, c.tile.m, c.tile.n, c.tile.k, c.dma.setup_cycles,
        c.hbm.pseudo_channels, c.hbm.channel_gbps, c.hbm.efficiency,
        c.hbm.latency_cycles, c.gemm.array_rows, c.gemm.array_cols, c.math.lanes,
        c.math.pipeline_latency_cycles, c.math.elementwise_cycles,
        c.math.transcendental_cycles, c.tcm.size_bytes, c.tcm.bytes_per_cycle,
        c.tcm.latency_cycles, c.topology.mesh.h, c.topology.mesh.w, c.topology.cube.pes,
        c.topology.cube.interconnect_latency_cycles, c.topology.link.gbps,
        c.topology.link.latency_cycles);
  };
  return fields(a) == fields(b);
}

// gtest prints the difference of two configs as YAML.
static void PrintTo(const PeConfig& c, std::ostream* os) {
  *os << "\n" << dump_pe_config_yaml(c);
}

namespace {

using testing::HasSubstr;
using testing::Not;

const std::string kData = "tests/data/config/";

// A YAML file that lives for one test; the pid keeps parallel runs apart.
class TempYaml {
 public:
  explicit TempYaml(const std::string& text) {
    const auto* test = testing::UnitTest::GetInstance()->current_test_info();
    path_ = testing::TempDir() + "kb_test_config_" + std::to_string(getpid()) +
            "_" + test->name() + "_" + std::to_string(counter_++) + ".yaml";
    std::ofstream(path_) << text;
  }
  ~TempYaml() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  std::string path_;
};

// The ConfigError message of loading `path` with `sets`; fails if none.
std::string error_of(const std::string& path,
                     const std::vector<std::string>& sets = {}) {
  try {
    load_pe_config(path, sets);
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a ConfigError for '" << path << "'";
  return "";
}

// The node at dotted path `key`, or an undefined node.
YAML::Node lookup(const YAML::Node& root, const std::string& key) {
  YAML::Node node = root;
  std::istringstream parts(key);
  for (std::string seg; std::getline(parts, seg, '.');) {
    if (!node.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
    const YAML::Node& parent = node;  // const operator[] never inserts
    YAML::Node child = parent[seg];
    node.reset(child);  // rebind; `node = child` would assign into the tree
  }
  return node;
}

// ---- good input -------------------------------------------------------------

TEST(PeConfig, DefaultsWhenPathEmpty) {
  const PeConfig cfg = load_pe_config("");
  EXPECT_EQ(cfg, PeConfig{});
  // docs/cost-model.md D4 values.
  EXPECT_EQ(cfg.cost_model.fixed_per_cmd_cycles, 40u);
  EXPECT_EQ(cfg.cost_model.fixed_per_single_op_cmd_cycles, 8u);
  EXPECT_EQ(cfg.cost_model.byte_cycles_recip, 0.0625);
  EXPECT_EQ(cfg.cost_model.max_composite_logical_bytes, 1024u);
}

TEST(PeConfig, EmptyFileAndNullPeMeanDefaults) {
  EXPECT_EQ(load_pe_config(kData + "empty.yaml"), PeConfig{});
  EXPECT_EQ(load_pe_config(kData + "pe_null.yaml"), PeConfig{});
}

TEST(PeConfig, ShippedPeYamlEqualsDefaults) {
  EXPECT_EQ(load_pe_config("configs/pe.yaml"), PeConfig{});
  // Every key is written out, not left to its default.
  const YAML::Node root = YAML::LoadFile("configs/pe.yaml");
  for (const ConfigKeyInfo& info : pe_config_keys()) {
    const YAML::Node node = lookup(root, info.key);
    ASSERT_TRUE(node.IsScalar()) << info.key << " missing from configs/pe.yaml";
    EXPECT_EQ(node.Scalar(), info.default_value) << info.key;
  }
}

TEST(PeConfig, EachCostModelKnobOverridesFromFile) {
  struct Case {
    const char* line;
    void (*set)(PeConfig&);
  };
  const Case cases[] = {
      {"fixed_per_cmd_cycles: 100",
       [](PeConfig& c) { c.cost_model.fixed_per_cmd_cycles = 100; }},
      {"fixed_per_cmd_cycles: 0",
       [](PeConfig& c) { c.cost_model.fixed_per_cmd_cycles = 0; }},
      {"fixed_per_single_op_cmd_cycles: 3",
       [](PeConfig& c) { c.cost_model.fixed_per_single_op_cmd_cycles = 3; }},
      {"byte_cycles_recip: 0.125",
       [](PeConfig& c) { c.cost_model.byte_cycles_recip = 0.125; }},
      {"byte_cycles_recip: 0",
       [](PeConfig& c) { c.cost_model.byte_cycles_recip = 0; }},
      {"max_composite_logical_bytes: 4096",
       [](PeConfig& c) { c.cost_model.max_composite_logical_bytes = 4096; }},
  };
  for (const Case& c : cases) {
    TempYaml file(std::string("pe:\n  attrs:\n    pe_cost_model:\n      ") +
                  c.line + "\n");
    PeConfig expected;
    c.set(expected);
    EXPECT_EQ(load_pe_config(file.path()), expected) << c.line;
  }
}

TEST(PeConfig, MissingCostModelBlockKeepsItsDefaults) {
  TempYaml file(
      "pe:\n"
      "  attrs:\n"
      "    tile: {m: 128, n: 32}\n"
      "    hbm:\n"
      "      efficiency: 0.5\n");
  PeConfig expected;
  expected.tile.m = 128;
  expected.tile.n = 32;
  expected.hbm.efficiency = 0.5;
  const PeConfig cfg = load_pe_config(file.path());
  EXPECT_EQ(cfg, expected);
  EXPECT_EQ(cfg.cost_model.fixed_per_cmd_cycles, 40u);
  EXPECT_EQ(cfg.cost_model.byte_cycles_recip, 0.0625);
}

TEST(PeConfig, SetOverridesFileInOrder) {
  TempYaml file("pe:\n  attrs:\n    scheduler:\n      queue_depth: 16\n");
  EXPECT_EQ(load_pe_config(file.path()).scheduler.queue_depth, 16u);
  const PeConfig cfg = load_pe_config(
      file.path(), {"pe.attrs.scheduler.queue_depth=32",
                    "pe.attrs.pe_cost_model.byte_cycles_recip=0.5",
                    "pe.attrs.scheduler.queue_depth=4"});
  EXPECT_EQ(cfg.scheduler.queue_depth, 4u);  // the last --set wins
  EXPECT_EQ(cfg.cost_model.byte_cycles_recip, 0.5);
}

TEST(PeConfig, DumpRoundTrips) {
  // A distinct non-default value for every key, with floats that have no
  // short binary form.
  const PeConfig cfg = load_pe_config(
      "", {"pe.attrs.clock_freq_ghz=1.1",
           "pe.attrs.data_mode=true",
           "pe.attrs.pe_cost_model.fixed_per_cmd_cycles=41",
           "pe.attrs.pe_cost_model.fixed_per_single_op_cmd_cycles=9",
           "pe.attrs.pe_cost_model.byte_cycles_recip=0.1",
           "pe.attrs.pe_cost_model.max_composite_logical_bytes=2048",
           "pe.attrs.scheduler.queue_depth=5",
           "pe.attrs.tile.m=16",
           "pe.attrs.tile.n=24",
           "pe.attrs.tile.k=40",
           "pe.attrs.dma.setup_cycles=0",
           "pe.attrs.hbm.pseudo_channels=2",
           "pe.attrs.hbm.channel_gbps=25.6",
           "pe.attrs.hbm.efficiency=0.7",
           "pe.attrs.hbm.latency_cycles=120",
           "pe.attrs.gemm.array_rows=8",
           "pe.attrs.gemm.array_cols=12",
           "pe.attrs.math.lanes=32",
           "pe.attrs.math.pipeline_latency_cycles=3",
           "pe.attrs.math.elementwise_cycles=2",
           "pe.attrs.math.transcendental_cycles=7",
           "pe.attrs.tcm.size_bytes=4294967296",
           "pe.attrs.tcm.bytes_per_cycle=0.3",
           "pe.attrs.tcm.latency_cycles=1"});
  PeConfig expected;
  expected.clock_freq_ghz = 1.1;
  expected.data_mode = true;
  expected.cost_model = {41, 9, 0.1, 2048};
  expected.scheduler.queue_depth = 5;
  expected.tile = {16, 24, 40};
  expected.dma.setup_cycles = 0;
  expected.hbm = {2, 25.6, 0.7, 120};
  expected.gemm = {8, 12};
  expected.math = {32, 3, 2, 7};
  expected.tcm = {4294967296u, 0.3, 1};
  ASSERT_EQ(cfg, expected);

  const std::string dumped = dump_pe_config_yaml(cfg);
  TempYaml file(dumped);
  EXPECT_EQ(load_pe_config(file.path()), cfg) << dumped;

  // Every key appears, with its doc as a comment.
  for (const ConfigKeyInfo& info : pe_config_keys()) {
    const std::string leaf = info.key.substr(info.key.rfind('.') + 1);
    EXPECT_THAT(dumped, HasSubstr(leaf + ": ")) << info.key;
    EXPECT_THAT(dumped, HasSubstr("# " + info.doc)) << info.key;
  }

  // Awkward floats survive too, and the bounds themselves load.
  PeConfig odd;
  odd.clock_freq_ghz = 1.0 / 3.0;
  odd.cost_model.byte_cycles_recip = 5e-324;  // smallest subnormal
  odd.tcm.bytes_per_cycle = 999999.99999999988;
  odd.hbm.efficiency = 0.1 + 0.2;
  odd.hbm.channel_gbps = 0.001;
  TempYaml odd_file(dump_pe_config_yaml(odd));
  EXPECT_EQ(load_pe_config(odd_file.path()), odd);
}

TEST(PeConfig, KeysListEveryKeyWithDefaults) {
  const std::vector<std::string> expected_keys = {
      "pe.attrs.clock_freq_ghz",
      "pe.attrs.data_mode",
      "pe.attrs.pe_cost_model.fixed_per_cmd_cycles",
      "pe.attrs.pe_cost_model.fixed_per_single_op_cmd_cycles",
      "pe.attrs.pe_cost_model.byte_cycles_recip",
      "pe.attrs.pe_cost_model.max_composite_logical_bytes",
      "pe.attrs.cpu.descriptor_extension",
      "pe.attrs.scheduler.queue_depth",
      "pe.attrs.ipc.queue_depth",
      "pe.attrs.tile.m",
      "pe.attrs.tile.n",
      "pe.attrs.tile.k",
      "pe.attrs.dma.setup_cycles",
      "pe.attrs.hbm.pseudo_channels",
      "pe.attrs.hbm.channel_gbps",
      "pe.attrs.hbm.efficiency",
      "pe.attrs.hbm.latency_cycles",
      "pe.attrs.gemm.array_rows",
      "pe.attrs.gemm.array_cols",
      "pe.attrs.math.lanes",
      "pe.attrs.math.pipeline_latency_cycles",
      "pe.attrs.math.elementwise_cycles",
      "pe.attrs.math.transcendental_cycles",
      "pe.attrs.tcm.size_bytes",
      "pe.attrs.tcm.bytes_per_cycle",
      "pe.attrs.tcm.latency_cycles",
      "topology.mesh.h",
      "topology.mesh.w",
      "topology.cube.pes",
      "topology.cube.interconnect_latency_cycles",
      "topology.link.gbps",
      "topology.link.latency_cycles",
  };
  const auto& keys = pe_config_keys();
  std::vector<std::string> names;
  for (const ConfigKeyInfo& info : keys) {
    names.push_back(info.key);
    EXPECT_FALSE(info.type.empty()) << info.key;
    EXPECT_FALSE(info.doc.empty()) << info.key;
    // The default string parses back to the default value...
    EXPECT_EQ(load_pe_config("", {info.key + "=" + info.default_value}),
              PeConfig{})
        << info.key;
  }
  EXPECT_EQ(names, expected_keys);

  // ...and is the value itself (spot checks, one per type).
  auto default_of = [&](const std::string& key) {
    for (const ConfigKeyInfo& info : keys) {
      if (info.key == key) return info.default_value;
    }
    return std::string("<missing>");
  };
  EXPECT_EQ(default_of("pe.attrs.clock_freq_ghz"), "1.0");
  EXPECT_EQ(default_of("pe.attrs.data_mode"), "false");
  EXPECT_EQ(default_of("pe.attrs.pe_cost_model.fixed_per_cmd_cycles"), "40");
  EXPECT_EQ(default_of("pe.attrs.pe_cost_model.fixed_per_single_op_cmd_cycles"), "8");
  EXPECT_EQ(default_of("pe.attrs.pe_cost_model.byte_cycles_recip"), "0.0625");
  EXPECT_EQ(default_of("pe.attrs.pe_cost_model.max_composite_logical_bytes"), "1024");
  EXPECT_EQ(default_of("pe.attrs.hbm.efficiency"), "0.8");
  EXPECT_EQ(default_of("pe.attrs.tcm.size_bytes"), "4194304");
}

// ---- bad input: each message names source, key and what was expected --------

TEST(PeConfigErrors, MissingFile) {
  EXPECT_THAT(error_of(kData + "no_such_file.yaml"),
              HasSubstr("cannot open config file '" + kData + "no_such_file.yaml'"));
  EXPECT_EQ(error_of(kData), "config file '" + kData + "': not a regular file (a directory)");
}

TEST(PeConfigErrors, MalformedYaml) {
  const std::string msg = error_of(kData + "malformed.yaml");
  EXPECT_THAT(msg, HasSubstr(kData + "malformed.yaml:5: malformed YAML"));
}

TEST(PeConfigErrors, UnknownKeyNamesPathAndValidKeys) {
  const std::string msg = error_of(kData + "unknown_key.yaml");
  EXPECT_THAT(msg, HasSubstr(kData + "unknown_key.yaml:5: unknown key "
                                     "'pe.attrs.pe_cost_model.fixed_per_cmd_cyclez'"));
  EXPECT_THAT(msg, HasSubstr("did you mean 'fixed_per_cmd_cycles'"));
  EXPECT_THAT(msg, HasSubstr("valid keys under 'pe.attrs.pe_cost_model': "
                             "fixed_per_cmd_cycles, fixed_per_single_op_cmd_cycles, "
                             "byte_cycles_recip, max_composite_logical_bytes"));
}

TEST(PeConfigErrors, UnknownKeyUnderPeAndAtTopLevel) {
  EXPECT_THAT(error_of(kData + "unknown_key_pe.yaml"),
              HasSubstr(kData + "unknown_key_pe.yaml:4: unknown key 'pe.engines'; "
                                "valid keys under 'pe': attrs"));
  EXPECT_THAT(error_of(kData + "unknown_top_level.yaml"),
              HasSubstr(kData + "unknown_top_level.yaml:3: unknown key 'pe_extra'"));
  EXPECT_THAT(error_of(kData + "unknown_top_level.yaml"),
              HasSubstr("valid keys at top level: pe"));
}

TEST(PeConfigErrors, StringWhereFloatExpected) {
  EXPECT_THAT(error_of(kData + "byte_cycles_recip_string.yaml"),
              HasSubstr(kData + "byte_cycles_recip_string.yaml:4: key "
                                "'pe.attrs.pe_cost_model.byte_cycles_recip': "
                                "expected a number in [0, 1000], got 'fast'"));
}

// A quoted or tagged scalar is what it says, a string (or the tag's
// type), not the plain number its text spells: refused, naming the tag.
TEST(PeConfigErrors, TaggedOrQuotedScalarIsNotAPlainValue) {
  EXPECT_THAT(error_of("", {"pe.attrs.tile.m=!!str 64"}),
              HasSubstr("key 'pe.attrs.tile.m': expected an integer in [1, "));
  EXPECT_THAT(error_of("", {"pe.attrs.tile.m=!!str 64"}), HasSubstr("got '64' tagged tag:yaml.org,2002:str"));
  EXPECT_THAT(error_of("", {"pe.attrs.tile.m=!custom 64"}), HasSubstr("got '64' tagged !custom"));
  EXPECT_THAT(error_of("", {"pe.attrs.clock_freq_ghz='1.0'"}), HasSubstr("got quoted string '1.0'"));
  EXPECT_EQ(load_pe_config("", {"pe.attrs.tile.m=64"}).tile.m, 64u);
}

TEST(PeConfigErrors, FractionWhereIntegerExpected) {
  EXPECT_THAT(error_of(kData + "queue_depth_float.yaml"),
              HasSubstr(kData + "queue_depth_float.yaml:4: key "
                                "'pe.attrs.scheduler.queue_depth': "
                                "expected an integer in [1, 4096], got '1.5'"));
}

TEST(PeConfigErrors, ZeroQueueDepth) {
  EXPECT_THAT(error_of(kData + "queue_depth_zero.yaml"),
              HasSubstr(kData + "queue_depth_zero.yaml:4: key "
                                "'pe.attrs.scheduler.queue_depth': "
                                "expected an integer in [1, 4096], got '0'"));
}

TEST(PeConfigErrors, SequenceWhereNumberExpected) {
  EXPECT_THAT(error_of(kData + "tile_m_sequence.yaml"),
              HasSubstr(kData + "tile_m_sequence.yaml:4: key 'pe.attrs.tile.m': "
                                "expected an integer in [1, 65536], got a sequence [64, 64]"));
}

TEST(PeConfigErrors, NegativeCycles) {
  EXPECT_THAT(error_of(kData + "negative_cycles.yaml"),
              HasSubstr(kData + "negative_cycles.yaml:4: key "
                                "'pe.attrs.pe_cost_model.fixed_per_cmd_cycles': "
                                "expected an integer in [0, 1000000], got '-1'"));
}

TEST(PeConfigErrors, Uint64Overflow) {
  EXPECT_THAT(error_of(kData + "uint_overflow.yaml"),
              HasSubstr(kData + "uint_overflow.yaml:4: key 'pe.attrs.tcm.size_bytes': "
                                "expected an integer in [1, 4294967296], "
                                "got '18446744073709551616'"));
}

TEST(PeConfigErrors, ZeroAndNegativeClock) {
  EXPECT_THAT(error_of(kData + "zero_clock.yaml"),
              HasSubstr(kData + "zero_clock.yaml:3: key 'pe.attrs.clock_freq_ghz': "
                                "expected a number in [0.001, 1000], got '0'"));
  EXPECT_THAT(error_of(kData + "negative_clock.yaml"),
              HasSubstr(kData + "negative_clock.yaml:3: key 'pe.attrs.clock_freq_ghz': "
                                "expected a number in [0.001, 1000], got '-1.5'"));
}

TEST(PeConfigErrors, NonMapBlock) {
  EXPECT_THAT(error_of(kData + "non_map_pe.yaml"),
              HasSubstr(kData + "non_map_pe.yaml:1: key 'pe': expected a map, got '3'"));
  EXPECT_THAT(error_of(kData + "non_map_block.yaml"),
              HasSubstr(kData + "non_map_block.yaml:3: key 'pe.attrs.pe_cost_model': "
                                "expected a map, got a sequence [40, 8]"));
}

TEST(PeConfigErrors, DuplicateKey) {
  EXPECT_THAT(error_of(kData + "duplicate_key.yaml"),
              HasSubstr(kData + "duplicate_key.yaml:5: duplicate key 'pe.attrs.tile.m'"));
}

// One key in two spellings, nested and dotted or two dotted prefixes: the
// later would win silently.
TEST(PeConfigErrors, DuplicateKeyInAnySpelling) {
  EXPECT_THAT(error_of(kData + "duplicate_key_nested_then_dotted.yaml"),
              HasSubstr(kData + "duplicate_key_nested_then_dotted.yaml:4: duplicate key 'topology.mesh.h' (first given at " +
                        kData + "duplicate_key_nested_then_dotted.yaml:3)"));
  EXPECT_THAT(error_of(kData + "duplicate_key_two_prefixes.yaml"),
              HasSubstr(kData + "duplicate_key_two_prefixes.yaml:4: duplicate key 'pe.attrs.tile.m' (first given at " +
                        kData + "duplicate_key_two_prefixes.yaml:1)"));
}

TEST(PeConfigErrors, ABlockInTwoSpellingsMerges) {
  const PeConfig cfg = load_pe_config(kData + "split_block.yaml");
  EXPECT_EQ(cfg.topology.mesh.h, 3u);
  EXPECT_EQ(cfg.topology.mesh.w, 2u);
}

TEST(PeConfigErrors, SetUnknownKey) {
  const std::string msg = error_of("", {"pe.attrs.tile.mm=32"});
  EXPECT_THAT(msg, HasSubstr("--set pe.attrs.tile.mm=32: unknown key 'pe.attrs.tile.mm'"));
  EXPECT_THAT(msg, HasSubstr("did you mean 'pe.attrs.tile.m'"));
  EXPECT_THAT(msg, HasSubstr("valid keys: pe.attrs.tile.m, pe.attrs.tile.n, pe.attrs.tile.k"));
  // A key without its leading blocks is pointed at the full one.
  EXPECT_THAT(error_of("", {"tile.m=32"}),
              HasSubstr("unknown key 'tile.m' (did you mean 'pe.attrs.tile.m'?)"));
  // A block is not a value.
  EXPECT_THAT(error_of("", {"pe.attrs.tile=32"}),
              HasSubstr("--set pe.attrs.tile=32: key 'pe.attrs.tile' is a block"));
}

// A long list of valid keys is cut to the first ten, saying how many more
// and where they all are; the did-you-mean suggestion stays.
TEST(PeConfigErrors, SetUnknownKeyListsAtMostTenKeys) {
  std::vector<std::string> under_attrs, all;
  for (const ConfigKeyInfo& k : pe_config_keys()) {
    all.push_back(k.key);
    if (k.key.rfind("pe.attrs.", 0) == 0) under_attrs.push_back(k.key);
  }
  ASSERT_GT(under_attrs.size(), 10u);
  auto first_ten = [](const std::vector<std::string>& keys) {
    std::string s;
    for (size_t i = 0; i < 10; ++i) s += keys[i] + ", ";
    return s;
  };
  EXPECT_EQ(error_of("", {"pe.attrs.clock_freq_ghzz=1"}),
            "--set pe.attrs.clock_freq_ghzz=1: unknown key 'pe.attrs.clock_freq_ghzz' (did you mean "
            "'pe.attrs.clock_freq_ghz'?); valid keys: " +
                first_ten(under_attrs) + "... (" + std::to_string(under_attrs.size() - 10) +
                " more; see kernbench run --help)");
  // No block matches: the list is of every key, cut the same way.
  EXPECT_EQ(error_of("", {"frobnicate=1"}),
            "--set frobnicate=1: unknown key 'frobnicate'; valid keys: " + first_ten(all) + "... (" +
                std::to_string(all.size() - 10) + " more; see kernbench run --help)");
  // A block named as a key: the same.
  EXPECT_THAT(error_of("", {"pe.attrs=1"}),
              HasSubstr("key 'pe.attrs' is a block, not a value; set one of: " + first_ten(under_attrs) + "... (" +
                        std::to_string(under_attrs.size() - 10) + " more; see kernbench run --help)"));
  // A short list is whole.
  EXPECT_THAT(error_of("", {"pe.attrs.tile.q=1"}),
              HasSubstr("valid keys: pe.attrs.tile.m, pe.attrs.tile.n, pe.attrs.tile.k"));
  EXPECT_THAT(error_of("", {"pe.attrs.tile.q=1"}), Not(HasSubstr("more;")));
}

// User text echoed in a message is one line: control characters and bytes
// that are not UTF-8 are escaped; UTF-8 text is kept.
TEST(PeConfigErrors, EchoedTextEscapesControlCharacters) {
  const std::string msg = error_of("", {"pe.attrs.clock_freq_ghz=1\n---\n2"});
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  EXPECT_THAT(msg, HasSubstr("--set pe.attrs.clock_freq_ghz=1\\n---\\n2: key 'pe.attrs.clock_freq_ghz': "));
  EXPECT_THAT(error_of("", {"pe.attrs.tile.m\t\r\x01\x7f\xff\xc3\xa9=1"}),
              HasSubstr("unknown key 'pe.attrs.tile.m\\t\\r\\x01\\x7f\\xff\xc3\xa9'"));
  // A character is never cut in half, nor is an escape counted as one byte.
  const std::string msg2 = error_of("", {"pe.attrs.tile.m=" + std::string(59, 'x') + "\xc3\xa9"});
  EXPECT_THAT(msg2, HasSubstr("got '" + std::string(59, 'x') + "... (61 bytes)'"));
  const std::string file_msg = error_of("", {"pe.attrs.tile.m=[\"a\\nb\"]"});
  EXPECT_EQ(file_msg.find('\n'), std::string::npos) << file_msg;
  EXPECT_THAT(file_msg, HasSubstr("got a sequence [a\\nb]"));
}

TEST(PeConfigErrors, SetWithoutEquals) {
  EXPECT_THAT(error_of("", {"pe.attrs.tile.m"}),
              HasSubstr("--set pe.attrs.tile.m: expected KEY=VALUE"));
}

TEST(PeConfigErrors, SetWrongType) {
  EXPECT_THAT(error_of("", {"pe.attrs.pe_cost_model.byte_cycles_recip=abc"}),
              HasSubstr("--set pe.attrs.pe_cost_model.byte_cycles_recip=abc: key "
                        "'pe.attrs.pe_cost_model.byte_cycles_recip': "
                        "expected a number in [0, 1000], got 'abc'"));
  EXPECT_THAT(error_of("", {"pe.attrs.scheduler.queue_depth=1.5"}),
              HasSubstr("expected an integer in [1, 4096], got '1.5'"));
  EXPECT_THAT(error_of("", {"pe.attrs.hbm.efficiency=1.5"}),
              HasSubstr("key 'pe.attrs.hbm.efficiency': expected a number in [0.001, 1], got '1.5'"));
  EXPECT_THAT(error_of("", {"pe.attrs.tile.m=[1, 2]"}),
              HasSubstr("got a sequence [1, 2]"));
  EXPECT_THAT(error_of("", {"pe.attrs.tile.m="}), HasSubstr("got nothing (null)"));
}

TEST(PeConfigErrors, SetErrorAfterGoodFileStillThrows) {
  // The file is fine; the --set after it is not.
  EXPECT_THAT(error_of("configs/pe.yaml", {"pe.attrs.data_mode=yes"}),
              HasSubstr("--set pe.attrs.data_mode=yes: key 'pe.attrs.data_mode': expected true or false"));
  EXPECT_THAT(error_of("configs/pe.yaml", {"pe.attrs.clock_freq_ghz=0"}),
              HasSubstr("--set pe.attrs.clock_freq_ghz=0: key "
                        "'pe.attrs.clock_freq_ghz': expected a number in [0.001, 1000], got '0'"));
}

// ---- bounds: every key has a documented lower and upper bound ----------------

TEST(PeConfigBounds, TypeTextStatesTheBounds) {
  std::map<std::string, std::string> type;
  for (const ConfigKeyInfo& info : pe_config_keys()) type[info.key] = info.type;
  EXPECT_EQ(type["pe.attrs.clock_freq_ghz"], "float in [0.001, 1000]");
  EXPECT_EQ(type["pe.attrs.data_mode"], "bool");
  EXPECT_EQ(type["pe.attrs.tile.m"], "uint in [1, 65536]");
  EXPECT_EQ(type["pe.attrs.scheduler.queue_depth"], "uint in [1, 4096]");
  EXPECT_EQ(type["pe.attrs.hbm.channel_gbps"], "float in [0.001, 1000000]");
  EXPECT_EQ(type["pe.attrs.hbm.efficiency"], "float in [0.001, 1]");
  EXPECT_EQ(type["pe.attrs.hbm.latency_cycles"], "uint in [0, 1000000]");
  EXPECT_EQ(type["pe.attrs.math.elementwise_cycles"], "uint in [1, 1000000]");
  EXPECT_EQ(type["pe.attrs.tcm.size_bytes"], "uint in [1, 4294967296]");
  // Every numeric key is bounded on both sides.
  for (const ConfigKeyInfo& info : pe_config_keys()) {
    if (info.type == "bool") continue;
    EXPECT_THAT(info.type, testing::MatchesRegex("(uint|float) in \\[[0-9.]+, [0-9.]+\\]"))
        << info.key;
  }
}

// Each bound is inclusive: the bound loads, one step beyond it is refused, in
// a file and through --set alike.
TEST(PeConfigBounds, BoundsAreInclusiveAndEnforced) {
  struct Case {
    const char* key;
    const char* lowest;
    const char* below;
    const char* highest;
    const char* above;
  };
  const Case cases[] = {
      {"pe.attrs.clock_freq_ghz", "0.001", "0.0009999", "1000", "1000.0000001"},
      {"pe.attrs.tile.m", "1", "0", "65536", "65537"},
      {"pe.attrs.scheduler.queue_depth", "1", "0", "4096", "4097"},
      {"pe.attrs.hbm.channel_gbps", "0.001", "0.000999", "1000000", "1000000.1"},
      {"pe.attrs.hbm.efficiency", "0.001", "0.000999", "1", "1.0000001"},
      {"pe.attrs.dma.setup_cycles", "0", "-1", "1000000", "1000001"},
      {"pe.attrs.pe_cost_model.byte_cycles_recip", "0", "-0.1", "1000", "1000.5"},
      {"pe.attrs.pe_cost_model.max_composite_logical_bytes", "1", "0", "4294967295",
       "4294967296"},
      {"pe.attrs.tcm.size_bytes", "1", "0", "4294967296", "4294967297"},
  };
  for (const Case& c : cases) {
    std::string type;
    for (const ConfigKeyInfo& info : pe_config_keys()) {
      if (info.key == c.key) type = info.type;
    }
    const std::string range = type.substr(type.find('['));
    const std::string what = type.rfind("uint", 0) == 0 ? "an integer in " : "a number in ";
    for (const char* ok : {c.lowest, c.highest}) {
      const std::string set = std::string(c.key) + "=" + ok;
      EXPECT_NO_THROW(load_pe_config("", {set})) << set;
    }
    for (const char* bad : {c.below, c.above}) {
      const std::string set = std::string(c.key) + "=" + bad;
      EXPECT_EQ(error_of("", {set}), "--set " + set + ": key '" + c.key + "': expected " +
                                          what + range + ", got '" + bad + "'");
      // The same value in a file.
      std::string yaml, indent;
      std::istringstream parts(c.key);
      std::vector<std::string> segs;
      for (std::string seg; std::getline(parts, seg, '.');) segs.push_back(seg);
      for (size_t i = 0; i < segs.size(); ++i) {
        yaml += indent + segs[i] + ":" + (i + 1 == segs.size() ? std::string(" ") + bad : "") + "\n";
        indent += "  ";
      }
      TempYaml file(yaml);
      EXPECT_EQ(error_of(file.path()),
                file.path() + ":" + std::to_string(segs.size()) + ": key '" + c.key +
                    "': expected " + what + range + ", got '" + bad + "'");
    }
  }
}

TEST(PeConfigBounds, HugeTileIsRejectedNotWrapped) {
  EXPECT_EQ(error_of(kData + "tile_m_max_uint64.yaml"),
            kData + "tile_m_max_uint64.yaml:4: key 'pe.attrs.tile.m': expected an integer in "
                    "[1, 65536], got '18446744073709551615'");
}

// 2^32 was truncated to 0 on its way to the statistics (a uint32_t);
// the bound keeps every depth exact.
TEST(PeConfigBounds, QueueDepthTwoToThe32IsRejected) {
  EXPECT_EQ(error_of(kData + "queue_depth_2_32.yaml"),
            kData + "queue_depth_2_32.yaml:4: key 'pe.attrs.scheduler.queue_depth': expected an "
                    "integer in [1, 4096], got '4294967296'");
}

// 1e-300 GB/s made the transfer time overflow to a *lower* latency.
TEST(PeConfigBounds, TinyBandwidthIsRejected) {
  EXPECT_EQ(error_of(kData + "channel_gbps_tiny.yaml"),
            kData + "channel_gbps_tiny.yaml:4: key 'pe.attrs.hbm.channel_gbps': expected a "
                    "number in [0.001, 1000000], got '1e-300'");
  EXPECT_EQ(error_of("", {"pe.attrs.hbm.efficiency=1e-300"}),
            "--set pe.attrs.hbm.efficiency=1e-300: key 'pe.attrs.hbm.efficiency': expected a "
            "number in [0.001, 1], got '1e-300'");
}

// 1e9 GHz made the period 0 ps.
TEST(PeConfigBounds, ClockFasterThanOnePsPeriodIsRejected) {
  EXPECT_EQ(error_of(kData + "clock_too_fast.yaml"),
            kData + "clock_too_fast.yaml:3: key 'pe.attrs.clock_freq_ghz': expected a number in "
                    "[0.001, 1000], got '1e9'");
  for (const char* v : {"inf", "nan", ".inf", "1e400"}) {
    EXPECT_THAT(error_of("", {std::string("pe.attrs.clock_freq_ghz=") + v}),
                HasSubstr("expected a number in [0.001, 1000], got '" + std::string(v) + "'"));
  }
}

TEST(PeConfigBounds, CyclesAreBounded) {
  EXPECT_EQ(error_of(kData + "latency_cycles_max_uint64.yaml"),
            kData + "latency_cycles_max_uint64.yaml:4: key 'pe.attrs.hbm.latency_cycles': "
                    "expected an integer in [0, 1000000], got '18446744073709551615'");
}

// ---- untrusted input: bounded, never a hang -----------------------------------

// Runs `fn` in a child process that is killed after `seconds` (and, without
// sanitizers, cannot map more than 1 GiB): a regression to a hang or a
// runaway allocation fails the test instead of the machine. Returns what
// `fn` returned, with its peak memory growth in KiB.
struct Bounded {
  bool finished = false;
  std::string result;
  long grown_kb = -1;
};
Bounded run_bounded(const std::function<std::string()>& fn, unsigned seconds) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    alarm(seconds);
#if !defined(__SANITIZE_ADDRESS__) && !defined(KB_UNDER_SANITIZER)
    const rlimit as{1L << 30, 1L << 30};
    setrlimit(RLIMIT_AS, &as);
#endif
    rusage before{};
    getrusage(RUSAGE_SELF, &before);
    std::string out = fn();
    rusage after{};
    getrusage(RUSAGE_SELF, &after);
    out = std::to_string(after.ru_maxrss - before.ru_maxrss) + "\n" + out;
    size_t done = 0;
    while (done < out.size()) {
      const ssize_t n = write(fds[1], out.data() + done, out.size() - done);
      if (n <= 0) break;
      done += size_t(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, size_t(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  Bounded b;
  b.finished = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  const size_t nl = text.find('\n');
  if (b.finished && nl != std::string::npos) {
    b.grown_kb = std::stol(text.substr(0, nl));
    b.result = text.substr(nl + 1);
  }
  return b;
}

// The error of loading `path` within 10 s.
std::string bounded_error_of(const std::string& path, const std::vector<std::string>& sets = {}) {
  const Bounded b = run_bounded([&] { return error_of(path, sets); }, 10);
  EXPECT_TRUE(b.finished) << path << ": no answer within 10 s (hang or runaway memory)";
  return b.result;
}

// yaml-cpp 0.7's LoadAll makes empty documents forever when a document
// starts at a ',' outside a flow collection.
TEST(PeConfigHang, OneByteComma) {
  EXPECT_EQ(bounded_error_of(kData + "hang_comma.yaml"),
            kData + "hang_comma.yaml:1: unexpected ',' outside a flow collection ([...] or {...})");
}

TEST(PeConfigHang, CommaAfterAFlowMap) {
  EXPECT_EQ(bounded_error_of(kData + "hang_trailing_comma.yaml"),
            kData + "hang_trailing_comma.yaml:1: unexpected ',' outside a flow collection "
                    "([...] or {...})");
}

TEST(PeConfigHang, CommaAfterAQuotedScalarBehindAByteOrderMark) {
  EXPECT_EQ(bounded_error_of(kData + "hang_bom_quoted_comma.yaml"),
            kData + "hang_bom_quoted_comma.yaml:1: unexpected ',' outside a flow collection "
                    "([...] or {...})");
}

TEST(PeConfigHang, CommaAfterABlockSequence) {
  EXPECT_EQ(bounded_error_of(kData + "hang_block_sequence_comma.yaml"),
            kData + "hang_block_sequence_comma.yaml:4: unexpected ',' outside a flow collection "
                    "([...] or {...})");
}

// --set values go through the same guard (YAML::Load alone ignores the
// trailing comma rather than looping, but the value is still not YAML).
TEST(PeConfigHang, SetValueWithStrayComma) {
  EXPECT_EQ(bounded_error_of("", {"pe.attrs.tile.m=[64],"}),
            "--set pe.attrs.tile.m=[64],: key 'pe.attrs.tile.m': unexpected ',' outside a flow "
            "collection ([...] or {...})");
  EXPECT_EQ(bounded_error_of("", {"pe.attrs.tile.m=,"}),
            "--set pe.attrs.tile.m=,: key 'pe.attrs.tile.m': unexpected ',' outside a flow "
            "collection ([...] or {...})");
}

TEST(PeConfigInput, SecondDocumentIsRejected) {
  EXPECT_EQ(error_of(kData + "two_documents.yaml"),
            kData + "two_documents.yaml:4: expected one YAML document, found a second");
}

// Deep nesting used to say "malformed YAML: bad file".
TEST(PeConfigInput, DeepNestingSaysSo) {
  EXPECT_EQ(error_of(kData + "deep_flow_nesting.yaml"),
            kData + "deep_flow_nesting.yaml:5: YAML nested deeper than 16 levels (a "
                    "configuration is 4 deep)");
  EXPECT_EQ(error_of(kData + "deep_block_nesting.yaml"),
            kData + "deep_block_nesting.yaml:18: YAML nested deeper than 16 levels (a "
                    "configuration is 4 deep)");
}

TEST(PeConfigInput, AliasesAndBlockScalarsAreRejected) {
  EXPECT_EQ(error_of(kData + "alias.yaml"),
            kData + "alias.yaml:5: aliases (*name) are not supported in a configuration");
  EXPECT_EQ(error_of(kData + "block_scalar.yaml"),
            kData + "block_scalar.yaml:4: block scalar ('|' or '>'): a configuration value is "
                    "a number or true/false");
}

// The guards leave a real configuration alone: every block a flow map,
// brackets closing right after a value, and more than the flow limit of
// text after them.
TEST(PeConfigInput, FlowStyleConfigWithLongCommentsLoads) {
  const std::string text =
      "pe: {attrs: {clock_freq_ghz: 1.5, tile: {m: 32, n: 16, k: 8},\n"
      "  scheduler: {queue_depth: 3}, dma: {setup_cycles: 5}, gemm: {array_rows: 4, "
      "array_cols: 2},\n"
      "  hbm: {efficiency: 0.5, latency_cycles: 7}, math: {lanes: 16}, "
      "tcm: {latency_cycles: 1}, pe_cost_model: {fixed_per_cmd_cycles: 9}}}\n" +
      [] {
        std::string pad;
        while (pad.size() < 40000) pad += "# [[[[ {{{{ ',' comment with brackets and quotes \"\n";
        return pad;
      }();
  TempYaml file(text);
  PeConfig expected;
  expected.clock_freq_ghz = 1.5;
  expected.tile = {32, 16, 8};
  expected.scheduler.queue_depth = 3;
  expected.dma.setup_cycles = 5;
  expected.gemm = {4, 2};
  expected.hbm.efficiency = 0.5;
  expected.hbm.latency_cycles = 7;
  expected.math.lanes = 16;
  expected.tcm.latency_cycles = 1;
  expected.cost_model.fixed_per_cmd_cycles = 9;
  EXPECT_EQ(load_pe_config(file.path()), expected);
  // Twenty sibling sequences are not twenty levels of nesting.
  std::string siblings = "pe: {attrs: {tile: {";
  for (int i = 0; i < 20; ++i) siblings += std::string(i ? ", " : "") + "m" + std::to_string(i) + ": [1]";
  TempYaml sibling_file(siblings + "}}}\n");
  EXPECT_EQ(error_of(sibling_file.path()),
            sibling_file.path() + ":1: unknown key 'pe.attrs.tile.m0' (did you mean 'm'?); valid "
                                  "keys under 'pe.attrs.tile': m, n, k");
}

// A long value is cut in the message, not echoed whole.
TEST(PeConfigInput, LongValueIsCutInMessages) {
  EXPECT_EQ(error_of(kData + "long_value.yaml"),
            kData + "long_value.yaml:4: key 'pe.attrs.tile.m': expected an integer in "
                    "[1, 65536], got '" + std::string(60, 'x') + "... (2000 bytes)'");
  const std::string big(100000, '7');
  const std::string msg = error_of("", {"pe.attrs.tile.m=" + big});
  EXPECT_EQ(msg, "--set pe.attrs.tile.m=" + std::string(60, '7') + "... (100000 bytes): key "
                 "'pe.attrs.tile.m': expected an integer in [1, 65536], got '" +
                 std::string(60, '7') + "... (100000 bytes)'");
  const std::string long_key(100000, 'k');
  EXPECT_EQ(error_of("", {long_key + "=1"}),
            "--set " + std::string(60, 'k') + "... (100000 bytes)=1: unknown key '" +
                std::string(60, 'k') + "... (100000 bytes)'");
  // YAML limits a plain key to 1024 characters.
  TempYaml file("pe:\n  " + std::string(1000, 'k') + ": 1\n");
  EXPECT_THAT(error_of(file.path()),
              HasSubstr(":2: unknown key 'pe." + std::string(57, 'k') + "... (1003 bytes)'"));
}

TEST(PeConfigInput, FileIsBoundedRegularText) {
  EXPECT_EQ(error_of(kData + "nul_byte.yaml"),
            kData + "nul_byte.yaml:4: NUL byte in config file (expected text)");
  TempYaml big(std::string(kMaxConfigFileBytes + 1, '#'));
  EXPECT_EQ(error_of(big.path()), "config file '" + big.path() +
                                      "': larger than the limit of 1048576 bytes");
  EXPECT_EQ(error_of("/dev/zero"), "config file '/dev/zero': not a regular file (a character "
                                   "device)");
}

// 1 MiB pathological files (the size limit) load or fail within seconds and
// small memory; unguarded, yaml-cpp 0.7 took 130-250 MB for each of the
// first three.
TEST(PeConfigInput, PathologicalMebibyteFilesStaySmall) {
  const size_t n = kMaxConfigFileBytes;
  std::string flow = "pe: [";
  while (flow.size() + 3 < n) flow += "1, ";
  flow += "]";
  std::string flow_top = "[";
  while (flow_top.size() + 3 < n) flow_top += "1,\n";
  flow_top += "]";
  std::string block;
  while (block.size() + 4 <= n) block += "- 1\n";
  const std::string scalar = "pe:\n  attrs:\n    tile:\n      m: " + std::string(n - 40, 'x');
  struct Case {
    std::string name, text, message;
  };
  const std::vector<Case> cases = {
      {"brackets", std::string(n, '['),
       ":1: YAML nested deeper than 16 levels (a configuration is 4 deep)"},
      {"brackets_on_lines", [&] {
         std::string s;
         while (s.size() + 2 <= n) s += "[\n";
         return s;
       }(),
       ":17: YAML nested deeper than 16 levels (a configuration is 4 deep)"},
      {"flow_sequence", flow, ":1: flow collection ([...] or {...}) longer than 16384 bytes"},
      {"flow_sequence_after_document_marker", "--- " + flow.substr(4),
       ":1: flow collection ([...] or {...}) longer than 16384 bytes"},
      {"flow_sequence_lines", flow_top,
       ":1: flow collection ([...] or {...}) longer than 16384 bytes"},
      {"block_sequence", block, ":10000: more than 10000 YAML nodes (a full configuration has "
                                "about 60)"},
      {"scalar", scalar, ":4: key 'pe.attrs.tile.m': expected an integer in [1, 65536], got '" +
                             std::string(60, 'x') + "... (" + std::to_string(n - 40) +
                             " bytes)'"},
  };
  for (const Case& c : cases) {
    ASSERT_LE(c.text.size(), n) << c.name;
    TempYaml file(c.text);
    const Bounded b = run_bounded([&] { return error_of(file.path()); }, 20);
    ASSERT_TRUE(b.finished) << c.name << ": no answer within 20 s";
    EXPECT_EQ(b.result, file.path() + c.message) << c.name;
#if !defined(__SANITIZE_ADDRESS__) && !defined(KB_UNDER_SANITIZER)
    EXPECT_LT(b.grown_kb, 40 * 1024) << c.name << ": peak memory grew by " << b.grown_kb << " KiB";
#endif
  }
}

// ---- the topology block -----------------------------------------------------

TEST(PeConfigTopology, BlockLoadsDumpsAndReloads) {
  const TempYaml y(
      "topology:\n"
      "  mesh: {h: 3, w: 5}\n"
      "  cube:\n"
      "    pes: 4\n"
      "    interconnect_latency_cycles: 12\n"
      "  link:\n"
      "    gbps: 64.5\n"
      "    latency_cycles: 9\n");
  const PeConfig c = load_pe_config(y.path());
  EXPECT_EQ(c.topology.mesh.h, 3u);
  EXPECT_EQ(c.topology.mesh.w, 5u);
  EXPECT_EQ(c.topology.cube.pes, 4u);
  EXPECT_EQ(c.topology.cube.interconnect_latency_cycles, 12u);
  EXPECT_EQ(c.topology.link.gbps, 64.5);
  EXPECT_EQ(c.topology.link.latency_cycles, 9u);
  EXPECT_EQ(c.topology.pes(), 60u);
  EXPECT_DOUBLE_EQ(c.link_bytes_per_cycle(), 64.5 / c.clock_freq_ghz);
  const TempYaml dumped(dump_pe_config_yaml(c));
  EXPECT_EQ(load_pe_config(dumped.path()), c);
}

TEST(PeConfigTopology, BadValuesNameFileLineAndKey) {
  const TempYaml zero("topology:\n  mesh:\n    h: 2\n    w: 0\n");
  EXPECT_THAT(error_of(zero.path()), HasSubstr(zero.path() + ":4: key 'topology.mesh.w': expected an integer in [1, 16]"));
  const TempYaml gbps("topology:\n  link:\n    gbps: -1\n");
  EXPECT_THAT(error_of(gbps.path()), HasSubstr(gbps.path() + ":3: key 'topology.link.gbps'"));
  const TempYaml typo("topology:\n  cube:\n    pe: 4\n");
  EXPECT_THAT(error_of(typo.path()), HasSubstr(typo.path() + ":3: unknown key 'topology.cube.pe'"));
}

}  // namespace
}  // namespace kb

namespace kb {
namespace {

// The one rule across keys: a mesh has at most kMaxMeshPes PEs
// (PE_IPC's ports per window), whatever each key's own range allows.
TEST(PeConfig, MeshOfMoreThanTheIpcPortsIsRefused) {
  const std::vector<std::string> at_limit = {"topology.mesh.h=16", "topology.mesh.w=16", "topology.cube.pes=8"};
  EXPECT_EQ(load_pe_config("", at_limit).topology.pes(), kMaxMeshPes);
  try {
    load_pe_config("", {"topology.mesh.h=16", "topology.mesh.w=16", "topology.cube.pes=9"});
    FAIL() << "2304 PEs accepted";
  } catch (const ConfigError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("16 x 16 x 9 = 2304 PEs; expected at most 2048"));
  }
}

}  // namespace
}  // namespace kb
