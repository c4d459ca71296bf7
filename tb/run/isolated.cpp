#include "tb/run/isolated.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

namespace kb {

namespace {

using Clock = std::chrono::steady_clock;

struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::unique_ptr<ResultReader> reader;
  std::string pending;        // received, not yet a whole line
  size_t scanned = 0;         // of pending, holding no line break
  bool received = false;      // anything at all
  bool complete = false;      // 'Z' seen
  bool raised = false;        // 'E' seen: `message` is the exception's message
  std::string message;
  std::string read_error;     // the first line that could not be read
  std::string error;          // why there is no result
  bool reaped = false;
  int status = 0;
  ChildTimeout timeout;
  Clock::time_point deadline;
};

void write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) _exit(3);
    p += w;
    n -= size_t(w);
  }
}

}  // namespace

void ResultWriter::line(char tag, const nlohmann::json& j) {
  // JSON text for the fork boundary: invalid UTF-8 (a kernel or tensor
  // name is any bytes) is replaced, never thrown on. First: if it throws,
  // no part line is left.
  const std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  buf_ += tag;
  buf_ += text;
  buf_ += '\n';
  if (buf_.size() >= (1u << 16)) flush();
}

void ResultWriter::end() {
  buf_ += "Z\n";
  flush();
}

void ResultWriter::flush() {
  write_all(fd_, buf_.data(), buf_.size());
  buf_.clear();
}

namespace {

// The child: runs `produce`, sends its result and _exits whatever happens,
// so no exception unwinds into the parent's code.
[[noreturn]] void child_main(int fd, const Producer& produce, pid_t parent, const sigset_t& mask) {
  enter_child();
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent) _exit(4);  // the parent died before prctl
  sigprocmask(SIG_SETMASK, &mask, nullptr);
  ResultWriter out(fd);
  try {
    produce(out);
    out.end();
  } catch (const std::exception& e) {
    out.flush();  // whole lines only: the 'E' starts a line
    write_all(fd, "E", 1);
    write_all(fd, e.what(), std::strlen(e.what()));
  } catch (...) {
    out.flush();
    const char msg[] = "Eunknown exception";
    write_all(fd, msg, sizeof msg - 1);
  }
  close(fd);
  std::fflush(nullptr);
  _exit(0);
}

Child start_child(const Producer& produce, ChildTimeout timeout, std::unique_ptr<ResultReader> reader) {
  Child c;
  c.reader = std::move(reader);
  c.timeout = timeout;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    c.error = std::string("pipe: ") + std::strerror(errno);
    return c;
  }
  std::fflush(nullptr);
  const pid_t parent = getpid();
  BlockSignals blocked;  // until the child has its own handlers, and its pid is known
  c.pid = fork();
  if (c.pid == 0) {
    close(fds[0]);
    child_main(fds[1], produce, parent, blocked.old());
  }
  close(fds[1]);
  if (c.pid < 0) {
    c.error = std::string("fork: ") + std::strerror(errno);
    close(fds[0]);
    return c;
  }
  add_child(c.pid);
  c.fd = fds[0];
  c.deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout.seconds));
  return c;
}

// waitpid with the child table kept in step; true when the child changed
// state (`status` says how).
bool wait_child(Child& c, int flags) {
  BlockSignals blocked;
  int status = 0;
  pid_t r;
  while ((r = waitpid(c.pid, &status, flags)) < 0 && errno == EINTR) {
  }
  if (r != c.pid) return false;
  c.status = status;
  if (!WIFSTOPPED(status)) {
    c.reaped = true;
    remove_child(c.pid);
  }
  return true;
}

// Whether /proc still shows the process stopped (a stop reported by
// waitpid may have been followed by SIGCONT, as after ^Z and fg).
bool still_stopped(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto paren = text.rfind(')');
  if (paren == std::string::npos || paren + 2 >= text.size()) return true;
  return text[paren + 2] == 'T';
}

// Ends a child: SIGTERM (it removes its temporary files), then SIGKILL if it
// has not left within 2 s.
void end_child(Child& c) {
  kill(c.pid, SIGTERM);
  kill(c.pid, SIGCONT);
  for (int tick = 0; tick < 200 && !c.reaped; ++tick) {
    if (!wait_child(c, WNOHANG)) sleep_ms(10);
  }
  if (!c.reaped) {
    kill(c.pid, SIGKILL);
    while (!c.reaped) wait_child(c, 0);
  }
}

void take_line(Child& c, char tag, std::string_view text) {
  if (!c.read_error.empty()) return;  // the first error is the one told
  try {
    if (c.complete) throw std::runtime_error("data after the end of the result");
    if (tag == 'Z') {
      c.complete = true;
      c.reader->end();
    } else {
      c.reader->line(tag, text);
    }
  } catch (const std::exception& e) {
    c.read_error = e.what();
  }
}

// Takes the whole lines received so far (up to an 'E': the rest is its message).
void take(Child& c, const char* p, size_t n) {
  c.received = true;
  if (c.raised) {
    c.message.append(p, n);
    return;
  }
  c.pending.append(p, n);
  size_t from = 0;
  while (from < c.pending.size()) {
    if (c.pending[from] == 'E') {
      c.raised = true;
      c.message.assign(c.pending, from + 1, std::string::npos);
      from = c.pending.size();
      break;
    }
    const size_t nl = c.pending.find('\n', std::max(from, c.scanned));
    if (nl == std::string::npos) break;
    take_line(c, c.pending[from], std::string_view(c.pending).substr(from + 1, nl - from - 1));
    from = nl + 1;
  }
  c.pending.erase(0, from);
  c.scanned = c.pending.size();  // a part line is not scanned again
}

