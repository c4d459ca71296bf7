// Sweeps beyond one machine: `kernbench sweep --emit-jobs`
// runs under GNU parallel and as a Slurm array script, and `--collect`
// rebuilds the local sweep's table and CSV byte for byte; point files are
// untrusted input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tb/cli/sweep_jobs.h"
#include "tests/test_files.h"

namespace {

namespace fs = std::filesystem;
using kb::test::CliResult;
using kb::test::read_file;
using kb::test::TempDir;
using kb::test::write_file;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr int kExitBadInput = 2;

CliResult run_cli(const std::vector<std::string>& args) { return kb::test::run_program(KERNBENCH_BIN, args); }
CliResult sh(const std::string& script) { return kb::test::run_program("/bin/sh", {"-c", script}); }

// `text` quoted for sh (the test's own quoting, not the one under test).
std::string q(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// stdout of a sweep without its last line ("sweep written to CSV").
std::string table_of(const std::string& out) {
  const size_t last = out.rfind("sweep written to ");
  return last == std::string::npos ? out : out.substr(0, last);
}

// Two axes (a bench parameter and a configuration key), six points, and a
// config file whose name needs quoting: a space and a single quote.
struct Sweep {
  TempDir dir;
  std::string config = dir.file("it's a config.yaml");
  std::vector<std::string> args;
  Sweep() {
    fs::copy_file("configs/pe.yaml", config);
    args = {"sweep", "gemm-tiled-single-op", "--config", config, "--set", "pe.attrs.pe_cost_model.fixed_per_cmd_cycles=41",
            "--param", "m=64,128,192", "--param", "pe.attrs.pe_cost_model.byte_cycles_recip=0.25,0.0625"};
  }
  std::vector<std::string> with(std::vector<std::string> extra) const {
    std::vector<std::string> a = args;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
};

// Fails (never skips) without GNU parallel; moreutils has another `parallel`.
void require_parallel() {
  ASSERT_EQ(sh("parallel --version 2>/dev/null | grep -q 'GNU parallel'").exit_code, 0)
      << "GNU parallel (Debian package `parallel`) is not installed: run scripts/setup.sh";
}

// The emitted jobs run by GNU parallel (from another working directory:
// each line is self-contained) collect to the local sweep's CSV and table.
TEST(SweepJobs, ParallelRunCollectsTheLocalSweepByteForByte) {
  ASSERT_NO_FATAL_FAILURE(require_parallel());
  Sweep s;
  const std::string local_csv = s.dir.file("local.csv"), collected_csv = s.dir.file("collected.csv");
  const std::string jobs = s.dir.file("jobs.txt"), points = jobs + ".points";
  const CliResult local = run_cli(s.with({"-j", "2", "--csv", local_csv}));
  ASSERT_EQ(local.exit_code, 0) << local.err;

  const CliResult emit = run_cli(s.with({"--emit-jobs", jobs}));
  ASSERT_EQ(emit.exit_code, 0) << emit.err;
  EXPECT_THAT(emit.out, HasSubstr("6 jobs written to " + jobs));
  EXPECT_THAT(emit.out, HasSubstr("--collect " + points));
  const std::vector<std::string> job_lines = lines(read_file(jobs));
  ASSERT_EQ(job_lines.size(), 6u);
  for (const std::string& l : job_lines) {
    EXPECT_THAT(l, StartsWith(fs::canonical(KERNBENCH_BIN).string() + " sweep "));
  }
  ASSERT_TRUE(fs::is_directory(points));
  // --emit-jobs runs nothing: the folder holds only the sweep's grid.
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(points)) names.push_back(e.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"sweep.json"});
  const kb::SweepManifest m = kb::parse_sweep_manifest(read_file(points + "/sweep.json"), "sweep.json", 10000);
  EXPECT_EQ(m.bench, "gemm-tiled-single-op");
  EXPECT_EQ(m.points(), 6u);
  ASSERT_EQ(m.axes.size(), 2u);
  EXPECT_EQ(m.axes[0].second, (std::vector<std::string>{"64", "128", "192"}));
  EXPECT_EQ(m.values_at(4), (std::vector<std::string>{"192", "0.25"}));  // first axis slowest

  const CliResult par = sh("cd / && parallel --will-cite -j 2 < " + q(jobs));
  ASSERT_EQ(par.exit_code, 0) << par.out << par.err;
  for (int i = 0; i < 6; ++i) EXPECT_TRUE(fs::exists(points + "/point-" + std::to_string(i) + ".json"));

  const CliResult collect = run_cli({"sweep", "--collect", points, "--csv", collected_csv});
  ASSERT_EQ(collect.exit_code, 0) << collect.err;
  const std::string expected = read_file(local_csv);
  EXPECT_EQ(lines(expected).size(), 7u);
  EXPECT_TRUE(read_file(collected_csv) == expected) << read_file(collected_csv) << "\nvs\n" << expected;
  EXPECT_EQ(table_of(collect.out), table_of(local.out));
  EXPECT_EQ(collect.err, local.err);
  EXPECT_THAT(collect.out, HasSubstr("sweep written to " + collected_csv));

  // The Slurm array script: its range, and task ID runs line ID + 1.
  const std::string sbatch = jobs + ".sbatch";
  const std::string script = read_file(sbatch);
  EXPECT_THAT(script, HasSubstr("\n#SBATCH --array=0-5\n"));
  bool commands = false;  // sbatch reads #SBATCH lines only before the first command
  for (const std::string& l : lines(script)) {
    if (l.rfind("#SBATCH", 0) == 0) {
      EXPECT_FALSE(commands) << l;
    }
    commands = commands || (!l.empty() && l[0] != '#');
  }
  const std::string point4 = points + "/point-4.json", saved = read_file(point4);
  fs::remove(point4);
  const CliResult task = sh("cd / && SLURM_ARRAY_TASK_ID=4 sh " + q(sbatch));
  ASSERT_EQ(task.exit_code, 0) << task.err;
  EXPECT_EQ(task.out, "point 4 of 6 written to " + point4 + "\n");
  EXPECT_EQ(read_file(point4), saved) << "a point's file does not depend on how it ran";
  const CliResult again = run_cli({"sweep", "--collect", points});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, table_of(local.out));

