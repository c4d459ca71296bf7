// End-to-end tests of the kernbench CLI: runs the real binary (KERNBENCH_BIN)
// as a child process from the repository root and checks exit status, stdout,
// stderr and the files it writes (op-log CSV, JSON summary).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/test_files.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/config/pe_config.h"
#include "tb/benches/bench_registry.h"

namespace {

namespace fs = std::filesystem;
using kb::test::TempDir;
using kb::test::read_file;
using kb::test::write_file;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kExitOk = 0;
constexpr int kExitBadInput = 2;
const char kBench[] = "gemm-tiled-single-op";
const char kFixtures[] = "tests/data/config/";

// ---- helpers ---------------------------------------------------------------

using kb::test::CliResult;
CliResult run_cli(const std::vector<std::string>& args) { return kb::test::run_program(KERNBENCH_BIN, args); }

// Every field, empty ones included ("a,,b" -> 3 fields).
std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> fields(1);
  for (char c : line) {
    if (c == sep) fields.emplace_back();
    else fields.back() += c;
  }
  return fields;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// Sum of a launch field over all launches of a --json summary.
double sum_launches(const nlohmann::json& j, const char* field) {
  double total = 0;
  for (const auto& l : j.at("launches")) total += l.at(field).get<double>();
  return total;
}

// Exit status 2, nothing on stdout, and stderr mentions every `needles`.
void expect_bad_input(const CliResult& r, const std::vector<std::string>& needles) {
  EXPECT_EQ(r.exit_code, kExitBadInput) << r.err;
  EXPECT_EQ(r.out, "") << "bad input must not print a partial result";
  for (const std::string& n : needles) EXPECT_THAT(r.err, HasSubstr(n));
}

CliResult config_with_fixture(const std::string& name) {
  return run_cli({"config", "--config", kFixtures + name});
}

// ---- help and list ------------------------------------------------------------

TEST(Cli, TopLevelHelpListsSubcommands) {
  const CliResult r = run_cli({"--help"});
  EXPECT_EQ(r.exit_code, kExitOk);
  for (const char* sub : {"list", "run", "config"}) EXPECT_THAT(r.out, HasSubstr(sub));
  EXPECT_THAT(r.out, HasSubstr("Exit status"));
}

// Both subcommands that take --set document every key they accept.
TEST(Cli, RunAndConfigHelpListOptionsAndEveryConfigKey) {
  const CliResult run = run_cli({"run", "--help"});
  EXPECT_EQ(run.exit_code, kExitOk);
  for (const char* opt : {"--config", "--set", "--param", "--oplog", "--json"}) {
    EXPECT_THAT(run.out, HasSubstr(opt));
  }
  EXPECT_THAT(run.out, HasSubstr("pe.attrs.pe_cost_model.byte_cycles_recip"));

  const CliResult conf = run_cli({"config", "--help"});
  EXPECT_EQ(conf.exit_code, kExitOk);
  for (const char* opt : {"--config", "--set"}) EXPECT_THAT(conf.out, HasSubstr(opt));

  for (const kb::ConfigKeyInfo& k : kb::pe_config_keys()) {
    EXPECT_THAT(run.out, HasSubstr(k.key));
    EXPECT_THAT(conf.out, HasSubstr(k.key));
  }
}

// perf runs only the workloads --only names (here one small composite GEMM,
// so the test is quick) and says so when none matches.
TEST(Cli, PerfOnlyRunsTheNamedWorkload) {
  const CliResult r = run_cli({"perf", "--only", "composite GEMM", "--gemm", "256", "--repeats", "1",
                               "--ceiling-commands", "1000"});
  EXPECT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("SystemC ceiling"));
  EXPECT_THAT(r.out, HasSubstr("composite GEMM 256^3"));
  EXPECT_THAT(r.out, Not(HasSubstr("gqa-decode")));
  EXPECT_THAT(r.out, Not(HasSubstr("scaling:")));

  const CliResult none = run_cli({"perf", "--only", "no such workload"});
  EXPECT_EQ(none.exit_code, kExitBadInput);
  EXPECT_THAT(none.err, HasSubstr("no workload name contains 'no such workload'"));
}

