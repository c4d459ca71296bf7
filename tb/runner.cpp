#include "tb/runner.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <unordered_set>

#include <systemc>

#include "models/pe/pe.h"
#include "models/trace/chrome_trace.h"
#include "models/trace/counter_probe.h"
#include "models/trace/vcd_trace.h"
#include "models/util/output_file.h"
#include "tb/command_stream.h"

namespace kb {

uint64_t RunResult::latency_ps() const {
  uint64_t t = 0;
  for (const LaunchResult& l : launches) t += l.latency_ps();
  return t;
}

namespace {

// JSON text for outputs and the fork boundary: invalid UTF-8 (a kernel or
// tensor name is any bytes) is replaced, never thrown on (issue 11).
std::string dump(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Appends an output failure to a run's result: the run fails (exit 1) with
// the path and the OS error.
void add_error(RunResult& r, const std::string& what) {
  r.error = r.ok || r.error.empty() ? what : r.error + "; " + what;
  r.ok = false;
}

}  // namespace

RunResult run_in_process(const RunSpec& spec) {
  RunResult r;
  // Every output is opened before the simulation starts, so a path that
  // cannot be written fails at once; each is committed (checked, moved into
  // place) at the end, or removed when the run ends without it.
  std::unique_ptr<OutputFile> trace_out, stats_out;
  // Declared before pe so that it outlives it: PE_CPU calls it until the end.
  std::unique_ptr<StreamRecorder> recorder;
  // The trace is written as the run goes (to trace_out's temporary file).
  std::unique_ptr<ChromeTrace> trace;
  std::unique_ptr<Pe> pe;
  // Observers of pe's signals, destroyed before it.
  std::unique_ptr<CounterProbe> occupancy;
  // The summary statistics, computed as the run goes (constant memory).
  std::unique_ptr<StreamingStats> stats;
  std::unique_ptr<PeVcdTrace> vcd;
  // SystemC's info messages (e.g. "stopped by user" when a failing kernel
  // calls sc_stop) would mix into the reports.
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  try {
    if (!spec.trace_path.empty()) trace_out = std::make_unique<OutputFile>(spec.trace_path, "trace");
    if (!spec.stats_path.empty()) stats_out = std::make_unique<OutputFile>(spec.stats_path, "statistics");
    pe = std::make_unique<Pe>("pe", spec.config);
    // The records stay in memory only for the caller; otherwise they are
    // streamed (op log file, trace, summary) or just counted.
    pe->op_log().configure(spec.keep_records, spec.oplog_path);
    if (!spec.trace_path.empty()) {
      trace = std::make_unique<ChromeTrace>(trace_out->stream());
      pe->op_log().set_trace(trace.get());
    }
    if (spec.summary) {
      stats = std::make_unique<StreamingStats>(uint32_t(spec.config.scheduler.queue_depth));
      pe->op_log().set_stats(stats.get());
    }
    if (!spec.trace_path.empty() || spec.keep_records) {
      occupancy = std::make_unique<CounterProbe>(
          "occupancy_probe", pe->pe_scheduler.occupancy_signal, spec.keep_records,
          trace ? CounterProbe::Sink([t = trace.get()](const CounterSample& s) { t->counter(s); })
                : CounterProbe::Sink());
    }
    // Trace signals cost a process activation per change: only when observed.
    pe->enable_signals(occupancy != nullptr || !spec.vcd_path.empty());
    if (!spec.vcd_path.empty()) vcd = std::make_unique<PeVcdTrace>(*pe, spec.vcd_path);
    if (!spec.record_path.empty()) {
      recorder = std::make_unique<StreamRecorder>(spec.record_path);
      pe->pe_cpu.set_observer(recorder.get());
    }
    for (const auto& [name, kernel] : spec.launches) pe->pe_cpu.launch(name, kernel);
    const auto wall_start = std::chrono::steady_clock::now();
    sc_core::sc_start();
    r.sim_wall_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    r.end_ps = sc_core::sc_time_stamp().value();  // before vcd->close(), which may advance 1 ps
    if (occupancy) occupancy->flush();
  } catch (const std::exception& e) {
    r.error = e.what();
    return r;
  }
  r.launches = pe->pe_cpu.results();
  r.data_bytes = pe->data_bytes();
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  r.peak_rss_kb = uint64_t(usage.ru_maxrss);
  for (int c = 0; c < kNumComponents; ++c) r.records_by_component[c] = pe->op_log().count(Component(c));
  for (int c = 0; c < kNumComponents; ++c) r.busy_ps[c] = pe->op_log().busy_ps(Component(c));
  const std::vector<OpRecord>& records = pe->op_log().records();
  if (stats) r.stats = stats->finish(r.launches);
  if (spec.keep_records) {
    r.records = records;
    r.occupancy = occupancy->samples();
  }
  r.ok = true;
  for (const LaunchResult& l : r.launches) {
    if (!l.error.empty()) {
      r.ok = false;
      r.error = l.error;
      break;
    }
  }
  if (r.ok && r.launches.size() != spec.launches.size()) {
    r.ok = false;
    r.error = "simulation ended before every kernel launch completed";
  }
  // Written after a failed kernel too: what happened up to the failure.
  // Each output on its own, so one failing does not lose the others.
  auto commit = [&r](const std::function<void()>& write) {
    try {
      write();
    } catch (const std::exception& e) {
      add_error(r, e.what());
    }
  };
  commit([&] { pe->op_log().close(); });
  if (recorder) commit([&] { recorder->close(); });
  if (vcd) commit([&] { vcd->close(); });
  if (trace_out) {
    commit([&] {
      for (const LaunchResult& l : r.launches) trace->launch({l.kernel, l.start_ps, l.end_ps});
      trace->finish();
      trace_out->commit();
    });
  }
  if (stats_out) {
    commit([&] {
      nlohmann::json j = to_json(r.stats);
      j["clock_freq_ghz"] = spec.config.clock_freq_ghz;
      stats_out->stream() << dump(j, 2) << "\n";
      stats_out->commit();
    });
  }
  return r;
}

namespace {

const char* intern(const std::string& s) {
  static std::unordered_set<std::string> pool;
  return pool.insert(s).first->c_str();
}


nlohmann::json record_json(const OpRecord& r) {
  return {{"component", to_string(r.component)},
          {"kind", to_string(r.kind)},
          {"cmd_id", r.cmd_id},
          {"cmd_type", r.cmd_type},
          {"op", r.op},
          {"tile", r.tile},
          {"start_ps", r.start_ps},
          {"end_ps", r.end_ps},
          {"bytes", r.bytes},
          {"elements", r.elements},
          {"logical_bytes", r.logical_bytes},
          {"dispatch_cycles_exact", r.dispatch_cycles_exact},
          {"dispatch_cycles_charged", r.dispatch_cycles_charged}};
}

OpRecord record_from_json(const nlohmann::json& j) {
  OpRecord r;
  const std::string comp = j.at("component"), kind = j.at("kind");
  for (int c = 0; c < kNumComponents; ++c)
    if (comp == to_string(Component(c))) r.component = Component(c);
  for (int k = 0; k <= int(RecordKind::kMath); ++k)
    if (kind == to_string(RecordKind(k))) r.kind = RecordKind(k);
  r.cmd_id = j.at("cmd_id");
  r.cmd_type = intern(j.at("cmd_type"));
  r.op = intern(j.at("op"));
  r.tile = j.at("tile");
  r.start_ps = j.at("start_ps");
  r.end_ps = j.at("end_ps");
  r.bytes = j.at("bytes");
  r.elements = j.at("elements");
  r.logical_bytes = j.at("logical_bytes");
  r.dispatch_cycles_exact = j.at("dispatch_cycles_exact");
  r.dispatch_cycles_charged = j.at("dispatch_cycles_charged");
  return r;
}

nlohmann::json busy_json(const uint64_t (&busy)[kNumComponents]) {
  nlohmann::json j;
  for (int c = 0; c < kNumComponents; ++c) j[to_string(Component(c))] = busy[c];
  return j;
}

nlohmann::json metrics_json(const std::vector<std::pair<std::string, double>>& m) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& [name, value] : m) j.push_back({name, value});
  return j;
}

}  // namespace