  const CliResult beyond = sh("SLURM_ARRAY_TASK_ID=6 sh " + q(sbatch));
  EXPECT_EQ(beyond.exit_code, 2);
  EXPECT_THAT(beyond.err, HasSubstr("has no line 7"));
  const CliResult unset = sh("unset SLURM_ARRAY_TASK_ID; sh " + q(sbatch));
  EXPECT_NE(unset.exit_code, 0);
  EXPECT_THAT(unset.err, HasSubstr("SLURM_ARRAY_TASK_ID"));
  EXPECT_THAT(unset.err, HasSubstr("sbatch"));
}

// A point whose run fails (the D7 cap) fails in the collected sweep as in
// the local one: same table, CSV, stderr and exit status 1. --jobs-dir
// puts the points where it says.
TEST(SweepJobs, AFailedPointCollectsAsTheLocalSweepReportsIt) {
  TempDir dir;
  const std::vector<std::string> args = {"sweep", "softmax-merge", "--param", "tiles=1,2", "--param",
                                         "pe.attrs.pe_cost_model.max_composite_logical_bytes=300,311"};
  const std::string local_csv = dir.file("local.csv"), collected_csv = dir.file("collected.csv");
  const std::string jobs = dir.file("jobs.txt"), points = dir.file("my points");
  std::vector<std::string> a = args;
  a.insert(a.end(), {"--csv", local_csv});
  const CliResult local = run_cli(a);
  ASSERT_EQ(local.exit_code, 1) << local.err;
  ASSERT_THAT(local.err, HasSubstr("point 1 failed"));

  a = args;
  a.insert(a.end(), {"--emit-jobs", jobs, "--jobs-dir", points});
  ASSERT_EQ(run_cli(a).exit_code, 0);
  // Each line as a shell runs it: the failed points exit 1 and still write their file.
  const CliResult ran = sh("while IFS= read -r line; do sh -c \"$line\"; echo \"status $?\"; done < " + q(jobs));
  EXPECT_EQ(ran.out, "status 1\npoint 1 of 4 written to " + points + "/point-1.json\nstatus 0\n"
                     "status 1\npoint 3 of 4 written to " + points + "/point-3.json\nstatus 0\n");
  EXPECT_THAT(ran.err, HasSubstr("kernbench: point 0 (row 1 of 4) failed: "));
  EXPECT_THAT(ran.err, HasSubstr("(written to " + points + "/point-2.json)"));
  const nlohmann::json failed = nlohmann::json::parse(read_file(points + "/point-0.json"));
  EXPECT_THAT(failed.at("error").get<std::string>(), HasSubstr("cap of 300"));

  const CliResult collect = run_cli({"sweep", "--collect", points, "--csv", collected_csv});
  EXPECT_EQ(collect.exit_code, 1);
  EXPECT_EQ(collect.err, local.err);
  EXPECT_EQ(table_of(collect.out), table_of(local.out));
  EXPECT_TRUE(read_file(collected_csv) == read_file(local_csv));
}