// The mesh rows: each long-context case at the mesh
// context and twice it, each with its context-doubling line, and "of 1-PE
// opt2" is the mesh row's fraction of the ceiling over the opt2 row's (the
// printed figures agree within their rounding). 'context' selects opt2 and
// the long-context rows, not the all-reduce.
TEST(Cli, PerfMeshRowsCompareWithSinglePeOpt2) {
  const CliResult r = run_cli({"perf", "--only", "context", "--context", "1024", "--mesh-context", "2048",
                               "--repeats", "1", "--ceiling-commands", "1000"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err << r.out;
  EXPECT_THAT(r.out, Not(HasSubstr("all-reduce")));
  auto fields = [](const std::string& line) {
    std::vector<std::string> f;
    std::istringstream in(line);
    for (std::string w; in >> w;) f.push_back(w);
    return f;
  };
  double opt2 = -1;  // its fraction of the ceiling, in %
  std::istringstream lines(r.out);
  std::map<std::string, int> rows, scaling;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("gqa-decode opt2, context 1024", 0) == 0) {
      const std::vector<std::string> f = fields(line);
      opt2 = std::stod(f[f.size() - 2]);  // "25.1%" then the RSS
    }
  }
  ASSERT_GT(opt2, 0) << r.out;
  lines = std::istringstream(r.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("mesh long-ctx ", 0) == 0) {
      const std::vector<std::string> f = fields(line);
      ASSERT_EQ(f.size(), 13u) << line;  // mesh long-ctx CASE, context N + 8 figures
      ++rows[f[2] + " " + f[4]];
      const double m = std::stod(f[10]), vs = std::stod(f[11]);
      EXPECT_GE(vs, (m - 0.05) / (opt2 + 0.05) - 0.005) << line;
      EXPECT_LE(vs, (m + 0.05) / (opt2 - 0.05) + 0.005) << line;
    }
    if (line.rfind("mesh scaling ", 0) == 0) ++scaling[fields(line)[2]];
  }
  for (const char* c : {"cube_sp_pe_tp,", "cube_tp_pe_sp,", "cube_repl_pe_sp,", "cube_sp_pe_sp,"}) {
    EXPECT_EQ(rows[std::string(c) + " 2048"], 1) << c << "\n" << r.out;
    EXPECT_EQ(rows[std::string(c) + " 4096"], 1) << c << "\n" << r.out;
    EXPECT_EQ(scaling[std::string(c).substr(0, std::strlen(c) - 1) + ":"], 1) << c << "\n" << r.out;
  }
}

TEST(Cli, ListShowsBenchesWithDescriptions) {
  kb::register_builtin_benches();
  const CliResult r = run_cli({"list"});
  EXPECT_EQ(r.exit_code, kExitOk);
  const kb::Bench& gemm = kb::BenchRegistry::instance().get(kBench);  // must exist
  for (const kb::Bench& b : kb::BenchRegistry::instance().all()) {
    EXPECT_THAT(r.out, HasSubstr(b.name + "  " + b.description));
  }
  for (const kb::BenchParam& p : gemm.params) {
    EXPECT_THAT(r.out, HasSubstr("--param " + p.name + "=" + p.default_value));
  }
}

// ---- config -----------------------------------------------------------------

// The defaults are the docs/cost-model.md values.
TEST(Cli, ConfigPrintsDefaultCostModel) {
  const CliResult r = run_cli({"config"});
  EXPECT_EQ(r.exit_code, kExitOk);
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, HasSubstr("fixed_per_cmd_cycles: 40"));
  EXPECT_THAT(r.out, HasSubstr("fixed_per_single_op_cmd_cycles: 8"));
  EXPECT_THAT(r.out, HasSubstr("byte_cycles_recip: 0.0625"));
  EXPECT_THAT(r.out, HasSubstr("max_composite_logical_bytes: 1024"));
}

TEST(Cli, ConfigSetOverridesKey) {
  const CliResult r = run_cli({"config", "--set", "pe.attrs.pe_cost_model.byte_cycles_recip=0.25"});
  EXPECT_EQ(r.exit_code, kExitOk);
  EXPECT_THAT(r.out, HasSubstr("byte_cycles_recip: 0.25"));
  EXPECT_THAT(r.out, Not(HasSubstr("byte_cycles_recip: 0.0625")));
}