// Reads what is available; false at end of stream.
bool read_some(Child& c) {
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = read(c.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    take(c, buf, size_t(n));
    return true;
  }
}


// Checks a running child between reads: its timeout, and whether it was
// stopped. True when it was ended (c.error says why).
bool check_child(Child& c) {
  if (c.timeout.seconds > 0 && Clock::now() >= c.deadline) {
    end_child(c);
    c.error = "timed out after " + seconds_text(c.timeout.named()) + " s";
    return true;
  }
  if (!c.reaped && wait_child(c, WNOHANG | WUNTRACED) && WIFSTOPPED(c.status) && still_stopped(c.pid)) {
    const int sig = WSTOPSIG(c.status);
    end_child(c);
    const char* name = sigabbrev_np(sig);
    c.error = "the run's process was stopped by SIG" + std::string(name ? name : std::to_string(sig)) +
              " and would never finish, so it was ended";
    return true;
  }
  return false;
}

// "SIGTERM (Terminated)"; "signal N" for a number without a name.
std::string signal_text(int sig) {
  const char* name = sigabbrev_np(sig);
  const char* what = strsignal(sig);
  return name ? "SIG" + std::string(name) + (what ? " (" + std::string(what) + ")" : "")
              : "signal " + std::to_string(sig);
}

// After the end of the child's stream: reaps it, and says whether its
// result is whole.
void finish(Child& c, Outcome& o) {
  if (!c.error.empty()) {
    o.error = c.error;
  } else {
    while (!c.reaped) wait_child(c, 0);
    const int status = c.status;
    const int forwarded = WIFEXITED(status) ? forwarded_signal_of(WEXITSTATUS(status)) : 0;
    if (WIFSIGNALED(status)) {
      const int sig = WTERMSIG(status);
      const bool crash = sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGABRT ||
                         sig == SIGTRAP || sig == SIGSYS;
      o.error = (crash ? "run crashed: signal " : "run ended by signal ") + signal_text(sig);
    } else if (forwarded) {
      // The child's handler exits 128 + N after removing its temporaries.
      o.error = "run ended by signal " + signal_text(forwarded);
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !c.received) {
      o.error = "run ended without a result (exit status " +
                std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")";
    } else if (c.raised) {
      o.error = c.message;
    } else if (!c.read_error.empty()) {
      o.read_error = c.read_error;
    } else if (!c.complete || !c.pending.empty()) {
      o.read_error = "the result ends before its end";
    } else {
      o.reader = std::move(c.reader);
    }
  }
  if (c.fd >= 0) close(c.fd);
  c.fd = -1;
  c.reader.reset();
  std::string().swap(c.pending);
}

}  // namespace

std::vector<Outcome> run_children(const std::vector<Producer>& produce,
                                  const std::vector<ChildTimeout>& timeouts, int jobs,
                                  const std::function<std::unique_ptr<ResultReader>()>& make_reader,
                                  const std::function<void(size_t, size_t)>& on_done) {
  std::vector<Outcome> out(produce.size());
  std::vector<std::pair<size_t, Child>> running;
  size_t next = 0, done = 0;
  jobs = std::clamp(jobs, 1, kMaxJobs);
  auto complete = [&](size_t i, Child& c) {
    finish(c, out[i]);
    ++done;
    if (on_done) on_done(done, produce.size());
  };
  while (done < produce.size()) {
    while (running.size() < size_t(jobs) && next < produce.size()) {
      Child c = start_child(produce[next], timeouts[next], make_reader());
      if (c.error.empty()) running.emplace_back(next, std::move(c));
      else complete(next, c);
      ++next;
    }
    if (running.empty()) continue;
    std::vector<pollfd> fds;
    for (auto& [i, c] : running) fds.push_back({c.fd, POLLIN, 0});
    // A short tick, to notice stopped children and timeouts.
    if (poll(fds.data(), fds.size(), 100) < 0 && errno != EINTR) {
      throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    }
    for (size_t k = 0; k < running.size();) {
      auto& [i, c] = running[k];
      const bool readable = fds[k].revents & (POLLIN | POLLHUP | POLLERR);
      const bool finished = (readable && !read_some(c)) || check_child(c);
      if (!finished) {
        ++k;
        continue;
      }
      complete(i, c);
      running.erase(running.begin() + long(k));
      fds.erase(fds.begin() + long(k));
    }
  }
  return out;
}

namespace {

// One line 'R': the function's JSON.
class JsonReader : public ResultReader {
 public:
  void line(char tag, std::string_view text) override {
    if (tag != 'R' || got_) throw std::runtime_error("unexpected line");
    j = nlohmann::json::parse(text);
    got_ = true;
  }
  void end() override {
    if (!got_) throw std::runtime_error("no result");
  }
  nlohmann::json j;

 private:
  bool got_ = false;
};

}  // namespace

nlohmann::json run_function_isolated(const std::function<nlohmann::json()>& f, ChildTimeout timeout) {
  Outcome o = std::move(run_children({[&f](ResultWriter& out) { out.line('R', f()); }}, {timeout}, 1,
                                     [] { return std::make_unique<JsonReader>(); }, {})
                            .at(0));
  if (!o.error.empty()) return nlohmann::json{{"error", o.error}};
  if (!o.read_error.empty()) {
    return nlohmann::json{{"error", std::string("the result could not be read: ") + o.read_error}};
  }
  return std::move(static_cast<JsonReader&>(*o.reader).j);
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

}  // namespace kb