// A point file's error text is not ours: its control characters reach the
// terminal escaped (an ESC could drive it).
TEST(SweepJobs, ATamperedErrorReachesTheTerminalEscaped) {
  TempDir dir;
  const std::string jobs = dir.file("jobs.txt"), points = dir.file("points");
  ASSERT_EQ(run_cli({"sweep", "softmax-merge", "--param", "tiles=1,2", "--param",
                     "pe.attrs.pe_cost_model.max_composite_logical_bytes=300", "--emit-jobs", jobs, "--jobs-dir",
                     points})
                .exit_code,
            0);
  sh("while IFS= read -r line; do sh -c \"$line\"; done < " + q(jobs));
  nlohmann::json j = nlohmann::json::parse(read_file(points + "/point-0.json"));
  ASSERT_TRUE(j.contains("error"));
  j["error"] = "bad \x1b[2J\x1b]0;owned\x07 text";
  kb::test::write_file(points + "/point-0.json", j.dump());
  const CliResult collect = run_cli({"sweep", "--collect", points});
  EXPECT_EQ(collect.exit_code, 1);
  EXPECT_EQ(collect.err.find('\x1b'), std::string::npos) << collect.err;
  EXPECT_EQ(collect.err.find('\x07'), std::string::npos);
  EXPECT_THAT(collect.err, HasSubstr("failed: bad \\x1b[2J\\x1b]0;owned\\x07 text"));
}

// A mesh bench (figures keyed by the swept size, so the points' columns
// differ) collects as the local sweep too.
TEST(SweepJobs, AMeshBenchCollectsAsTheLocalSweep) {
  TempDir dir;
  const std::vector<std::string> args = {"sweep", "allreduce", "--param", "sizes=4096,8192", "--param", "algos=ring,lrab",
                                         "--set", "topology.mesh.h=1", "--set", "topology.mesh.w=2", "--set",
                                         "topology.cube.pes=2"};
  const std::string local_csv = dir.file("local.csv"), collected_csv = dir.file("collected.csv");
  const std::string jobs = dir.file("jobs.txt");
  std::vector<std::string> a = args;
  a.insert(a.end(), {"-j", "2", "--csv", local_csv});
  const CliResult local = run_cli(a);
  ASSERT_EQ(local.exit_code, 0) << local.err;
  a = args;
  a.insert(a.end(), {"--emit-jobs", jobs});
  ASSERT_EQ(run_cli(a).exit_code, 0);
  // Last line first: the order the points run in does not matter.
  ASSERT_EQ(sh("tac " + q(jobs) + " | while IFS= read -r line; do sh -c \"$line\" || exit 1; done").exit_code, 0);
  const CliResult collect = run_cli({"sweep", "--collect", jobs + ".points", "--csv", collected_csv});
  ASSERT_EQ(collect.exit_code, 0) << collect.err;
  EXPECT_EQ(table_of(collect.out), table_of(local.out));
  EXPECT_TRUE(read_file(collected_csv) == read_file(local_csv));
  EXPECT_THAT(read_file(local_csv), HasSubstr("ring.8192.time_us"));
}