// The dump is valid input: feeding it back changes nothing, defaults or not.
TEST(Cli, ConfigDumpRoundTrips) {
  TempDir dir;
  for (const std::vector<std::string>& sets :
       {std::vector<std::string>{},
        std::vector<std::string>{"--set", "pe.attrs.pe_cost_model.byte_cycles_recip=0.25"}}) {
    std::vector<std::string> args = {"config"};
    args.insert(args.end(), sets.begin(), sets.end());
    const CliResult first = run_cli(args);
    ASSERT_EQ(first.exit_code, kExitOk) << first.err;
    const std::string dumped = dir.file("dump.yaml");
    write_file(dumped, first.out);
    const CliResult second = run_cli({"config", "--config", dumped});
    EXPECT_EQ(second.exit_code, kExitOk) << second.err;
    EXPECT_EQ(second.out, first.out);
  }
}

// configs/pe.yaml documents the built-in defaults; they must not drift.
TEST(Cli, ShippedConfigEqualsBuiltInDefaults) {
  const CliResult builtin = run_cli({"config"});
  const CliResult shipped = run_cli({"config", "--config", "configs/pe.yaml"});
  EXPECT_EQ(builtin.exit_code, kExitOk);
  EXPECT_EQ(shipped.exit_code, kExitOk) << shipped.err;
  EXPECT_EQ(shipped.out, builtin.out);
}

// ---- bad input: exit 2, message names file:line and the dotted key ---------------

TEST(Cli, BadConfigUnknownKey) {
  expect_bad_input(config_with_fixture("unknown_key.yaml"),
                   {"tests/data/config/unknown_key.yaml:5",
                    "pe.attrs.pe_cost_model.fixed_per_cmd_cyclez"});
}

TEST(Cli, BadConfigWrongType) {
  expect_bad_input(config_with_fixture("byte_cycles_recip_string.yaml"),
                   {"tests/data/config/byte_cycles_recip_string.yaml:4",
                    "pe.attrs.pe_cost_model.byte_cycles_recip", "fast"});
}

TEST(Cli, BadConfigNegativeCycles) {
  expect_bad_input(config_with_fixture("negative_cycles.yaml"),
                   {"tests/data/config/negative_cycles.yaml:4",
                    "pe.attrs.pe_cost_model.fixed_per_cmd_cycles", "-1"});
}

TEST(Cli, BadConfigZeroClock) {
  expect_bad_input(config_with_fixture("zero_clock.yaml"),
                   {"tests/data/config/zero_clock.yaml:3", "pe.attrs.clock_freq_ghz"});
}

// No key to name here: the parser fails before any key is read.
TEST(Cli, BadConfigMalformedYaml) {
  expect_bad_input(config_with_fixture("malformed.yaml"),
                   {"tests/data/config/malformed.yaml:5", "malformed YAML"});
}

// CLI11's ExistingFile check rejects the path before the loader sees it;
// either way the path must be named and the status must be "bad input".
TEST(Cli, BadConfigMissingFile) {
  TempDir dir;
  const std::string missing = dir.file("no_such_config.yaml");
  expect_bad_input(run_cli({"config", "--config", missing}), {missing});
  expect_bad_input(run_cli({"run", kBench, "--config", missing}), {missing});
}

TEST(Cli, BadSetUnknownKey) {
  expect_bad_input(run_cli({"config", "--set", "pe.attrs.tile.q=3"}),
                   {"--set pe.attrs.tile.q=3", "unknown key 'pe.attrs.tile.q'"});
}

TEST(Cli, BadSetWithoutEquals) {
  expect_bad_input(run_cli({"config", "--set", "pe.attrs.tile.m"}),
                   {"--set pe.attrs.tile.m", "KEY=VALUE"});
}

// A bad --set must stop `run` too, before anything is simulated.
TEST(Cli, BadSetStopsRun) {
  expect_bad_input(run_cli({"run", kBench, "--set", "pe.attrs.clock_freq_ghz=0"}),
                   {"pe.attrs.clock_freq_ghz"});
}

TEST(Cli, BadUnknownBenchListsKnownBenches) {
  expect_bad_input(run_cli({"run", "no-such-bench"}), {"no-such-bench", kBench});
}

