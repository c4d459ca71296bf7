// libFuzzer harness: the replay path (kernbench replay). An input is a
// command stream; it is parsed (parse_command_stream) and, if it parses, its
// kernels run on a PE through the live dispatch path: descriptor-table and
// command validation, the scheduler, the engines, and in data mode the
// backing store.
//
// Two comment lines of the stream set the run up (the parser skips them):
//   # fuzz: data              data mode (values in HBM and TCM)
//   # fuzz: set KEY=VALUE     a configuration override, as --set
//
// SystemC elaborates once per process, so each run happens in a forked
// child, as in tb/run/runner.h. The child's coverage counters are copies of the
// parent's; the child hands them back through shared memory and the parent
// merges them, so libFuzzer sees the simulation's coverage too. The child runs
// SystemC for a bounded simulated time (kSimCycles cycles), so a large but
// legitimate workload stops there instead of counting as a hang.
//
// Most mutations break a line's syntax, and the stream parser has its own
// harness (fuzz_stream): here a line the parser rejects is dropped (the
// header line is restored instead) and the rest parsed again, so that most
// inputs reach the simulation. The repair is deterministic, so a saved
// input reproduces.
//
// Expected: parse errors (StreamError, KernelError, InputFileError),
// configuration errors (ConfigError), and kernel errors, which end a launch
// with a message. Findings (the parent aborts, libFuzzer keeps the input):
// the child crashes or a sanitizer reports (the child's stderr has the
// report), a SystemC error report escapes the simulation (a modelling bug,
// docs/conventions.md 5), the simulation stops early without having finished
// or failed every launch (a deadlock), the child runs longer than
// KB_FUZZ_CHILD_SECONDS (default 8) or grows past KB_FUZZ_CHILD_RSS_MB of
// resident memory (default 2048). Leaks are not checked in the child: a
// leak check there (__lsan_do_recoverable_leak_check) does not scan the
// stack the child inherited, so it reports every live object the parent's
// frames hold; leaks in the parser and config loader are found in the parent.
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <systemc>

#include "models/config/pe_config.h"
#include "models/pe/pe.h"
#include "models/top/pe_top.h"
#include "models/trace/stats.h"
#include "models/util/input_file.h"
#include "tb/replay/command_stream.h"
#include "tests/fuzz/forked_child.h"
#include "tests/fuzz/stream_repair.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

// Simulated time each input may run, in PE clock cycles: every command
// costs at least its dispatch cycles, so this bounds the work per input.
constexpr double kSimCycles = 200000;

enum ChildExit : int { kOk = 0, kSystemCError = 70, kDeadlock = 71 };

}  // namespace

namespace kb::fuzz {
// libFuzzer's coverage counters (sancov_counters.cpp); null if none.
uint8_t* coverage_counters(size_t* size);
}  // namespace kb::fuzz

namespace {

size_t g_counters_size = 0;
uint8_t* g_counters = nullptr;        // this process's (libFuzzer's)
uint8_t* g_child_counters = nullptr;  // a copy shared with the children

// For the report at exit: how many inputs got as far as a simulation.
uint64_t g_inputs = 0, g_simulated = 0;


struct Setup {
  bool data = false;
  std::vector<std::string> sets;
};

Setup read_setup(const std::string& text) {
  static const std::string kData = "# fuzz: data", kSet = "# fuzz: set ";
  Setup s;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(kData, 0) == 0) s.data = true;
    if (line.rfind(kSet, 0) == 0 && s.sets.size() < 8) s.sets.push_back(line.substr(kSet.size()));
  }
  return s;
}

// In the child: simulate, then leave without running destructors or atexit
// handlers of the parent's libFuzzer state.
[[noreturn]] void run_child(const kb::PeConfig& cfg,
                            const std::vector<std::pair<std::string, kb::Kernel>>& launches) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  int code = kOk;
  try {
    kb::PeTop top(cfg);
    kb::Pe& pe = top.pe();
    pe.op_log().configure(false, "");
    kb::StreamingStats stats(uint32_t(cfg.scheduler.queue_depth));
    pe.op_log().set_stats(&stats);
    for (const auto& [name, kernel] : launches) pe.pe_cpu.launch(name, kernel);
    const double limit_ps = kSimCycles * 1000.0 / cfg.clock_freq_ghz;
    const sc_core::sc_time limit(limit_ps < 1e15 ? limit_ps : 1e15, sc_core::SC_PS);
    sc_core::sc_start(limit);
    const auto& results = pe.pe_cpu.results();
    bool failed = false;
    for (const kb::LaunchResult& l : results) failed |= !l.error.empty();
    if (!failed && results.size() != launches.size() && sc_core::sc_time_stamp() < limit &&
        !sc_core::sc_pending_activity()) {
      std::fprintf(stderr, "kernbench fuzz: the simulation stopped at %s with %zu of %zu launches done\n",
                   sc_core::sc_time_stamp().to_string().c_str(), results.size(), launches.size());
      code = kDeadlock;
    }
    pe.op_log().flush();  // the last instant's records
    (void)stats.finish(results);
  } catch (const sc_core::sc_report& e) {
    std::fprintf(stderr, "kernbench fuzz: SystemC error report: %s\n", e.what());
    code = kSystemCError;
  } catch (const std::exception&) {
    // Reported by run_in_process as a failed run, like a kernel error.
  }
  if (g_child_counters) std::memcpy(g_child_counters, g_counters, g_counters_size);
  std::fflush(nullptr);
  _exit(code);
}

// Waits for the child (forked_child.h) and reads its exit status.
void reap(pid_t pid) {
  const int code = kb::fuzz::reap_child(pid, "the replay");
  if (code == kSystemCError) kb::fuzz::finding("a SystemC error report escaped the run");
  if (code == kDeadlock) kb::fuzz::finding("the simulation deadlocked");
  if (code != kOk)
    kb::fuzz::finding("the replay exited with status " + std::to_string(code) +
                      " (a sanitizer report above?)");
  kb::fuzz::take_child_counters(g_counters, g_child_counters, g_counters_size);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1);
  g_counters = kb::fuzz::coverage_counters(&g_counters_size);
  if (g_counters_size > 0) {
    void* p = mmap(nullptr, g_counters_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) kb::fuzz::finding("mmap of the coverage exchange failed");
    g_child_counters = static_cast<uint8_t*>(p);
  }
  std::atexit([] {
    std::fprintf(stderr, "fuzz_replay: %llu of %llu inputs parsed and simulated\n",
                 static_cast<unsigned long long>(g_simulated),
                 static_cast<unsigned long long>(g_inputs));
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ++g_inputs;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const Setup setup = read_setup(text);
  kb::PeConfig cfg;
  std::vector<std::pair<std::string, kb::Kernel>> launches;
  try {
    cfg = kb::load_pe_config("", setup.sets);
    launches = kb::fuzz::parse_repairing(text, "fuzz.stream");
  } catch (const kb::ConfigError&) {
    return 0;
  } catch (const kb::StreamError&) {
    return 0;
  } catch (const kb::KernelError&) {
    return 0;
  } catch (const kb::InputFileError&) {
    return 0;
  }
  if (launches.empty()) return 0;
  cfg.data_mode = cfg.data_mode || setup.data;
  ++g_simulated;
  if (g_child_counters) std::memset(g_child_counters, 0, g_counters_size);
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) kb::fuzz::finding("fork failed");
  if (pid == 0) run_child(cfg, launches);
  reap(pid);
  return 0;
}

// libsystemc.so references sc_main; the children drive SystemC directly.
extern "C" int sc_main(int, char**) { return 0; }