// Bad point folders: exit 2, the file named, nothing on stdout, no CSV.
TEST(SweepJobs, CollectRefusesAnythingButOneWholeSweep) {
  TempDir dir;
  const std::string jobs = dir.file("jobs.txt"), points = jobs + ".points";
  const std::vector<std::string> args = {"sweep", "softmax-merge", "--param", "tiles=1,2,3"};
  std::vector<std::string> a = args;
  a.insert(a.end(), {"--emit-jobs", jobs});
  ASSERT_EQ(run_cli(a).exit_code, 0);
  ASSERT_EQ(sh("while IFS= read -r line; do sh -c \"$line\" || exit 1; done < " + q(jobs)).exit_code, 0);
  const std::string p0 = points + "/point-0.json", p1 = points + "/point-1.json", p2 = points + "/point-2.json";
  const std::string csv = dir.file("out.csv");
  ASSERT_EQ(run_cli({"sweep", "--collect", points}).exit_code, 0);

  auto expect_refused = [&](const std::string& needle) {
    const CliResult r = run_cli({"sweep", "--collect", points, "--csv", csv});
    EXPECT_EQ(r.exit_code, kExitBadInput) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_THAT(r.err, StartsWith("kernbench: sweep --collect: "));
    EXPECT_THAT(r.err, HasSubstr(needle));
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line";
    EXPECT_FALSE(fs::exists(csv));
  };
  const std::string good1 = read_file(p1);

  fs::remove(p1);
  expect_refused(points + ": 1 of 3 points missing: point-1.json");
  write_file(p1, good1);

  write_file(points + "/point-01.json", good1);
  expect_refused("point 1 again");
  fs::remove(points + "/point-01.json");

  fs::rename(p2, dir.file("keep2"));
  write_file(p2, good1);
  expect_refused(p2 + ": holds point 1; expected point 2");
  fs::rename(dir.file("keep2"), p2);

  // A point of another sweep (another value list) in the folder.
  const std::string other = dir.file("other.txt");
  ASSERT_EQ(run_cli({"sweep", "softmax-merge", "--param", "tiles=1,2,4", "--emit-jobs", other}).exit_code, 0);
  ASSERT_EQ(sh("sed -n 3p " + q(other) + " | sh").exit_code, 0);
  const std::string good2 = read_file(p2);
  fs::copy_file(other + ".points/point-2.json", p2, fs::copy_options::overwrite_existing);
  expect_refused(p2 + ": a point of another sweep than sweep.json");
  write_file(p2, good2);

  // A job line edited by hand (another value, the sweep's id and index) is
  // not a point of the grid in sweep.json.
  const std::string p1_saved = read_file(p1);
  ASSERT_EQ(sh("sed -n 2p " + q(jobs) + " | sed 's/tiles=2/tiles=7/' | sh").exit_code, 0);
  expect_refused(p1 + ": was run with tiles=7, not with point 1 of the sweep's grid (tiles=2)");
  write_file(p1, p1_saved);
  // The grid file: there, not edited, of this sweep.
  const std::string manifest = points + "/sweep.json", manifest_saved = read_file(manifest);
  fs::remove(manifest);
  expect_refused(points + ": holds no sweep.json");
  nlohmann::json m = nlohmann::json::parse(manifest_saved);
  m["axes"][0]["values"][1] = "7";
  write_file(manifest, m.dump());
  expect_refused(manifest + ": 'sweep_id' ");
  expect_refused("is not the id of its fields");
  m = nlohmann::json::parse(manifest_saved);
  m["points"] = 4;
  write_file(manifest, m.dump());
  expect_refused(manifest + ": 'points' is not the product of the axes' value counts (3)");
  write_file(manifest, manifest_saved);
  // --csv onto what collect reads is bad input, and the file is kept.
  for (const std::string& input : {p1, manifest}) {
    const CliResult onto = run_cli({"sweep", "--collect", points, "--csv", input});
    EXPECT_EQ(onto.exit_code, kExitBadInput) << onto.err;
    EXPECT_THAT(onto.err, HasSubstr("are one file: the output would overwrite the input"));
    EXPECT_EQ(onto.out, "");
  }
  EXPECT_EQ(read_file(p1), p1_saved);
  EXPECT_EQ(read_file(manifest), manifest_saved);

  for (const auto& [text, needle] : std::vector<std::pair<std::string, std::string>>{
           {"{", "not valid JSON"},
           {"", "not valid JSON"},
           {std::string(100, '[') + std::string(100, ']'), "nested deeper than a point file"},
           {"[]", "expected a JSON object"},
           {R"({"format": "something else"})", "not a kernbench sweep point"},
           {std::string(2 << 20, ' '), "2097152 bytes; a point file has at most 1048576"},
       }) {
    SCOPED_TRACE(needle);
    write_file(p1, text);
    expect_refused(p1 + ": " + needle);
  }
  // Each field checked: take a good file and break one thing.
  const nlohmann::json good = nlohmann::json::parse(good1);
  for (const auto& [edit, needle] : std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>>{
           {[](nlohmann::json& j) { j["index"] = 5; }, "'index' is 5 in a sweep of 3 points (0 to 2)"},
           {[](nlohmann::json& j) { j["index"] = -1; }, "expected 'index' a whole number"},
           {[](nlohmann::json& j) { j["points"] = 20000; }, "'points' is 20000; a sweep has 1 to 10000"},
           {[](nlohmann::json& j) { j["sweep_id"] = "x"; }, "expected 'sweep_id' 16 hex digits"},
           {[](nlohmann::json& j) { j["values"] = nlohmann::json::array(); }, "as many 'values' as 'axes'"},
           {[](nlohmann::json& j) { j["cells"] = nlohmann::json::array({nlohmann::json::array({"a", 1})}); }, "expected 'cells' an array of [key, cell] pairs"},
           {[](nlohmann::json& j) { j["error"] = "x"; }, "expected either 'cells' or 'error'"},
           {[](nlohmann::json& j) { j["extra"] = 1; }, "unknown key 'extra'"},
           // Text that would add CSV rows or columns, or reach the terminal raw.
           {[](nlohmann::json& j) { j["values"][0] = "1\n9,9,9"; }, "a value '1\\x0a9,9,9' with a control byte"},
           {[](nlohmann::json& j) { j["cells"] = nlohmann::json::array({nlohmann::json::array({"k", "a,b"})}); },
            "a cell 'a,b' that is not a CSV cell as a sweep writes it"},
           {[](nlohmann::json& j) { j["cells"] = nlohmann::json::array({nlohmann::json::array({"k", "\"ab\""})}); },
            "that is not a CSV cell"},
           {[](nlohmann::json& j) { j["cells"] = nlohmann::json::array({nlohmann::json::array({"k,x", "1"})}); },
            "a cell key 'k,x'"},
           {[](nlohmann::json& j) { j["bench"] = "no-such-bench"; }, "a point of another sweep"},
       }) {
    SCOPED_TRACE(needle);
    nlohmann::json j = good;
    edit(j);
    write_file(p1, j.dump());
    expect_refused(needle);
  }
  write_file(p1, good1);
  // A bench this kernbench does not know, in sweep.json and every point,
  // under the id of those fields.
  kb::SweepManifest unknown = kb::parse_sweep_manifest(manifest_saved, manifest, 10000);
  unknown.bench = "no-such-bench";
  write_file(manifest, kb::sweep_manifest_json(unknown).dump());
  for (const std::string& p : {p0, p1, p2}) {
    nlohmann::json j = nlohmann::json::parse(read_file(p));
    j["bench"] = "no-such-bench";
    j["sweep_id"] = unknown.id();
    write_file(p, j.dump());
  }
  expect_refused(points + ": points of unknown bench 'no-such-bench'");

  // Never blocks on a FIFO; never lists past the largest sweep.
  ASSERT_EQ(mkfifo((points + "/point-7.json").c_str(), 0600), 0);
  expect_refused(points + "/point-7.json: not a regular file");
  fs::remove(points + "/point-7.json");
  write_file(points + "/point-10000.json", "{}");
  expect_refused("point-10000.json: index beyond the largest sweep (10000 points)");
  write_file(points + "/point-99999999999999999999999.json", "{}");
  fs::remove(points + "/point-10000.json");
  expect_refused("index beyond the largest sweep");

  const std::string empty = dir.file("empty");
  fs::create_directory(empty);
  const CliResult none = run_cli({"sweep", "--collect", empty});
  EXPECT_EQ(none.exit_code, kExitBadInput);
  EXPECT_EQ(none.err, "kernbench: sweep --collect: " + empty + ": holds no point file (point-INDEX.json)\n");
  const CliResult missing = run_cli({"sweep", "--collect", dir.file("nope")});
  EXPECT_EQ(missing.exit_code, kExitBadInput);
  EXPECT_THAT(missing.err, HasSubstr("cannot read the folder: No such file or directory"));
}