TEST(Cli, BadParamUnknownName) {
  expect_bad_input(run_cli({"run", kBench, "--param", "zz=1"}),
                   {"zz", "tile_m"});  // names the culprit and lists the real ones
}

TEST(Cli, BadParamNotANumber) {
  expect_bad_input(run_cli({"run", kBench, "--param", "m=abc"}), {"m=abc", "integer"});
}

// ---- clear errors from the hostile-input campaign ----------------------------

// An unknown first word is named, with the subcommands (CLI11 alone said
// only "A subcommand is required").
TEST(Cli, UnknownSubcommandIsNamedWithTheSubcommands) {
  const char kList[] = "; expected one of: list, run, sweep, replay, config, goldens, perf (see kernbench --help)\n";
  const CliResult r = run_cli({"frobnicate"});
  EXPECT_EQ(r.exit_code, kExitBadInput);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "kernbench: unknown subcommand 'frobnicate'" + std::string(kList));
  const CliResult none = run_cli({});
  EXPECT_EQ(none.exit_code, kExitBadInput);
  EXPECT_EQ(none.err, "kernbench: a subcommand is required" + std::string(kList));
  // Control characters in the word are escaped: the message stays one line.
  const CliResult nl = run_cli({"run\nx"});
  EXPECT_EQ(nl.exit_code, kExitBadInput);
  EXPECT_EQ(nl.err, "kernbench: unknown subcommand 'run\\x0ax'" + std::string(kList));
}

// Bench parameter constraints are bad input (exit 2) found before any run:
// nothing printed on stdout, no --json written.
TEST(Cli, BenchParameterConstraintsAreBadInputBeforeTheRun) {
  TempDir dir;
  const std::string json = dir.file("out.json");
  const std::string max = std::to_string(std::numeric_limits<int64_t>::max() - 10);
  std::string many_sizes = "4";  // 65 sizes: one over the cap (BenchParams::kMaxListValues)
  for (int i = 2; i <= 65; ++i) many_sizes += "," + std::to_string(4 * i);
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"gqa-decode", "--param", "q_heads=3"},
       "bench 'gqa-decode' parameters q_heads=3, kv_heads=8: expected q_heads a multiple of kv_heads"},
      {{"gqa-decode", "--param", "kv_heads=5", "--param", "q_heads=12"},
       "bench 'gqa-decode' parameters q_heads=12, kv_heads=5: expected q_heads a multiple of kv_heads"},
      {{"gemm-tiled-single-op", "--param", "m=" + max, "--param", "k=1", "--param", "n=1", "--param", "tile_m=64"},
       "bench 'gemm-tiled-single-op' parameters m=" + max + ", tile_m=64: expected m + tile_m at most 2^63 - 1"},
      {{"gemm-async-vs-composite", "--param", "ks=" + max, "--param", "m=1", "--param", "n=1"},
       "bench 'gemm-async-vs-composite' parameters k=" + max + ", tile_k=64: expected k + tile_k at most 2^63 - 1"},
      {{"gemm-async-vs-composite", "--param", "ks=512,1024,512"},
       "bench 'gemm-async-vs-composite' parameter ks: '512' is listed twice; expected distinct values"},
      {{"gemm-async-vs-composite", "--param", "ks=512,1024,0512"},
       "bench 'gemm-async-vs-composite' parameter ks: 512 is listed twice; expected distinct values"},
      {{"allreduce", "--param", "sizes=64,128,64"},
       "bench 'allreduce' parameter sizes: '64' is listed twice; expected distinct values"},
      {{"allreduce", "--param", "algos=ring,lrab,ring"},
       "bench 'allreduce' parameter algos: 'ring' is listed twice; expected distinct values"},
      {{"gqa-long-ctx", "--param", "contexts=8192,16384,8192"},
       "bench 'gqa-long-ctx' parameter contexts: '8192' is listed twice; expected distinct values"},
      {{"allreduce", "--param", "sizes=" + many_sizes},
       "bench 'allreduce' parameter sizes: more than 64 values; split the list over several runs or a sweep"},
      {{"allreduce", "--set", "topology.mesh.h=1", "--set", "topology.mesh.w=1", "--set", "topology.cube.pes=1"},
       "allreduce: a collective needs at least 2 PEs; the topology has 1 (topology.mesh.h x topology.mesh.w cubes of "
       "topology.cube.pes PEs)"},
  };
  for (const auto& [args, message] : cases) {
    std::vector<std::string> a = {"run"};
    a.insert(a.end(), args.begin(), args.end());
    a.insert(a.end(), {"--json", json});
    const CliResult r = run_cli(a);
    EXPECT_EQ(r.exit_code, kExitBadInput) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "kernbench: " + message + "\n");
    EXPECT_FALSE(fs::exists(json));
  }
  // In a sweep every point is checked before the first runs: no CSV, no row.
  const std::string csv = dir.file("s.csv");
  const CliResult sweep = run_cli({"sweep", "gqa-decode", "--param", "q_heads=32,3", "--csv", csv});
  EXPECT_EQ(sweep.exit_code, kExitBadInput);
  EXPECT_EQ(sweep.out, "");
  EXPECT_EQ(sweep.err,
            "kernbench: bench 'gqa-decode' parameters q_heads=3, kv_heads=8: expected q_heads a multiple of kv_heads\n");
  EXPECT_FALSE(fs::exists(csv));
}

