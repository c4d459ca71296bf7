#include "models/trace/vcd_trace.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <sysc/tracing/sc_tracing_ids.h>

#include "models/util/output_file.h"
#include "models/util/sim_time.h"

namespace kb {

namespace {

std::string without_vcd(const std::string& s) {
  return s.size() >= 4 && s.compare(s.size() - 4, 4, ".vcd") == 0 ? s.substr(0, s.size() - 4) : s;
}

// Copies the file `from` into `to`'s stream.
void copy_into(const std::string& from, OutputFile& to) {
  const int fd = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw OutputError("cannot read '" + from + "': " + std::strerror(errno));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      throw OutputError("cannot read '" + from + "': " + std::strerror(e));
    }
    if (n == 0) break;
    to.stream().write(buf, n);
  }
  ::close(fd);
}

}  // namespace

void check_vcd_complete(const std::string& written, uint64_t end_ps, const std::string& path) {
  struct stat empty {};
  if (::stat(written.c_str(), &empty) == 0 && empty.st_size == 0) {
    // SystemC writes nothing when the run stops (sc_stop, e.g. a kernel
    // error's report with the SC_STOP action) before its first time step.
    throw OutputError("VCD '" + path + "' not written: the run stopped before its first time step");
  }
  const std::string expected = "\n#" + std::to_string(end_ps) + "\n";
  std::string tail(expected.size(), '\0');
  const int fd = ::open(written.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  bool complete = false;
  if (fd >= 0 && ::fstat(fd, &st) == 0 && st.st_size >= off_t(tail.size())) {
    complete = ::pread(fd, tail.data(), tail.size(), st.st_size - off_t(tail.size())) == ssize_t(tail.size()) &&
               tail == expected;
  }
  if (fd >= 0) ::close(fd);
  if (!complete) {
    throw OutputError("cannot write VCD '" + path +
                      "': the waveform file is incomplete (it does not end with its final time stamp #" +
                      std::to_string(end_ps) + "; is the disk full?)");
  }
}

PeVcdTrace::PeVcdTrace(const std::vector<PeSignals>& pes, const std::string& path) {
  // Checked before any file is opened: one scope per PE.
  if (pes.empty()) throw std::logic_error("VCD '" + path + "': no PE to trace");
  for (size_t i = 0; i < pes.size(); ++i) {
    if (pes[i].scope.empty()) throw std::logic_error("VCD '" + path + "': a PE without a scope name");
    for (size_t k = 0; k < i; ++k) {
      if (pes[k].scope == pes[i].scope) {
        throw std::logic_error("VCD '" + path + "': two PEs under the scope '" + pes[i].scope + "'");
      }
    }
  }
  // A run that stops before its first time step gets no VCD; close() says
  // so in the run's error instead of SystemC's warning on stdout.
  sc_core::sc_report_handler::set_actions(sc_core::SC_ID_TRACING_CLOSE_EMPTY_FILE_, sc_core::SC_DO_NOTHING);
  // sc_create_vcd_trace_file() appends ".vcd" to the name it is given, so the
  // temporary file's name ends in ".vcd" and SystemC is given it without.
  out_ = std::make_unique<OutputFile>(path, "VCD", ".vcd");
  written_ = out_->temp_path();
  if (written_.empty()) {  // a device or pipe: SystemC writes a scratch file
    const char* tmpdir = std::getenv("TMPDIR");
    const std::string dir = tmpdir && *tmpdir ? tmpdir : "/tmp";
    scratch_ = std::make_unique<OutputFile>(dir + "/kernbench-" + std::to_string(::getpid()) + ".vcd",
                                            "VCD scratch file", ".vcd");
    written_ = scratch_->temp_path();
  }
  tf_ = sc_core::sc_create_vcd_trace_file(without_vcd(written_).c_str());
  if (!tf_) throw OutputError("cannot write '" + path + "': SystemC could not create the VCD file");
  tf_->set_time_unit(1, sc_core::SC_PS);
  for (const PeSignals& pe : pes) {
    const std::string cpu = pe.scope + "." + to_string(Component::kPeCpu) + ".",
                      sched = pe.scope + "." + to_string(Component::kPeScheduler) + ".";
    // read() returns a reference to the signal's current value: traced live.
    sc_core::sc_trace(tf_, pe.cpu_state.read(), cpu + "state", 2);
    sc_core::sc_trace(tf_, pe.descriptors.read(), cpu + "descriptors", 64);
    sc_core::sc_trace(tf_, pe.occupancy.read(), sched + "occupancy", 32);
    for (const EngineInfo& e : kEngines) {
      if (is_optional(e.engine) && !pe.optional_engines) continue;
      sc_core::sc_trace(tf_, pe.engine_busy[int(e.engine)].read(), sched + "busy_" + e.port);
    }
  }
}

PeVcdTrace::~PeVcdTrace() {
  // Not closed: SystemC's file is closed, and removed with the temporary.
  if (tf_) sc_core::sc_close_vcd_trace_file(tf_);
}

void PeVcdTrace::close() {
  if (!tf_) return;
  // SystemC 2.3.4 writes a time step's values when time next advances (or
  // on sc_stop), so after sc_start() returns by event starvation the last
  // step's changes (engines going idle, the queue emptying) are not in the
  // file yet. Advancing 1 ps, with nothing left to run, writes them; the file
  // then ends with a bare "#<end + 1>" time stamp. The caller reads the
  // simulated end time before close().
  if (sc_core::sc_get_status() == sc_core::SC_PAUSED) sc_core::sc_start(1, sc_core::SC_PS);
  const uint64_t end_ps = now_ps();
  sc_core::sc_close_vcd_trace_file(tf_);  // writes "#<end_ps>" and closes the file
  tf_ = nullptr;
  check_vcd_complete(written_, end_ps, out_->path());
  if (scratch_) copy_into(written_, *out_);
  out_->commit();
}

}  // namespace kb