// A sweep.json under the id of its own fields but with a grid --emit-jobs
// never writes: an axis twice, a value twice, an axis the bench has not.
TEST(SweepJobs, CollectRefusesAGridASweepCannotHave) {
  TempDir dir;
  const std::string points = dir.file("pts"), manifest = points + "/sweep.json";
  fs::create_directory(points);
  auto expect_refused = [&](const kb::SweepManifest& m, const std::string& needle) {
    write_file(manifest, kb::sweep_manifest_json(m).dump());
    for (uint64_t i = 0; i < m.points(); ++i) {
      nlohmann::json p = {{"format", kb::kSweepPointFormat}, {"sweep_id", m.id()}, {"bench", m.bench},
                          {"index", i}, {"points", m.points()}, {"values", m.values_at(i)}, {"cells", nlohmann::json::array()}};
      for (const auto& a : m.axes) p["axes"].push_back(a.first);
      write_file(points + "/point-" + std::to_string(i) + ".json", p.dump());
    }
    const CliResult r = run_cli({"sweep", "--collect", points});
    EXPECT_EQ(r.exit_code, kExitBadInput) << r.err;
    EXPECT_THAT(r.err, HasSubstr(needle));
    EXPECT_EQ(r.out, "");
    for (uint64_t i = 0; i < m.points(); ++i) fs::remove(points + "/point-" + std::to_string(i) + ".json");
  };
  kb::SweepManifest m;
  m.bench = "softmax-merge";
  m.axes = {{"tiles", {"1", "2"}}, {"tiles", {"3"}}};
  expect_refused(m, manifest + ": axis 'tiles' twice");
  m.axes = {{"tiles", {"1", "1"}}};
  expect_refused(m, manifest + ": a value twice on axis 'tiles'");
  m.axes = {{"no_such_param", {"1", "2"}}};
  expect_refused(m, manifest + ": axis 'no_such_param' is not a parameter of bench 'softmax-merge'");
  m.axes = {{"tiles", {"1", "2"}}};  // the same grid as it should be: merged
  write_file(manifest, kb::sweep_manifest_json(m).dump());
  for (uint64_t i = 0; i < 2; ++i) {
    nlohmann::json p = {{"format", kb::kSweepPointFormat}, {"sweep_id", m.id()}, {"bench", m.bench}, {"index", i},
                        {"points", 2}, {"axes", {"tiles"}}, {"values", m.values_at(i)}, {"cells", nlohmann::json::array()}};
    write_file(points + "/point-" + std::to_string(i) + ".json", p.dump());
  }
  const CliResult ok = run_cli({"sweep", "--collect", points});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

// --emit-jobs checks each point of a mesh bench as a run does: what a
// point would refuse is refused before a job exists.
TEST(SweepJobs, EmitJobsRefusesAMeshPointThatARunRefuses) {
  TempDir dir;
  const std::string jobs = dir.file("jobs.txt");
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"allreduce", "--param", "sizes=4096,8192", "--set", "topology.mesh.h=1", "--set", "topology.mesh.w=1",
            "--set", "topology.cube.pes=1"},
           {"allreduce", "--param", "sizes=4096,6"},
       }) {
    std::vector<std::string> a = {"sweep"};
    a.insert(a.end(), bad.begin(), bad.end());
    a.insert(a.end(), {"--emit-jobs", jobs});
    const CliResult r = run_cli(a);
    EXPECT_EQ(r.exit_code, kExitBadInput) << r.err;
    EXPECT_THAT(r.err, HasSubstr("allreduce: "));
    EXPECT_FALSE(fs::exists(jobs));
    EXPECT_FALSE(fs::exists(jobs + ".points"));
  }
}