nlohmann::json to_json(const RunResult& r) {
  nlohmann::json j;
  j["ok"] = r.ok;
  j["error"] = r.error;
  j["end_ps"] = r.end_ps;
  j["data_bytes"] = r.data_bytes;
  j["sim_wall_seconds"] = r.sim_wall_seconds;
  j["peak_rss_kb"] = r.peak_rss_kb;
  j["records_by_component"] = busy_json(r.records_by_component);
  j["latency_ps"] = r.latency_ps();
  j["busy_ps"] = busy_json(r.busy_ps);
  j["launches"] = nlohmann::json::array();
  for (const LaunchResult& l : r.launches) {
    nlohmann::json by_type;
    for (int t = 0; t < kNumCommandTypes; ++t) by_type[command_type_name(t)] = l.commands_by_type[t];
    j["launches"].push_back({{"kernel", l.kernel},
                             {"start_ps", l.start_ps},
                             {"end_ps", l.end_ps},
                             {"latency_ps", l.latency_ps()},
                             {"commands", l.commands},
                             {"commands_by_type", by_type},
                             {"logical_bytes", l.logical_bytes},
                             {"dispatch_cycles_exact", l.dispatch_cycles_exact},
                             {"dispatch_cycles_charged", l.dispatch_cycles_charged},
                             {"dispatch_ps", l.dispatch_ps},
                             {"stall_ps", l.stall_ps},
                             {"cpu_cycles_ps", l.cpu_cycles_ps},
                             {"busy_ps", busy_json(l.busy_ps)},
                             {"error", l.error},
                             {"metrics", metrics_json(l.metrics)}});
  }
  j["records"] = nlohmann::json::array();
  for (const OpRecord& rec : r.records) j["records"].push_back(record_json(rec));
  j["occupancy"] = nlohmann::json::array();
  for (const CounterSample& s : r.occupancy) j["occupancy"].push_back({s.time_ps, s.value});
  j["stats"] = to_json(r.stats);
  return j;
}

