#include "tb/run/child_signals.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <ctime>

#include "models/util/output_file.h"

namespace kb {

namespace {

const int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP};

// Live children's pids, in fixed storage that signal handlers can read.
std::atomic<pid_t> g_children[kMaxJobs];

// The parent's handler: async-signal-safe calls only.
void on_parent_signal(int sig) {
  for (auto& c : g_children) {
    const pid_t p = c.load();
    if (p > 0) {
      kill(p, sig);
      kill(p, SIGCONT);  // a stopped child must run to die
    }
  }
  // Children leave at once (on_child_signal); any that does not is killed.
  for (int tick = 0; tick < 200; ++tick) {
    bool alive = false;
    for (auto& c : g_children) {
      const pid_t p = c.load();
      if (p > 0 && waitpid(p, nullptr, WNOHANG) == 0) alive = true;
    }
    if (!alive) break;
    sleep_ms(10);
  }
  for (auto& c : g_children) {
    const pid_t p = c.load();
    if (p > 0 && waitpid(p, nullptr, WNOHANG) == 0) {
      kill(p, SIGKILL);
      waitpid(p, nullptr, 0);
    }
  }
  remove_pending_outputs();
  _exit(128 + sig);
}

void on_child_signal(int sig) {
  remove_pending_outputs();
  _exit(128 + sig);
}

// Installs `handler` for the forwarded signals, except those ignored (as
// under nohup), which stay ignored.
void install(void (*handler)(int)) {
  for (int sig : kForwardedSignals) {
    struct sigaction old {};
    sigaction(sig, nullptr, &old);
    if (old.sa_handler == SIG_IGN) continue;
    struct sigaction sa {};
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    for (int s : kForwardedSignals) sigaddset(&sa.sa_mask, s);
    sigaction(sig, &sa, nullptr);
  }
}

}  // namespace

void install_interrupt_handlers() { install(on_parent_signal); }

BlockSignals::BlockSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : kForwardedSignals) sigaddset(&set, sig);
  sigprocmask(SIG_BLOCK, &set, &old_);
}

BlockSignals::~BlockSignals() { sigprocmask(SIG_SETMASK, &old_, nullptr); }

void add_child(pid_t pid) {
  for (auto& slot : g_children) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, pid)) break;
  }
}

void remove_child(pid_t pid) {
  for (auto& slot : g_children) {
    pid_t p = pid;
    if (slot.compare_exchange_strong(p, 0)) break;
  }
}

void enter_child() {
  forget_pending_outputs();  // the parent's temporaries are not ours
  for (auto& c : g_children) c.store(0);
  install(on_child_signal);
}

int forwarded_signal_of(int exit_status) {
  for (int sig : kForwardedSignals)
    if (exit_status == 128 + sig) return sig;
  return 0;
}

void sleep_ms(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, nullptr);
}

}  // namespace kb