// Options that do not go together are bad input, said so, and write nothing.
TEST(SweepJobs, OptionsThatDoNotGoTogether) {
  TempDir dir;
  const std::string jobs = dir.file("jobs.txt");
  const std::vector<std::string> sweep = {"sweep", "softmax-merge", "--param", "tiles=1,2"};
  const std::string newline_config = dir.file("a\nb.yaml");  // a legal name, not on one line
  fs::copy_file("configs/pe.yaml", newline_config);
  const std::string latin1_config = dir.file("c\xe9.yaml");  // a legal name, not UTF-8 (sweep.json is JSON)
  fs::copy_file("configs/pe.yaml", latin1_config);
  for (const auto& [extra, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--emit-jobs", jobs, "-j", "2"}, "--emit-jobs runs nothing, so -j has nothing to do"},
           {{"--emit-jobs", jobs, "--csv", dir.file("c.csv")}, "--emit-jobs writes no CSV"},
           {{"--jobs-dir", dir.file("d")}, "--jobs-dir goes with --emit-jobs"},
           {{"--point-json", dir.file("p.json")}, "--point-json, --point-index, --point-count and --sweep-id go together"},
           {{"--point-json", dir.file("p.json"), "--point-index", "0", "--point-count", "2", "--sweep-id",
             "0123456789abcdef"},
            "--point-json: expected each --param with the point's one value; got 2 points"},
           {{"--emit-jobs", jobs, "--config", newline_config}, "--config holds a line break"},
           {{"--emit-jobs", ""}, "--emit-jobs: expected a path, got ''"},
           {{"--emit-jobs", jobs, "--jobs-dir", ""}, "--jobs-dir: expected a path, got ''"},
           {{"--emit-jobs", jobs, "--jobs-dir", jobs}, "--emit-jobs '" + jobs + "' and --jobs-dir '"},
           {{"--emit-jobs", jobs, "--jobs-dir", jobs + ".sbatch"}, "are one file: two outputs would overwrite"},
           {{"--emit-jobs", dir.file("d/point-0.json"), "--jobs-dir", dir.file("d")}, "under a name the points write"},
           {{"--emit-jobs", jobs, "--config", latin1_config}, "--config"},
       }) {
    std::vector<std::string> a = sweep;
    a.insert(a.end(), extra.begin(), extra.end());
    const CliResult r = run_cli(a);
    EXPECT_EQ(r.exit_code, kExitBadInput) << message;
    EXPECT_EQ(r.out, "");
    EXPECT_THAT(r.err, HasSubstr(message));
    EXPECT_FALSE(fs::exists(jobs));
    EXPECT_FALSE(fs::exists(jobs + ".sbatch"));
  }
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"softmax-merge"}, {"--param", "tiles=1"}, {"--set", "pe.attrs.clock_freq_ghz=1"},
        {"--data"}, {"-j", "2"}, {"--timeout", "5"}, {"--emit-jobs", jobs}}) {
    std::vector<std::string> a = {"sweep", "--collect", dir.file("")};
    a.insert(a.end(), extra.begin(), extra.end());
    const CliResult r = run_cli(a);
    EXPECT_EQ(r.exit_code, kExitBadInput) << extra[0];
    EXPECT_THAT(r.err, HasSubstr("sweep --collect takes only --csv"));
  }
  for (const std::string& device : {std::string("/dev/null"), dir.file("")}) {
    std::vector<std::string> a = sweep;
    a.insert(a.end(), {"--emit-jobs", device});
    const CliResult r = run_cli(a);
    EXPECT_EQ(r.exit_code, kExitBadInput);
    EXPECT_THAT(r.err, HasSubstr("': expected a file (its lines are read back"));
  }
  EXPECT_FALSE(fs::exists("/dev/null.sbatch"));
  const CliResult empty = run_cli({"sweep", "--collect", ""});
  EXPECT_EQ(empty.exit_code, kExitBadInput);
  EXPECT_THAT(empty.err, HasSubstr("--collect: expected a path, got ''"));
  const CliResult no_name = run_cli({"sweep", "--param", "tiles=1"});
  EXPECT_EQ(no_name.exit_code, kExitBadInput);
  EXPECT_THAT(no_name.err, HasSubstr("sweep needs a bench name"));
  const CliResult bad_id = run_cli({"sweep", "softmax-merge", "--param", "tiles=1", "--point-json", dir.file("p.json"),
                                    "--point-index", "0", "--point-count", "1", "--sweep-id", "nothex"});
  EXPECT_EQ(bad_id.exit_code, kExitBadInput);
  EXPECT_THAT(bad_id.err, HasSubstr("--sweep-id 'nothex': expected 16 hex digits"));
  const CliResult bad_index = run_cli({"sweep", "softmax-merge", "--param", "tiles=1", "--point-json",
                                       dir.file("p.json"), "--point-index", "3", "--point-count", "2", "--sweep-id",
                                       "0123456789abcdef"});
  EXPECT_EQ(bad_index.exit_code, kExitBadInput);
  EXPECT_THAT(bad_index.err, HasSubstr("--point-index 3: expected less than --point-count 2"));
  EXPECT_FALSE(fs::exists(dir.file("p.json")));
}

TEST(SweepJobs, HelpTellsTheNewOptions) {
  const CliResult r = run_cli({"sweep", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* text : {"--emit-jobs", "--jobs-dir", "--collect", "FILE.sbatch", "FILE.points",
                           "point-INDEX.json", "--sshloginfile", "Not with -j or --csv", "Takes only --csv"}) {
    EXPECT_THAT(r.out, HasSubstr(text));
  }
}

}  // namespace