RunResult run_result_from_json(const nlohmann::json& j) {
  RunResult r;
  r.ok = j.at("ok");
  r.error = j.at("error");
  r.end_ps = j.at("end_ps");
  r.data_bytes = j.at("data_bytes");
  r.sim_wall_seconds = j.at("sim_wall_seconds");
  r.peak_rss_kb = j.at("peak_rss_kb");
  for (int c = 0; c < kNumComponents; ++c) {
    r.records_by_component[c] = j.at("records_by_component").at(to_string(Component(c)));
  }
  for (int c = 0; c < kNumComponents; ++c) r.busy_ps[c] = j.at("busy_ps").at(to_string(Component(c)));
  for (const auto& jl : j.at("launches")) {
    LaunchResult l;
    l.kernel = jl.at("kernel");
    l.start_ps = jl.at("start_ps");
    l.end_ps = jl.at("end_ps");
    l.commands = jl.at("commands");
    for (int t = 0; t < kNumCommandTypes; ++t) {
      l.commands_by_type[t] = jl.at("commands_by_type").at(command_type_name(t));
    }
    l.logical_bytes = jl.at("logical_bytes");
    l.dispatch_cycles_exact = jl.at("dispatch_cycles_exact");
    l.dispatch_cycles_charged = jl.at("dispatch_cycles_charged");
    l.dispatch_ps = jl.at("dispatch_ps");
    l.stall_ps = jl.at("stall_ps");
    l.cpu_cycles_ps = jl.at("cpu_cycles_ps");
    for (int c = 0; c < kNumComponents; ++c) l.busy_ps[c] = jl.at("busy_ps").at(to_string(Component(c)));
    l.error = jl.at("error");
    for (const auto& m : jl.at("metrics")) l.metrics.emplace_back(m.at(0), m.at(1));
    r.launches.push_back(std::move(l));
  }
  for (const auto& jr : j.at("records")) r.records.push_back(record_from_json(jr));
  for (const auto& js : j.at("occupancy")) r.occupancy.push_back({js.at(0), js.at(1)});
  if (j.contains("stats")) r.stats = run_stats_from_json(j.at("stats"));
  return r;
}

// --- child processes ------------------------------------------------------
//
// The parent forwards SIGINT, SIGTERM and SIGHUP to its children, reaps them
// and exits 128 + signal; the children remove their pending output files
// (never a half-written file under a final name) and die with the parent
// (PR_SET_PDEATHSIG). A child that is stopped (SIGSTOP) or runs past its
// timeout is ended, and its run fails with a message saying why.

namespace {

using Clock = std::chrono::steady_clock;

const int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP};

// Live children's pids, in fixed storage that signal handlers can read.
std::atomic<pid_t> g_children[kMaxJobs];

// Signals blocked while the child table changes, so that a handler never
// forwards a signal to a pid that was reaped and reused.
class BlockSignals {
 public:
  BlockSignals() {
    sigset_t set;
    sigemptyset(&set);
    for (int sig : kForwardedSignals) sigaddset(&set, sig);
    sigprocmask(SIG_BLOCK, &set, &old_);
  }
  ~BlockSignals() { sigprocmask(SIG_SETMASK, &old_, nullptr); }
  const sigset_t& old() const { return old_; }

 private:
  sigset_t old_;
};

void sleep_ms(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, nullptr);
}

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

struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::string data;   // 'R' + result, or 'E' + the exception's message
  std::string error;  // why there is no result
  bool reaped = false;
  int status = 0;
  double timeout_s = 0;
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