// A sweep grid is bounded before it is built (2000 x 2000 points died of
// std::bad_alloc at 3.3 GB).
TEST(Cli, SweepGridIsBoundedBeforeItIsBuilt) {
  TempDir dir;
  const std::string csv = dir.file("s.csv");
  auto values = [](int n) {
    std::string s;
    for (int i = 1; i <= n; ++i) s += (i > 1 ? "," : "") + std::to_string(i);
    return s;
  };
  const CliResult big = run_cli({"sweep", "softmax-merge", "--param", "tiles=" + values(2000), "--param",
                                 "heads=" + values(2000), "--csv", csv});
  EXPECT_EQ(big.exit_code, kExitBadInput);
  EXPECT_EQ(big.out, "");
  EXPECT_EQ(big.err,
            "kernbench: sweep grid tiles (2000 values) x heads (2000 values) has 4000000 points; expected at most "
            "10000\n");
  EXPECT_FALSE(fs::exists(csv));
  // One point over the limit; the limit itself is not refused for its size
  // (its first point's bad value is what fails).
  EXPECT_THAT(run_cli({"sweep", "softmax-merge", "--param", "tiles=" + values(10001)}).err,
              HasSubstr("tiles (10001 values) has 10001 points; expected at most 10000"));
  const CliResult at_limit =
      run_cli({"sweep", "softmax-merge", "--param", "tiles=" + values(100), "--param", "heads=0," + values(99)});
  EXPECT_EQ(at_limit.exit_code, kExitBadInput);
  EXPECT_THAT(at_limit.err, HasSubstr("heads=0: expected a positive integer"));
  // A product beyond 64 bits is said so, not wrapped to a small count.
  std::vector<std::string> many = {"sweep", "softmax-merge"};
  for (int i = 0; i < 65; ++i) many.insert(many.end(), {"--param", "a" + std::to_string(i) + "=1,2"});
  const CliResult wrapped = run_cli(many);
  EXPECT_EQ(wrapped.exit_code, kExitBadInput);
  EXPECT_THAT(wrapped.err, HasSubstr("has more than 2^64 points; expected at most 10000"));
  // A key given as two axes.
  expect_bad_input(run_cli({"sweep", "softmax-merge", "--param", "tiles=1", "--param", "tiles=2"}),
                   {"--param tiles=2: axis 'tiles' is given twice; expected each key once"});
  // A value twice on an axis, and an empty value at either end or between.
  expect_bad_input(run_cli({"sweep", "softmax-merge", "--param", "tiles=1,2,1"}),
                   {"--param tiles=1,2,1: '1' is listed twice; expected distinct values"});
  for (const std::string empty : {"tiles=1,", "tiles=,1", "tiles=1,,2"}) {
    expect_bad_input(run_cli({"sweep", "softmax-merge", "--param", empty}), {"--param " + empty + ": empty value"});
  }
}

