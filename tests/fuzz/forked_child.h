// Shared by the replay harnesses (fuzz_replay, fuzz_ipc_replay), which
// simulate each input in a forked child: the child's budget in time and
// memory, waiting for it, and its coverage counters handed back.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "tests/fuzz/fuzz_util.h"

namespace kb::fuzz {

inline double env_number(const char* name, double fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atof(v) : fallback;
}

// The resident set of `pid` (/proc/PID/statm), MB.
inline long rss_mb(pid_t pid) {
  std::ifstream statm("/proc/" + std::to_string(pid) + "/statm");
  long pages_total = 0, pages_resident = 0;
  statm >> pages_total >> pages_resident;
  return pages_resident * (sysconf(_SC_PAGESIZE) / 1024) / 1024;
}

// Waits for the child within KB_FUZZ_CHILD_SECONDS (default 8) and
// KB_FUZZ_CHILD_RSS_MB (2048): over either, or ended by a signal, is a
// finding naming `what` ("the replay"). Returns its exit status.
inline int reap_child(pid_t pid, const std::string& what) {
  const double max_seconds = env_number("KB_FUZZ_CHILD_SECONDS", 8);
  const long max_rss_mb = long(env_number("KB_FUZZ_CHILD_RSS_MB", 2048));
  const auto start = std::chrono::steady_clock::now();
  useconds_t nap = 50;
  int status = 0;
  for (;;) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) finding("waitpid failed");
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const long rss = rss_mb(pid);
    if (elapsed > max_seconds || rss > max_rss_mb) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      finding(elapsed > max_seconds ? what + " ran longer than " + std::to_string(max_seconds) + " s"
                                    : what + " grew to " + std::to_string(rss) + " MB resident");
    }
    usleep(nap);
    if (nap < 5000) nap *= 2;
  }
  if (WIFSIGNALED(status)) finding(what + " crashed: " + strsignal(WTERMSIG(status)));
  return WEXITSTATUS(status);
}

// The child started from the parent's counters (shared memory it wrote at
// its exit): the larger count wins.
inline void take_child_counters(uint8_t* counters, const uint8_t* child, size_t size) {
  if (!child) return;
  for (size_t i = 0; i < size; ++i)
    if (child[i] > counters[i]) counters[i] = child[i];
}

}  // namespace kb::fuzz
