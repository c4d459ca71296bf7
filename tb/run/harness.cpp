#include "tb/run/harness.h"

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <iostream>

#include <systemc>

#include "models/util/asan_stack.h"  // KB_ASAN
#include "models/util/instant_calendar.h"

#if defined(KB_ASAN)
#include <pthread.h>
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace kb {

namespace {

// Under AddressSanitizer only (see models/util/asan_stack.h). After the
// simulation ASan may still take the last coroutine's stack for this
// thread's: it then ignores every later throw's __asan_handle_no_return,
// leaving stale poison on this stack, which its own sigaltstack check
// reports as stack-use-after-scope at the next throw (a failed output's
// commit). Tell ASan which stack this is again, and clear what lies below
// this frame: the simulation is over, no live object is there.
void back_on_main_stack() {
#if defined(KB_ASAN)
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void* bottom = nullptr;
    size_t size = 0;
    if (pthread_attr_getstack(&attr, &bottom, &size) == 0) {
      __sanitizer_start_switch_fiber(nullptr, bottom, size);
      __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
    }
    pthread_attr_destroy(&attr);
  }
  char here;
  constexpr uintptr_t kBytes = uintptr_t(1) << 18;
  const uintptr_t below = reinterpret_cast<uintptr_t>(&here) - kBytes;
  ASAN_UNPOISON_MEMORY_REGION(reinterpret_cast<void*>(below), kBytes);
#endif
}

}  // namespace

void prepare_run(bool lookahead) {
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  InstantCalendar::set_lookahead(lookahead);
}

PeProbes::PeProbes(const std::vector<Pe*>& pes, ChromeTrace* trace, bool keep_occupancy) : pes_(pes) {
  for (Pe* pe : pes) {
    TraceProcess* process = nullptr;
    if (trace) {
      process = &trace->add_process(pe->name());  // pid: the PE's place in `pes` + 1
      processes_.push_back(process);
      pe->op_log().set_trace(process);
    }
    std::unique_ptr<CounterHistory> history;
    if (process || keep_occupancy) {
      history = std::make_unique<CounterHistory>(
          uint32_t(pe->pe_scheduler.occupancy()), keep_occupancy,
          process ? CounterHistory::Sink([process](const CounterSample& s) { process->counter(s); })
                  : CounterHistory::Sink());
      pe->pe_scheduler.set_occupancy_history(history.get());
    }
    occupancy_.push_back(std::move(history));
  }
}

void PeProbes::flush() {
  for (Pe* pe : pes_) pe->op_log().flush();
  for (const auto& history : occupancy_) {
    if (history) history->flush();
  }
}

void warn_on_large_trace(ChromeTrace& trace, uint64_t bytes) {
  trace.warn_past(bytes, [](uint64_t written) {
    char size[32];
    std::snprintf(size, sizeof size, "%.0f MiB", double(written) / double(1 << 20));
    std::cerr << "kernbench: warning: --trace has passed " << size
              << ", more than a browser's trace viewer opens, and the run goes on; --trace-window START:END "
                 "(e.g. 10us:20us) writes only the events of that span (docs/observability.md)\n"
              << std::flush;
  });
}

double simulate() {
  const auto wall_start = std::chrono::steady_clock::now();
  sc_core::sc_start();
  back_on_main_stack();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
}

uint64_t peak_rss_kb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return uint64_t(usage.ru_maxrss);
}

std::string undelivered_messages(const std::vector<Pe*>& pes) {
  std::string out;
  for (Pe* pe : pes) {
    const std::string left = pe->pe_ipc().undelivered();
    if (left.empty()) continue;
    out += std::string(out.empty() ? "" : "; ") + pe->name() + " holds messages no recv took: " + left;
  }
  return out;
}

void add_error(bool& ok, std::string& error, const std::string& what) {
  error = ok || error.empty() ? what : error + "; " + what;
  ok = false;
}

void commit_output(bool& ok, std::string& error, const std::function<void()>& write) {
  try {
    write();
  } catch (const std::exception& e) {
    add_error(ok, error, e.what());
  }
}

}  // namespace kb