// A golden folder that cannot be read is one error on stderr, before any
// run, not a "cannot open" difference per bench on stdout.
TEST(Cli, GoldensUnreadableFolderIsOneError) {
  TempDir dir;
  const std::string missing = dir.file("nope");
  const CliResult r = run_cli({"goldens", "--dir", missing});
  EXPECT_EQ(r.exit_code, kExitBadInput);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "kernbench: goldens --dir '" + missing +
                       "': cannot read the golden folder: No such file or directory\n");
  const std::string file = dir.file("file");
  write_file(file, "{}");
  const CliResult f = run_cli({"goldens", "--dir", file});
  EXPECT_EQ(f.exit_code, kExitBadInput);
  EXPECT_EQ(f.err, "kernbench: goldens --dir '" + file + "': cannot read the golden folder: Not a directory\n");
}

// ---- run ----------------------------------------------------------------------

TEST(Cli, RunPrintsReportWithoutSimulatorNoise) {
  const CliResult r = run_cli({"run", kBench});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_EQ(r.err, "");
  for (const char* field : {"latency", "dispatch", "stalled"}) {
    EXPECT_THAT(r.out, HasSubstr(field));
  }
  for (const char* c : {"pe_cpu", "pe_dma", "pe_gemm", "pe_math", "pe_tcm"}) {
    EXPECT_THAT(r.out, HasSubstr(std::string("    ") + c + " "));
  }
  // The SystemC banner and its Info: reports would corrupt piped output.
  EXPECT_THAT(r.out, Not(HasSubstr("SystemC")));
  EXPECT_THAT(r.out, Not(HasSubstr("Copyright")));
  EXPECT_THAT(r.out, Not(HasSubstr("Info:")));
}

// Column indices of the op-log CSV.
enum Col { kComponent, kKind, kCmdId, kCmdType, kOp, kTile, kStartPs, kEndPs, kBytes,
           kElements, kLogicalBytes, kExact, kCharged, kNumCols };

// The op log obeys the docs/cost-model.md dispatch model row by row and
// agrees with the run's JSON summary.
TEST(Cli, RunOpLogFollowsDispatchModel) {
  TempDir dir;
  const std::string csv = dir.file("oplog.csv"), json = dir.file("run.json");
  const CliResult r = run_cli({"run", kBench, "--oplog", csv, "--json", json});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr(csv));

  const std::vector<std::string> rows = lines(read_file(csv));
  ASSERT_GE(rows.size(), 2u) << "header and at least one record";
  ASSERT_EQ(rows[0],
            "component,kind,cmd_id,cmd_type,op,tile,start_ps,end_ps,bytes,elements,"
            "logical_bytes,dispatch_cycles_exact,dispatch_cycles_charged");

  const std::map<std::string, double> kFixed = {
      {"DmaReadCmd", 8}, {"DmaWriteCmd", 8}, {"GemmCmd", 8},     {"MathCmd", 8},
      {"CopyCmd", 8},    {"CompositeCmd", 40}};
  const double kR = 0.0625;
  std::set<std::string> dispatched, referenced;
  double sum_charged = 0;
  for (size_t i = 1; i < rows.size(); ++i) {
    SCOPED_TRACE("op log line " + std::to_string(i + 1) + ": " + rows[i]);
    const std::vector<std::string> f = split(rows[i], ',');
    ASSERT_EQ(f.size(), size_t(kNumCols));
    EXPECT_GE(std::stoull(f[kEndPs]), std::stoull(f[kStartPs]));
    referenced.insert(f[kCmdId]);
    if (f[kKind] != "DISPATCH") continue;
    EXPECT_TRUE(dispatched.insert(f[kCmdId]).second) << "second DISPATCH for one command";
    const auto fixed = kFixed.find(f[kCmdType]);
    ASSERT_NE(fixed, kFixed.end()) << "unknown command type";
    const double exact = std::stod(f[kExact]);
    const double charged = std::stod(f[kCharged]);
    EXPECT_NEAR(exact, fixed->second + std::stod(f[kLogicalBytes]) * kR, 1e-9);
    EXPECT_EQ(charged, std::ceil(exact));
    sum_charged += charged;
  }
  EXPECT_EQ(referenced, dispatched) << "every command in the log was dispatched";

  const nlohmann::json j = nlohmann::json::parse(read_file(json));
  EXPECT_EQ(double(dispatched.size()), sum_launches(j, "commands"));
  EXPECT_EQ(sum_charged, sum_launches(j, "dispatch_cycles_charged"));
}

