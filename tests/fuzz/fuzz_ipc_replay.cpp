// libFuzzer harness: command streams with IPC (send, recv) replayed on the
// PEs of a small mesh (MeshTop, models/top/mesh_top.h): PE_IPC and its
// mailbox (models/pe/ipc/), PE_SCHEDULER's IPC issue policy, the cube
// interconnect, the mesh routers and the UCIe links, and the deadlock
// report (models/top/deadlock.h). `kernbench replay` runs a stream on one
// PE only (tb/cli/replay.cpp: PeTop, where a PE can send only to itself,
// which fuzz_replay covers); here the stream's kernel sections are spread
// over the mesh's PEs, as a mesh run (tb/run/mesh_run.cpp) launches kernels.
//
// An input is a command stream (tb/replay/command_stream.h). Its kernel
// sections go round the PEs: section i runs on global PE i mod N, each PE
// its sections in order, as launches one after another. Each PE's sections
// are parsed on their own (a PE has its own tensor IDs, as a replay of one
// PE's recorded stream would), the header line first; a line the parser
// rejects is dropped, as fuzz_replay does (fuzz_stream covers the parser).
// Comment lines set the run up (the parser skips them):
//   # fuzz: data              data mode (values in HBM and TCM)
//   # fuzz: set KEY=VALUE     a configuration override, as --set, over the
//                             harness's topology: topology.mesh.h=1,
//                             topology.mesh.w=2, topology.cube.pes=2 (two
//                             cubes of two PEs, one link each way)
// A topology of more than kMaxPes PEs is not simulated (elaboration per
// input would dominate).
//
// SystemC elaborates once per process, so each run happens in a forked
// child, whose coverage counters go back to libFuzzer through shared memory
// (sancov_counters.cpp, as in fuzz_replay). The child simulates at most
// kSimCycles PE cycles, so a large but legitimate workload stops there.
//
// Expected: parse and configuration errors, kernel errors (a send to a PE
// outside the mesh, a recv of the wrong size, ...) that end a launch with
// a message, messages left undelivered, and deadlocks (a recv that no send
// answers, sends that fill a full queue) that stop the simulation with
// launches unfinished, since the deadlock report names them. Findings (the
// parent aborts, libFuzzer keeps the input): the child crashes or a
// sanitizer reports (the child's stderr has it), a SystemC error report
// escapes the simulation, the simulation stops with launches unfinished and
// the deadlock report is empty, does not name every blocked PE, or names
// none of the waits it knows (an IPC message, an IPC slot, a full command
// queue, commands in flight); a launched PE is neither finished nor busy;
// the child runs longer than KB_FUZZ_CHILD_SECONDS (default 8) or grows past
// KB_FUZZ_CHILD_RSS_MB resident (default 2048). Leaks are not checked in the
// child (see fuzz_replay.cpp). KB_FUZZ_VERBOSE=1 prints how each run ended
// (per PE: launches done, failed with what; the deadlock report).
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
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <systemc>

#include "models/config/pe_config.h"
#include "models/pe/pe.h"
#include "models/top/deadlock.h"
#include "models/top/mesh_top.h"
#include "models/util/input_file.h"
#include "tb/replay/command_stream.h"
#include "tb/run/harness.h"
#include "tests/fuzz/forked_child.h"
#include "tests/fuzz/stream_repair.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

// Simulated time each input may run, in PE clock cycles.
constexpr double kSimCycles = 200000;
// The most PEs a topology may have here.
constexpr uint64_t kMaxPes = 8;

enum ChildExit : int { kOk = 0, kSystemCError = 70, kSilentDeadlock = 71, kLostLaunch = 72 };

}  // namespace

namespace kb::fuzz {
// libFuzzer's coverage counters (sancov_counters.cpp); null if none.
uint8_t* coverage_counters(size_t* size);
}  // namespace kb::fuzz

