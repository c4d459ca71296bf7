// A trace that grows past what a viewer opens warns once on stderr and
// names --trace-window (docs/observability.md, Trace windows for long
// runs), in a single-PE run and in a mesh run; the trace is still whole. A
// trace under the size does not warn. The size is kTraceWarnBytes; these
// runs set a small one (RunSpec / MeshRunSpec::trace_warn_bytes).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <sstream>
#include <string>

#include "models/tl/tl.h"
#include "models/trace/chrome_trace.h"
#include "tb/run/mesh_run.h"
#include "tb/run/runner.h"
#include "tests/test_files.h"

namespace {

using kb::test::TempDir;
using ::testing::HasSubstr;

// What `run` writes to stderr (fd 2, which the forked child inherits).
std::string stderr_of(const std::function<void()>& run) {
  TempDir dir;
  const std::string path = dir.file("stderr");
  const int saved = dup(2);
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (saved < 0 || fd < 0 || dup2(fd, 2) < 0) ADD_FAILURE() << "cannot redirect stderr";
  close(fd);
  run();
  dup2(saved, 2);
  close(saved);
  return kb::test::read_file(path);
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

void many_commands(kb::Tl& tl) {
  for (int i = 0; i < 2000; ++i) tl.cycles(10);
}

TEST(TraceSize, SinglePeRunWarnsOncePastTheSize) {
  TempDir dir;
  kb::RunSpec spec;
  spec.launches = {{"many", many_commands}};
  spec.trace_path = dir.file("t.json");
  spec.trace_warn_bytes = 64 << 10;
  kb::RunResult r;
  const std::string err = stderr_of([&] { r = kb::run_isolated(spec); });
  ASSERT_TRUE(r.ok) << r.error;
  const uint64_t size = std::filesystem::file_size(spec.trace_path);
  ASSERT_GT(size, 4 * spec.trace_warn_bytes) << "the trace passes the size several times";
  EXPECT_EQ(count(err, "kernbench: warning: --trace has passed"), 1u) << err;
  EXPECT_THAT(err, HasSubstr("--trace-window START:END"));

  // The same run under the documented size: no warning.
  spec.trace_warn_bytes = kb::kTraceWarnBytes;
  ASSERT_LT(size, kb::kTraceWarnBytes);
  const std::string quiet = stderr_of([&] { r = kb::run_isolated(spec); });
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(quiet.find("warning"), std::string::npos) << quiet;
}

TEST(TraceSize, MeshRunWarnsOncePastTheSize) {
  TempDir dir;
  kb::MeshRunSpec spec;
  spec.config.topology.mesh.h = 1;
  spec.config.topology.mesh.w = 1;
  spec.config.topology.cube.pes = 2;
  spec.pes = {0, 1};
  spec.kernel_name = "many";
  spec.kernel = many_commands;
  spec.trace_path = dir.file("t.json");
  spec.trace_warn_bytes = 64 << 10;
  kb::MeshRunResult r;
  const std::string err = stderr_of([&] { r = kb::run_mesh_isolated(spec); });
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_GT(std::filesystem::file_size(spec.trace_path), 4 * spec.trace_warn_bytes);
  EXPECT_EQ(count(err, "kernbench: warning: --trace has passed"), 1u) << err;
}

TEST(TraceSize, TheWarningComesOnceFromTheTrace) {
  std::ostringstream out;
  kb::ChromeTrace trace(out);
  int calls = 0;
  uint64_t seen = 0;
  trace.warn_past(1000, [&](uint64_t written) {
    ++calls;
    seen = written;
  });
  kb::TraceProcess& p = trace.add_process("pe");
  for (uint64_t i = 0; i < 5000; ++i) {
    kb::OpRecord r;
    r.component = kb::Component::kPeCpu;
    r.kind = kb::RecordKind::kCpuCycles;
    r.start_ps = i * 10;
    r.end_ps = i * 10 + 10;
    p.record(r);
  }
  trace.finish();
  EXPECT_EQ(calls, 1);
  EXPECT_GT(seen, 1000u);
  EXPECT_LE(seen, trace.bytes_written());
  EXPECT_EQ(trace.bytes_written(), out.str().size());
}

}  // namespace