TEST(Cli, RunIsDeterministic) {
  TempDir dir;
  const std::string csv = dir.file("oplog.csv");  // same path: stdout names it
  const CliResult a = run_cli({"run", kBench, "--oplog", csv});
  ASSERT_EQ(a.exit_code, kExitOk) << a.err;
  const std::string csv_a = read_file(csv);
  fs::remove(csv);
  const CliResult b = run_cli({"run", kBench, "--oplog", csv});
  ASSERT_EQ(b.exit_code, kExitOk) << b.err;
  EXPECT_FALSE(csv_a.empty());
  EXPECT_TRUE(csv_a == read_file(csv)) << "op logs differ";
  EXPECT_EQ(a.out, b.out);
}

TEST(Cli, RunJsonSummary) {
  TempDir dir;
  const std::string json = dir.file("run.json");
  const CliResult r = run_cli({"run", kBench, "--json", json});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(read_file(json)));
  EXPECT_EQ(j.value("bench", ""), kBench);
  ASSERT_TRUE(j.contains("latency_ns") && j["latency_ns"].is_number());
  EXPECT_GT(j["latency_ns"].get<double>(), 0);
  ASSERT_TRUE(j["components"]["pe_dma"]["busy_ns"].is_number());
  EXPECT_GT(j["components"]["pe_dma"]["busy_ns"].get<double>(), 0)
      << "a GEMM from HBM must keep the DMA busy";
}

// --set reaches the model: a higher single-op FIXED cost
// (docs/cost-model.md D8) adds exactly the difference per command to the
// exact dispatch total.
TEST(Cli, RunSetRaisesSingleOpDispatchCost) {
  TempDir dir;
  const std::string base_json = dir.file("base.json"), slow_json = dir.file("slow.json");
  const CliResult base = run_cli({"run", kBench, "--json", base_json});
  const CliResult slow =
      run_cli({"run", kBench, "--json", slow_json, "--set",
               "pe.attrs.pe_cost_model.fixed_per_single_op_cmd_cycles=40"});
  ASSERT_EQ(base.exit_code, kExitOk) << base.err;
  ASSERT_EQ(slow.exit_code, kExitOk) << slow.err;
  const nlohmann::json b = nlohmann::json::parse(read_file(base_json));
  const nlohmann::json s = nlohmann::json::parse(read_file(slow_json));
  EXPECT_GT(sum_launches(s, "dispatch_cycles_charged"), sum_launches(b, "dispatch_cycles_charged"));
  EXPECT_GT(sum_launches(s, "dispatch_ns"), sum_launches(b, "dispatch_ns"));
  // This bench issues single-op commands only, each 40 - 8 cycles dearer.
  EXPECT_NEAR(sum_launches(s, "dispatch_cycles_exact") - sum_launches(b, "dispatch_cycles_exact"),
              32.0 * sum_launches(b, "commands"), 1e-6);
}

// ---- the composite size cap (docs/cost-model.md D7) -------------------------

// A composite over the cap ends the run: the message names kernel,
// composite, size and cap; exit 1; no partial report on stdout.
TEST(Cli, CompositeOverTheCapFailsTheRun) {
  const CliResult r = run_cli({"run", "softmax-merge", "--set",
                               "pe.attrs.pe_cost_model.max_composite_logical_bytes=300"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, HasSubstr("kernel 'softmax_merge_stream'"));
  EXPECT_THAT(r.err, HasSubstr("composite 'softmax_merge' is 311 logical bytes"));
  EXPECT_THAT(r.err, HasSubstr("cap of 300"));
  // At the cap it runs.
  const CliResult ok = run_cli({"run", "softmax-merge", "--set",
                                "pe.attrs.pe_cost_model.max_composite_logical_bytes=311"});
  EXPECT_EQ(ok.exit_code, kExitOk) << ok.err;
}

}  // namespace

