// The signals of a program that runs simulations in forked children
// (tb/run/isolated.h): the parent forwards SIGINT, SIGTERM and SIGHUP to
// its children, reaps them and exits 128 + signal; the children remove
// their pending output files (never a half-written file under a final
// name) and die with the parent. The table of live children is fixed
// storage that the parent's handler can read.
#pragma once

#include <signal.h>
#include <sys/types.h>

namespace kb {

// At most this many children at once (run_many_isolated clamps `jobs`).
constexpr int kMaxJobs = 1024;

// For a program that runs children: on SIGINT, SIGTERM or SIGHUP, forward
// the signal to every child, reap them, remove pending output files and
// exit with status 128 + the signal. Children always remove their pending
// output files on these signals, and die with their parent.
void install_interrupt_handlers();

// The forwarded signals blocked while the child table changes, so that a
// handler never forwards a signal to a pid that was reaped and reused.
class BlockSignals {
 public:
  BlockSignals();
  ~BlockSignals();
  BlockSignals(const BlockSignals&) = delete;
  BlockSignals& operator=(const BlockSignals&) = delete;
  const sigset_t& old() const { return old_; }

 private:
  sigset_t old_;
};

// The child table; call with the signals blocked (BlockSignals).
void add_child(pid_t pid);
void remove_child(pid_t pid);

// In a new child, first: the parent's temporaries and children are not its
// own, and the forwarded signals remove its own temporaries and exit
// 128 + signal.
void enter_child();

// N when `exit_status` is 128 + N for a forwarded signal (a child's handler
// exits so), else 0.
int forwarded_signal_of(int exit_status);

void sleep_ms(long ms);

}  // namespace kb