namespace {

size_t g_counters_size = 0;
uint8_t* g_counters = nullptr;        // this process's (libFuzzer's)
uint8_t* g_child_counters = nullptr;  // a copy shared with the children

// For the report at exit: how many inputs got as far as a simulation, and
// how many of those ended in a (reported) deadlock.
uint64_t g_inputs = 0, g_simulated = 0;
uint64_t* g_deadlocks = nullptr;  // shared with the children
bool g_verbose = false;           // KB_FUZZ_VERBOSE=1: how each run ended, on stderr


using Launches = std::vector<std::pair<std::string, kb::Kernel>>;

// A line starting a kernel section: `kernel` first, after blanks.
bool is_kernel_line(const std::string& line) {
  const size_t b = line.find_first_not_of(" \t");
  return b != std::string::npos && line.compare(b, 6, "kernel") == 0 &&
         (b + 6 == line.size() || line[b + 6] == ' ' || line[b + 6] == '\t');
}

// Each PE's stream: the header, then the sections i with i mod pes == g.
std::vector<std::string> split_by_pe(const std::string& text, size_t pes) {
  std::vector<std::string> out(pes, std::string(kb::fuzz::kHeader) + "\n");
  std::istringstream in(text);
  size_t section = 0;
  bool started = false;
  for (std::string line; std::getline(in, line);) {
    if (is_kernel_line(line)) {
      section += started;
      started = true;
    }
    if (started) out[section % pes] += line + "\n";
  }
  return out;
}

struct Setup {
  bool data = false;
  std::vector<std::string> sets = {"topology.mesh.h=1", "topology.mesh.w=2", "topology.cube.pes=2"};
};

Setup read_setup(const std::string& text) {
  static const std::string kData = "# fuzz: data", kSet = "# fuzz: set ";
  Setup s;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(kData, 0) == 0) s.data = true;
    if (line.rfind(kSet, 0) == 0 && s.sets.size() < 3 + 8) s.sets.push_back(line.substr(kSet.size()));
  }
  return s;
}

// The waits deadlock_report names; a report naming none explains nothing.
bool names_a_wait(const std::string& report) {
  for (const char* w : {"waits in RecvCmd", "waits in SendCmd", "PE_CPU waits for a slot", "command(s) in flight"})
    if (report.find(w) != std::string::npos) return true;
  return false;
}

// In the child: elaborate the mesh, launch, simulate, check how it ended,
// then leave without running the parent's destructors or atexit handlers.
[[noreturn]] void run_child(const kb::PeConfig& cfg, const std::vector<Launches>& by_pe) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  int code = kOk;
  try {
    kb::prepare_run(true);
    kb::MeshTop top(cfg);
    std::vector<kb::Pe*> all;
    for (size_t g = 0; g < top.size(); ++g) {
      all.push_back(&top.pe(g));
      all.back()->op_log().configure(false, "");
    }
    kb::PeProbes probes(all, nullptr, false);
    for (size_t g = 0; g < by_pe.size(); ++g)
      for (const auto& [name, kernel] : by_pe[g]) top.pe(g).launch(name, kernel);
    const double limit_ps = kSimCycles * 1000.0 / cfg.clock_freq_ghz;
    const sc_core::sc_time limit(limit_ps < 1e15 ? limit_ps : 1e15, sc_core::SC_PS);
    sc_core::sc_start(limit, sc_core::SC_EXIT_ON_STARVATION);
    probes.flush();
    if (g_verbose) {
      for (size_t g = 0; g < by_pe.size(); ++g) {
        const kb::Pe& pe = top.pe(g);
        std::fprintf(stderr, "fuzz_ipc_replay: %s: %zu launches, %zu done%s%s%s\n", pe.name(), by_pe[g].size(),
                     pe.pe_cpu.results().size(), pe.pe_cpu.busy() ? ", busy" : "",
                     pe.pe_cpu.failed() ? ", failed: " : "",
                     pe.pe_cpu.failed() ? pe.pe_cpu.results().back().error.c_str() : "");
      }
      std::fprintf(stderr, "fuzz_ipc_replay: stopped at %s%s; %s; %s\n", sc_core::sc_time_stamp().to_string().c_str(),
                   sc_core::sc_pending_activity() ? " (the time limit)" : "", kb::deadlock_report(all).c_str(),
                   kb::undelivered_messages(all).c_str());
    }
    if (!sc_core::sc_pending_activity()) {  // the simulation ended: every launch must be accounted for
      std::vector<kb::Pe*> blocked;
      for (size_t g = 0; g < by_pe.size(); ++g) {
        kb::Pe& pe = top.pe(g);
        if (by_pe[g].empty()) continue;
        if (pe.pe_cpu.busy()) {
          blocked.push_back(&pe);
        } else if (pe.pe_cpu.results().empty() ||
                   (!pe.pe_cpu.failed() && pe.pe_cpu.results().size() != by_pe[g].size())) {
          std::fprintf(stderr, "kernbench fuzz: %s has %zu of %zu launches done, none failed, and is not busy\n",
                       pe.name(), pe.pe_cpu.results().size(), by_pe[g].size());
          code = kLostLaunch;
        }
      }
      if (!blocked.empty()) {
        const std::string report = kb::deadlock_report(all);
        bool named = !report.empty() && names_a_wait(report);
        for (const kb::Pe* pe : blocked) named = named && report.find(pe->name()) != std::string::npos;
        if (!named) {
          std::fprintf(stderr, "kernbench fuzz: the simulation stopped at %s with %zu PEs blocked; the deadlock "
                       "report: '%s'\n", sc_core::sc_time_stamp().to_string().c_str(), blocked.size(), report.c_str());
          code = kSilentDeadlock;
        } else if (g_deadlocks) {
          __atomic_add_fetch(g_deadlocks, 1, __ATOMIC_RELAXED);
        }
      } else {
        (void)kb::undelivered_messages(all);  // a failed run's message, as mesh_run.cpp asks for it
      }
    }
  } catch (const sc_core::sc_report& e) {
    std::fprintf(stderr, "kernbench fuzz: SystemC error report: %s\n", e.what());
    code = kSystemCError;
  } catch (const std::exception&) {
    // The mesh refused the configuration, as run_mesh_in_process reports it.
  }
  if (g_child_counters) std::memcpy(g_child_counters, g_counters, g_counters_size);
  std::fflush(nullptr);
  _exit(code);
}