namespace {
// --no-summary drops the statistics block.
TEST(Cli, NoSummaryLeavesTheStatisticsOut) {
  const CliResult with = run_cli({"run", "softmax-merge"});
  const CliResult without = run_cli({"run", "softmax-merge", "--no-summary"});
  EXPECT_EQ(with.exit_code, kExitOk) << with.err;
  EXPECT_EQ(without.exit_code, kExitOk) << without.err;
  EXPECT_THAT(with.out, HasSubstr("busiest engine"));
  EXPECT_THAT(without.out, Not(HasSubstr("busiest engine")));
  EXPECT_THAT(without.out, HasSubstr("latency"));
}
}  // namespace

namespace {

// A recv that no send matches never hangs and never ends
// silently: the run fails with the deadlock report, exit status 1.
TEST(Cli, MismatchedRecvIsADeadlockWithExitStatus1) {
  const CliResult r = run_cli({"replay", "tests/data/replay/recv_without_send.stream"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("deadlock at"));
  EXPECT_THAT(r.err, HasSubstr("waits in RecvCmd #1 for a message from PE 0 (1024 bytes), none arrived"));
}

}  // namespace

namespace {

// The allreduce mesh bench: one mesh run writes the
// op log, trace, VCD and per-PE statistics; outputs over several runs are
// bad input.
TEST(Cli, AllreduceOneRunWritesPerPeStatisticsAndHierarchicalOpLog) {
  TempDir dir;
  const std::string stats = dir.file("s.json"), oplog = dir.file("o.csv"), json = dir.file("j.json");
  const CliResult r = run_cli({"run", "allreduce", "--param", "sizes=65536", "--param", "algos=lrab", "--set",
                               "topology.mesh.h=1", "--set", "topology.mesh.w=2", "--set", "topology.cube.pes=2",
                               "--stats", stats, "--oplog", oplog, "--json", json});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json s = nlohmann::json::parse(read_file(stats));
  ASSERT_EQ(s.at("pes").size(), 4u);
  uint64_t commands = 0;
  for (const auto& pe : s.at("pes")) commands += pe.at("commands").get<uint64_t>();
  EXPECT_EQ(commands, s.at("commands").get<uint64_t>());
  EXPECT_EQ(s.at("pes").at(3).at("name"), "cube1.pe1");
  EXPECT_GT(s.at("pes").at(3).at("busy_ps").at("pe_ipc").get<uint64_t>(), 0u);
  EXPECT_EQ(s.at("links").size(), 2u);
  const std::string log = read_file(oplog);
  EXPECT_THAT(log, HasSubstr("\ncube1.pe0.pe_ipc,RECV,"));
  EXPECT_THAT(log, HasSubstr("\nlink.c0-c1,LINK,"));
  const nlohmann::json j = nlohmann::json::parse(read_file(json));
  EXPECT_EQ(j.at("figures").at("lrab").at("65536").at("bytes"), 65536);

  const CliResult two = run_cli({"run", "allreduce", "--param", "sizes=4096,8192", "--stats", stats});
  EXPECT_EQ(two.exit_code, kExitBadInput);
  EXPECT_THAT(two.err, HasSubstr("need one mesh run"));
}

}  // namespace

namespace {

// Figures keyed by a swept parameter: each point's figures sit under their
// own columns, and a point without one leaves that cell empty.
TEST(Cli, SweepColumnsAreTheUnionOfEveryPointsFigures) {
  TempDir dir;
  const std::string csv = dir.file("sweep.csv");
  const CliResult r = run_cli({"sweep", "allreduce", "--param", "sizes=4096,8192", "--param", "algos=ring", "--set",
                               "topology.mesh.h=1", "--set", "topology.mesh.w=1", "--set", "topology.cube.pes=2",
                               "--csv", csv});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> rows = lines(read_file(csv));
  ASSERT_EQ(rows.size(), 3u);
  const std::vector<std::string> head = split(rows[0], ',');
  const auto column = [&](const std::string& key) {
    return size_t(std::find(head.begin(), head.end(), key) - head.begin());
  };
  const size_t small = column("ring.4096.time_us"), big = column("ring.8192.time_us");
  ASSERT_LT(small, head.size());
  ASSERT_LT(big, head.size());
  const std::vector<std::string> first = split(rows[1], ','), second = split(rows[2], ',');
  EXPECT_FALSE(first.at(small).empty());
  EXPECT_TRUE(first.at(big).empty());
  EXPECT_TRUE(second.at(small).empty());
  EXPECT_FALSE(second.at(big).empty());
}

}  // namespace