// The child: runs `produce`, sends its result and _exits whatever happens,
// so no exception unwinds into the parent's code.
[[noreturn]] void child_main(int fd, const std::function<std::string()>& produce, pid_t parent,
                             const sigset_t& mask) {
  forget_pending_outputs();  // the parent's temporaries are not ours
  for (auto& c : g_children) c.store(0);
  install(on_child_signal);
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent) _exit(4);  // the parent died before prctl
  sigprocmask(SIG_SETMASK, &mask, nullptr);
  try {
    const std::string out = produce();
    write_all(fd, "R", 1);
    write_all(fd, out.data(), out.size());
  } catch (const std::exception& e) {
    write_all(fd, "E", 1);
    write_all(fd, e.what(), std::strlen(e.what()));
  } catch (...) {
    const char msg[] = "Eunknown exception";
    write_all(fd, msg, sizeof msg - 1);
  }
  close(fd);
  std::fflush(nullptr);
  _exit(0);
}

Child start_child(const std::function<std::string()>& produce, double timeout_s) {
  Child c;
  c.timeout_s = timeout_s;
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
  for (auto& slot : g_children) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, c.pid)) break;
  }
  c.fd = fds[0];
  c.deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
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
    for (auto& slot : g_children) {
      pid_t p = c.pid;
      if (slot.compare_exchange_strong(p, 0)) break;
    }
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

// Reads what is available; false at end of stream.
bool read_some(Child& c) {
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = read(c.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    c.data.append(buf, size_t(n));
    return true;
  }
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

// Checks a running child between reads: its timeout, and whether it was
// stopped. True when it was ended (c.error says why).
bool check_child(Child& c) {
  if (c.timeout_s > 0 && Clock::now() >= c.deadline) {
    end_child(c);
    c.error = "timed out after " + seconds_text(c.timeout_s) + " s";
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

// After the end of the child's stream: reaps it. Its result in `payload`, or
// the reason there is none in `error`.
void finish(Child& c, std::string& payload, std::string& error) {
  if (!c.error.empty()) {
    error = c.error;
  } else {
    while (!c.reaped) wait_child(c, 0);
    const int status = c.status;
    if (WIFSIGNALED(status)) {
      error = "run crashed: " + std::string(strsignal(WTERMSIG(status)));
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || c.data.empty()) {
      error = "run ended without a result (exit status " +
              std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")";
    } else if (c.data[0] == 'E') {
      error = c.data.substr(1);
    } else {
      payload = c.data.substr(1);
    }
  }
  if (c.fd >= 0) close(c.fd);
  c.fd = -1;
}

struct Outcome {
  std::string payload, error;
};

// Runs every job in a child, up to `jobs` at once; their outcomes in order.
std::vector<Outcome> run_children(const std::vector<std::function<std::string()>>& produce,
                                  const std::vector<double>& timeouts, int jobs,
                                  const std::function<void(size_t, size_t)>& on_done) {
  std::vector<Outcome> out(produce.size());
  std::vector<std::pair<size_t, Child>> running;
  size_t next = 0, done = 0;
  jobs = std::clamp(jobs, 1, kMaxJobs);
  auto complete = [&](size_t i, Child& c) {
    finish(c, out[i].payload, out[i].error);
    ++done;
    if (on_done) on_done(done, produce.size());
  };
  while (done < produce.size()) {
    while (running.size() < size_t(jobs) && next < produce.size()) {
      Child c = start_child(produce[next], timeouts[next]);
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

RunResult result_of(const Outcome& o) {
  RunResult r;
  if (!o.error.empty()) {
    r.error = o.error;
    return r;
  }
  try {
    return run_result_from_json(nlohmann::json::parse(o.payload));
  } catch (const std::exception& e) {
    r.error = std::string("the run's result could not be read: ") + e.what();
    return r;
  }
}

std::function<std::string()> simulate(const RunSpec& spec) {
  return [&spec] { return dump(to_json(run_in_process(spec))); };
}

}  // namespace

void install_interrupt_handlers() { install(on_parent_signal); }

nlohmann::json run_function_isolated(const std::function<nlohmann::json()>& f) {
  const Outcome o = run_children({[&f] { return dump(f()); }}, {0.0}, 1, {}).at(0);
  if (!o.error.empty()) return nlohmann::json{{"error", o.error}};
  try {
    return nlohmann::json::parse(o.payload);
  } catch (const std::exception& e) {
    return nlohmann::json{{"error", std::string("the result could not be read: ") + e.what()}};
  }
}

RunResult run_isolated(const RunSpec& spec) { return run_many_isolated({spec}, 1).at(0); }

std::vector<RunResult> run_many_isolated(const std::vector<RunSpec>& specs, int jobs,
                                         const std::function<void(size_t, size_t)>& on_done) {
  std::vector<std::function<std::string()>> produce;
  std::vector<double> timeouts;
  for (const RunSpec& spec : specs) {
    produce.push_back(simulate(spec));
    timeouts.push_back(spec.timeout_s);
  }
  std::vector<RunResult> results;
  for (const Outcome& o : run_children(produce, timeouts, jobs, on_done)) results.push_back(result_of(o));
  return results;
}

}  // namespace kb