// Waits for the child (forked_child.h) and reads its exit status.
void reap(pid_t pid) {
  const int code = kb::fuzz::reap_child(pid, "the mesh replay");
  if (code == kSystemCError) kb::fuzz::finding("a SystemC error report escaped the run");
  if (code == kSilentDeadlock)
    kb::fuzz::finding("the simulation deadlocked without a report naming each blocked PE and its wait");
  if (code == kLostLaunch) kb::fuzz::finding("a launch neither finished, failed nor ran");
  if (code != kOk)
    kb::fuzz::finding("the mesh replay exited with status " + std::to_string(code) +
                      " (a sanitizer report above?)");
  kb::fuzz::take_child_counters(g_counters, g_child_counters, g_counters_size);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1);
  g_verbose = kb::fuzz::env_number("KB_FUZZ_VERBOSE", 0) != 0;
  g_counters = kb::fuzz::coverage_counters(&g_counters_size);
  if (g_counters_size > 0) {
    void* p = mmap(nullptr, g_counters_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) kb::fuzz::finding("mmap of the coverage exchange failed");
    g_child_counters = static_cast<uint8_t*>(p);
  }
  void* d = mmap(nullptr, sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (d == MAP_FAILED) kb::fuzz::finding("mmap of the deadlock count failed");
  g_deadlocks = static_cast<uint64_t*>(d);
  std::atexit([] {
    std::fprintf(stderr, "fuzz_ipc_replay: %llu of %llu inputs parsed and simulated, %llu of them deadlocked "
                 "(reported)\n", static_cast<unsigned long long>(g_simulated),
                 static_cast<unsigned long long>(g_inputs), static_cast<unsigned long long>(*g_deadlocks));
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ++g_inputs;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const Setup setup = read_setup(text);
  kb::PeConfig cfg;
  try {
    cfg = kb::load_pe_config("", setup.sets);
  } catch (const kb::ConfigError&) {
    return 0;
  }
  if (cfg.topology.pes() > kMaxPes) return 0;
  cfg.data_mode = cfg.data_mode || setup.data;
  const std::vector<std::string> texts = split_by_pe(text, size_t(cfg.topology.pes()));
  std::vector<Launches> by_pe(texts.size());
  bool any = false;
  for (size_t g = 0; g < texts.size(); ++g) {
    try {
      by_pe[g] = kb::fuzz::parse_repairing(texts[g], "pe" + std::to_string(g) + ".stream");
    } catch (const kb::StreamError&) {
    } catch (const kb::KernelError&) {
    } catch (const kb::InputFileError&) {
    }
    any = any || !by_pe[g].empty();
  }
  if (!any) return 0;
  ++g_simulated;
  if (g_child_counters) std::memset(g_child_counters, 0, g_counters_size);
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) kb::fuzz::finding("fork failed");
  if (pid == 0) run_child(cfg, by_pe);
  reap(pid);
  return 0;
}

// libsystemc.so references sc_main; the children drive SystemC directly.
extern "C" int sc_main(int, char**) { return 0; }
