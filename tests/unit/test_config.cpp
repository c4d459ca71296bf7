// PE configuration: defaults, the shipped configs/pe.yaml, overrides from a
// file and from --set, the dump round trip, and the error messages for bad
// input (fixtures in tests/data/config/, paths relative to the repo root).
#include "models/config/pe_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
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
        c.scheduler.queue_depth, c.tile.m, c.tile.n, c.tile.k, c.dma.setup_cycles,
        c.hbm.pseudo_channels, c.hbm.channel_gbps, c.hbm.efficiency,
        c.hbm.latency_cycles, c.gemm.array_rows, c.gemm.array_cols, c.math.lanes,
        c.math.pipeline_latency_cycles, c.math.elementwise_cycles,
        c.math.transcendental_cycles, c.tcm.size_bytes, c.tcm.bytes_per_cycle,
        c.tcm.latency_cycles);
  };
  return fields(a) == fields(b);
}

// gtest prints the difference of two configs as YAML.
static void PrintTo(const PeConfig& c, std::ostream* os) {
  *os << "\n" << dump_pe_config_yaml(c);
}

namespace {

using testing::HasSubstr;

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
  // ADR-0064 D4 values.
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
           "pe.attrs.tcm.size_bytes=18446744073709551615",
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
  expected.tcm = {18446744073709551615u, 0.3, 1};
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

  // Awkward floats survive too.
  PeConfig odd;
  odd.clock_freq_ghz = 1.0 / 3.0;
  odd.cost_model.byte_cycles_recip = 5e-324;  // smallest subnormal
  odd.tcm.bytes_per_cycle = 1e300;
  odd.hbm.efficiency = 0.1 + 0.2;
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
      "pe.attrs.scheduler.queue_depth",
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
  EXPECT_THAT(error_of(kData), HasSubstr("cannot open config file"));  // a directory
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
                                "expected a non-negative number, got 'fast'"));
}

TEST(PeConfigErrors, FractionWhereIntegerExpected) {
  EXPECT_THAT(error_of(kData + "queue_depth_float.yaml"),
              HasSubstr(kData + "queue_depth_float.yaml:4: key "
                                "'pe.attrs.scheduler.queue_depth': "
                                "expected a positive integer, got '1.5'"));
}

TEST(PeConfigErrors, ZeroQueueDepth) {
  EXPECT_THAT(error_of(kData + "queue_depth_zero.yaml"),
              HasSubstr(kData + "queue_depth_zero.yaml:4: key "
                                "'pe.attrs.scheduler.queue_depth': "
                                "expected a positive integer, got '0'"));
}

TEST(PeConfigErrors, SequenceWhereNumberExpected) {
  EXPECT_THAT(error_of(kData + "tile_m_sequence.yaml"),
              HasSubstr(kData + "tile_m_sequence.yaml:4: key 'pe.attrs.tile.m': "
                                "expected a positive integer, got a sequence [64, 64]"));
}

TEST(PeConfigErrors, NegativeCycles) {
  EXPECT_THAT(error_of(kData + "negative_cycles.yaml"),
              HasSubstr(kData + "negative_cycles.yaml:4: key "
                                "'pe.attrs.pe_cost_model.fixed_per_cmd_cycles': "
                                "expected a non-negative integer, got '-1'"));
}

TEST(PeConfigErrors, Uint64Overflow) {
  EXPECT_THAT(error_of(kData + "uint_overflow.yaml"),
              HasSubstr(kData + "uint_overflow.yaml:4: key 'pe.attrs.tcm.size_bytes': "
                                "expected a positive integer that fits in 64 bits"));
}

TEST(PeConfigErrors, ZeroAndNegativeClock) {
  EXPECT_THAT(error_of(kData + "zero_clock.yaml"),
              HasSubstr(kData + "zero_clock.yaml:3: key 'pe.attrs.clock_freq_ghz': "
                                "expected a positive number, got '0'"));
  EXPECT_THAT(error_of(kData + "negative_clock.yaml"),
              HasSubstr(kData + "negative_clock.yaml:3: key 'pe.attrs.clock_freq_ghz': "
                                "expected a positive number, got '-1.5'"));
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

TEST(PeConfigErrors, SetWithoutEquals) {
  EXPECT_THAT(error_of("", {"pe.attrs.tile.m"}),
              HasSubstr("--set pe.attrs.tile.m: expected KEY=VALUE"));
}

TEST(PeConfigErrors, SetWrongType) {
  EXPECT_THAT(error_of("", {"pe.attrs.pe_cost_model.byte_cycles_recip=abc"}),
              HasSubstr("--set pe.attrs.pe_cost_model.byte_cycles_recip=abc: key "
                        "'pe.attrs.pe_cost_model.byte_cycles_recip': "
                        "expected a non-negative number, got 'abc'"));
  EXPECT_THAT(error_of("", {"pe.attrs.scheduler.queue_depth=1.5"}),
              HasSubstr("expected a positive integer, got '1.5'"));
  EXPECT_THAT(error_of("", {"pe.attrs.hbm.efficiency=1.5"}),
              HasSubstr("key 'pe.attrs.hbm.efficiency': expected a number in (0, 1]"));
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
                        "'pe.attrs.clock_freq_ghz': expected a positive number"));
}

}  // namespace
}  // namespace kb
