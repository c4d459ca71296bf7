#include "tb/run/runner.h"

#include "models/top/deadlock.h"

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
#include "models/top/pe_top.h"
#include "models/trace/chrome_trace.h"
#include "models/trace/counter_probe.h"
#include "models/trace/schema_version.h"
#include "models/trace/vcd_trace.h"
#include "models/util/asan_stack.h"  // KB_ASAN
#include "models/util/instant_calendar.h"
#include "models/util/output_file.h"
#include "tb/replay/command_stream.h"

#if defined(KB_ASAN)
#include <pthread.h>
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace kb {

uint64_t RunResult::latency_ps() const {
  uint64_t t = 0;
  for (const LaunchResult& l : launches) t += l.latency_ps();
  return t;
}

namespace {

// JSON text for outputs and the fork boundary: invalid UTF-8 (a kernel or
// tensor name is any bytes) is replaced, never thrown on.
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
  TraceProcess* trace_pe = nullptr;  // the PE's process in it
  // The queue occupancy's history (trace counter, kept records); declared
  // before top, whose PE_SCHEDULER writes to it.
  std::unique_ptr<CounterHistory> occupancy;
  std::unique_ptr<PeTop> top;
  Pe* pe = nullptr;
  // The summary statistics, computed as the run goes (constant memory).
  std::unique_ptr<StreamingStats> stats;
  std::unique_ptr<PeVcdTrace> vcd;
  // SystemC's info messages would mix into the reports. A kernel error's
  // report is not displayed with SystemC's default actions for an error
  // (SC_LOG | SC_CACHE_REPORT | SC_THROW; PE_CPU catches the thrown
  // report): the result carries the message, which the caller prints.
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  try {
    // Before any sc_time exists (models/util/sim_time.h: figures are in ps
    // at any resolution).
    if (spec.time_resolution_fs != 1000) {
      sc_core::sc_set_time_resolution(double(spec.time_resolution_fs), sc_core::SC_FS);
    }
    if (!spec.trace_path.empty()) trace_out = std::make_unique<OutputFile>(spec.trace_path, "trace");
    if (!spec.stats_path.empty()) stats_out = std::make_unique<OutputFile>(spec.stats_path, "statistics");
    InstantCalendar::set_lookahead(spec.lookahead);  // before the calendar's first sweep
    top = std::make_unique<PeTop>(spec.config);
    pe = &top->pe();
    // The records stay in memory only for the caller; otherwise they are
    // streamed (op log file, trace, summary) or just counted.
    pe->op_log().configure(spec.keep_records, spec.oplog_path);
    if (!spec.trace_path.empty()) {
      trace = std::make_unique<ChromeTrace>(trace_out->stream(), spec.trace_window);
      trace_pe = &trace->add_process(pe->name());  // pid 1, "pe"
      pe->op_log().set_trace(trace_pe);
    }
    if (spec.summary) {
      stats = std::make_unique<StreamingStats>(uint32_t(spec.config.scheduler.queue_depth));
      pe->op_log().set_stats(stats.get());
    }
    if (!spec.trace_path.empty() || spec.keep_records) {
      occupancy = std::make_unique<CounterHistory>(
          uint32_t(pe->pe_scheduler.occupancy()), spec.keep_records,
          trace_pe ? CounterHistory::Sink([t = trace_pe](const CounterSample& s) { t->counter(s); })
                   : CounterHistory::Sink());
      pe->pe_scheduler.set_occupancy_history(occupancy.get());
    }
    // Signals cost a process activation per change: only for waveforms.
    pe->enable_signals(!spec.vcd_path.empty());
    if (!spec.vcd_path.empty()) {
      vcd = std::make_unique<PeVcdTrace>(pe_signals(*pe), spec.vcd_path);
    }
    if (!spec.record_path.empty()) {
      recorder = std::make_unique<StreamRecorder>(spec.record_path);
      pe->pe_cpu.set_observer(recorder.get());
    }
    for (const auto& [name, kernel] : spec.launches) pe->pe_cpu.launch(name, kernel);
    const auto wall_start = std::chrono::steady_clock::now();
    sc_core::sc_start();
    back_on_main_stack();
    r.sim_wall_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    r.end_ps = now_ps();  // before vcd->close(), which may advance 1 ps
    pe->op_log().flush();  // the last instant's records (a run stopped by an error)
    if (occupancy) occupancy->flush();
  } catch (const std::exception& e) {
    r.error = e.what();
    return r;
  }
  r.launches = pe->pe_cpu.results();
  r.data_bytes = top->data_bytes();
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
  if (r.ok && pe->pe_cpu.busy()) {
    // Nothing left to run and the launch not finished: who waits for what
    // (a recv with no send, a send to a full queue).
    r.ok = false;
    r.error = deadlock_report({pe});
  }
  if (r.ok) {
    if (const std::string left = pe->pe_ipc.undelivered(); !left.empty()) {
      r.ok = false;
      r.error = std::string(pe->name()) + " holds messages no recv took: " + left;
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
      for (const LaunchResult& l : r.launches) trace_pe->launch({l.kernel, l.start_ps, l.end_ps});
      trace->finish();
      trace_out->commit();
    });
  }
  if (stats_out) {
    commit([&] {
      // A window at a time: as dump(2) of to_json(r.stats) + clock_freq_ghz.
      nlohmann::json j = to_json_without_launches(r.stats);
      j["clock_freq_ghz"] = spec.config.clock_freq_ghz;
      j["schema_version"] = kSchemaVersion;  // models/trace/schema_version.h
      write_json(stats_out->stream(), j, {{"/launches", launches_json(r.stats)}});
      stats_out->stream() << "\n";
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
  for (int k = 0; k < kNumRecordKinds; ++k)
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
  for (int c = 0; c < kNumComponents; ++c) {
    if (is_optional(Component(c)) && busy[c] == 0) continue;  // component_table.h
    j[to_string(Component(c))] = busy[c];
  }
  return j;
}

nlohmann::json metrics_json(const std::vector<std::pair<std::string, double>>& m) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& [name, value] : m) j.push_back({name, value});
  return j;
}

nlohmann::json launch_json(const LaunchResult& l) {
  nlohmann::json by_type;
  for (int t = 0; t < kNumCommandTypes; ++t) {
    if (is_optional_command_type(t) && l.commands_by_type[t] == 0) continue;
    by_type[command_type_name(t)] = l.commands_by_type[t];
  }
  return {{"kernel", l.kernel},
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
          {"metrics", metrics_json(l.metrics)}};
}

LaunchResult launch_from_json(const nlohmann::json& jl) {
  LaunchResult l;
  l.kernel = jl.at("kernel");
  l.start_ps = jl.at("start_ps");
  l.end_ps = jl.at("end_ps");
  l.commands = jl.at("commands");
  for (int t = 0; t < kNumCommandTypes; ++t) {
    l.commands_by_type[t] = jl.at("commands_by_type").value(command_type_name(t), uint64_t(0));
  }
  l.logical_bytes = jl.at("logical_bytes");
  l.dispatch_cycles_exact = jl.at("dispatch_cycles_exact");
  l.dispatch_cycles_charged = jl.at("dispatch_cycles_charged");
  l.dispatch_ps = jl.at("dispatch_ps");
  l.stall_ps = jl.at("stall_ps");
  l.cpu_cycles_ps = jl.at("cpu_cycles_ps");
  for (int c = 0; c < kNumComponents; ++c) l.busy_ps[c] = jl.at("busy_ps").value(to_string(Component(c)), uint64_t(0));
  l.error = jl.at("error");
  for (const auto& m : jl.at("metrics")) l.metrics.emplace_back(m.at(0), m.at(1));
  return l;
}

nlohmann::json sample_json(const CounterSample& s) { return {s.time_ps, s.value}; }
CounterSample sample_from_json(const nlohmann::json& j) { return {j.at(0), j.at(1)}; }

// The per-launch lines across the fork ('L', 'W') are flat arrays of the
// structs' fields in order: a keyed object per launch made the transport of
// 100 k launches spend most of its time on keys.
class Fields {
 public:
  explicit Fields(const nlohmann::json& j) : j_(j) {
    if (!j.is_array()) throw std::runtime_error("expected an array of fields");
  }
  const nlohmann::json& next() { return j_.at(i_++); }
  void end() const {
    if (i_ != j_.size()) {
      throw std::runtime_error(std::to_string(j_.size()) + " fields where " + std::to_string(i_) +
                               " were expected");
    }
  }

 private:
  const nlohmann::json& j_;
  size_t i_ = 0;
};

nlohmann::json launch_fields(const LaunchResult& l) {
  nlohmann::json a = {l.kernel, l.start_ps, l.end_ps, l.commands};
  for (uint64_t n : l.commands_by_type) a.push_back(n);
  for (const nlohmann::json& v : {nlohmann::json(l.logical_bytes), nlohmann::json(l.dispatch_cycles_exact),
                                  nlohmann::json(l.dispatch_cycles_charged), nlohmann::json(l.dispatch_ps),
                                  nlohmann::json(l.stall_ps), nlohmann::json(l.cpu_cycles_ps)})
    a.push_back(v);
  for (uint64_t b : l.busy_ps) a.push_back(b);
  a.push_back(l.error);
  a.push_back(metrics_json(l.metrics));
  return a;
}

LaunchResult launch_from_fields(const nlohmann::json& j) {
  Fields f(j);
  LaunchResult l;
  l.kernel = f.next();
  l.start_ps = f.next();
  l.end_ps = f.next();
  l.commands = f.next();
  for (uint64_t& n : l.commands_by_type) n = f.next();
  l.logical_bytes = f.next();
  l.dispatch_cycles_exact = f.next();
  l.dispatch_cycles_charged = f.next();
  l.dispatch_ps = f.next();
  l.stall_ps = f.next();
  l.cpu_cycles_ps = f.next();
  for (uint64_t& b : l.busy_ps) b = f.next();
  l.error = f.next();
  for (const auto& m : f.next()) l.metrics.emplace_back(m.at(0), m.at(1));
  f.end();
  return l;
}

nlohmann::json window_fields(const WindowStats& w) {
  nlohmann::json a = {w.name, w.start_ps, w.end_ps};
  for (const ComponentStats& c : w.components) {
    a.push_back(c.busy_ps);
    a.push_back(c.utilisation);
    a.push_back(c.records);
  }
  for (const KindStats& k : w.kinds) {
    for (uint64_t v : {k.count, k.busy_ps, k.bytes, k.elements}) a.push_back(v);
  }
  for (const TypeStats& t : w.by_type) {
    a.push_back(t.commands);
    a.push_back(t.logical_bytes);
  }
  a.push_back(w.commands);
  a.push_back(w.logical_bytes);
  a.push_back(w.dispatch_cycles_exact);
  for (uint64_t v : {w.dispatch_cycles_charged, w.dispatch_ps, w.cpu_cycles_ps, w.stall_ps, w.stalls,
                     w.exposed_dispatch_ps, w.engines_idle_ps})
    a.push_back(v);
  a.push_back(w.occupancy_mean);
  a.push_back(w.occupancy_max);
  a.push_back(w.queue_full_ps);
  return a;
}

WindowStats window_from_fields(const nlohmann::json& j) {
  Fields f(j);
  WindowStats w;
  w.name = f.next();
  w.start_ps = f.next();
  w.end_ps = f.next();
  for (ComponentStats& c : w.components) {
    c.busy_ps = f.next();
    c.utilisation = f.next();
    c.records = f.next();
  }
  for (KindStats& k : w.kinds) {
    k.count = f.next();
    k.busy_ps = f.next();
    k.bytes = f.next();
    k.elements = f.next();
  }
  for (TypeStats& t : w.by_type) {
    t.commands = f.next();
    t.logical_bytes = f.next();
  }
  w.commands = f.next();
  w.logical_bytes = f.next();
  w.dispatch_cycles_exact = f.next();
  w.dispatch_cycles_charged = f.next();
  w.dispatch_ps = f.next();
  w.cpu_cycles_ps = f.next();
  w.stall_ps = f.next();
  w.stalls = f.next();
  w.exposed_dispatch_ps = f.next();
  w.engines_idle_ps = f.next();
  w.occupancy_mean = f.next();
  w.occupancy_max = f.next();
  w.queue_full_ps = f.next();
  f.end();
  uint64_t busy[kNumComponents];
  for (int c = 0; c < kNumComponents; ++c) busy[c] = w.components[c].busy_ps;
  w.verdict = make_verdict(busy, w.span_ps());  // as finish_window (models/trace/stats.cpp)
  return w;
}

// The run's figures but not its per-launch, per-record or per-sample lists.
nlohmann::json header_json(const RunResult& r) {
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
  return j;
}

void header_from_json(const nlohmann::json& j, RunResult& r) {
  r.ok = j.at("ok");
  r.error = j.at("error");
  r.end_ps = j.at("end_ps");
  r.data_bytes = j.at("data_bytes");
  r.sim_wall_seconds = j.at("sim_wall_seconds");
  r.peak_rss_kb = j.at("peak_rss_kb");
  for (int c = 0; c < kNumComponents; ++c) {
    r.records_by_component[c] = j.at("records_by_component").value(to_string(Component(c)), uint64_t(0));
  }
  for (int c = 0; c < kNumComponents; ++c) r.busy_ps[c] = j.at("busy_ps").value(to_string(Component(c)), uint64_t(0));
}

}  // namespace

nlohmann::json to_json(const RunResult& r) {
  nlohmann::json j = header_json(r);
  j["launches"] = nlohmann::json::array();
  for (const LaunchResult& l : r.launches) j["launches"].push_back(launch_json(l));
  j["records"] = nlohmann::json::array();
  for (const OpRecord& rec : r.records) j["records"].push_back(record_json(rec));
  j["occupancy"] = nlohmann::json::array();
  for (const CounterSample& s : r.occupancy) j["occupancy"].push_back(sample_json(s));
  j["stats"] = to_json(r.stats);
  return j;
}

RunResult run_result_from_json(const nlohmann::json& j) {
  RunResult r;
  header_from_json(j, r);
  for (const auto& jl : j.at("launches")) r.launches.push_back(launch_from_json(jl));
  for (const auto& jr : j.at("records")) r.records.push_back(record_from_json(jr));
  for (const auto& js : j.at("occupancy")) r.occupancy.push_back(sample_from_json(js));
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

// What a child sends is a stream of lines, each a tag and compact JSON
// (compact JSON holds no raw line break), ending with 'Z'; or, at any
// point, 'E' and an exception's message up to the end of the stream. The
// parent reads lines as they arrive and builds the result from them, so
// neither side holds the whole result as text (100 k launches make a
// 220 MB document, 2.1 GB on each side).
class ResultReader {
 public:
  virtual ~ResultReader() = default;
  // One line (without its tag and line break). Throws when it cannot be read.
  virtual void line(char tag, std::string_view text) = 0;
  // After 'Z'. Throws when lines are missing.
  virtual void end() {}
};

class ResultWriter;
using Producer = std::function<void(ResultWriter&)>;

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

// The child's end of the pipe: whole lines, buffered.
class ResultWriter {
 public:
  explicit ResultWriter(int fd) : fd_(fd) {}
  void line(char tag, const nlohmann::json& j) {
    const std::string text = dump(j);  // first: if it throws, no part line is left
    buf_ += tag;
    buf_ += text;
    buf_ += '\n';
    if (buf_.size() >= (1u << 16)) flush();
  }
  void end() {
    buf_ += "Z\n";
    flush();
  }
  void flush() {
    write_all(fd_, buf_.data(), buf_.size());
    buf_.clear();
  }

 private:
  int fd_;
  std::string buf_;
};

// The child: runs `produce`, sends its result and _exits whatever happens,
// so no exception unwinds into the parent's code.
[[noreturn]] void child_main(int fd, const Producer& produce, pid_t parent, const sigset_t& mask) {
  forget_pending_outputs();  // the parent's temporaries are not ours
  for (auto& c : g_children) c.store(0);
  install(on_child_signal);
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

Child start_child(const Producer& produce, double timeout_s, std::unique_ptr<ResultReader> reader) {
  Child c;
  c.reader = std::move(reader);
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

// "SIGTERM (Terminated)"; "signal N" for a number without a name.
std::string signal_text(int sig) {
  const char* name = sigabbrev_np(sig);
  const char* what = strsignal(sig);
  return name ? "SIG" + std::string(name) + (what ? " (" + std::string(what) + ")" : "")
              : "signal " + std::to_string(sig);
}

// N when `exit_status` is 128 + N for a signal whose handler in the child
// exits so (on_child_signal), else 0.
int forwarded_signal_of(int exit_status) {
  for (int sig : kForwardedSignals)
    if (exit_status == 128 + sig) return sig;
  return 0;
}

struct Outcome {
  std::unique_ptr<ResultReader> reader;  // the result, when both errors are empty
  std::string error;       // no result: why
  std::string read_error;  // a result that could not be read: why
};

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

// Runs every job in a child, up to `jobs` at once, each read by a reader
// from make_reader; their outcomes in order.
std::vector<Outcome> run_children(const std::vector<Producer>& produce,
                                  const std::vector<double>& timeouts, int jobs,
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

// Builds a RunResult from the lines of simulate(): 'H' its header, then
// 'L' per launch (launch_fields), 'O' per op-log record, 'C' per occupancy
// sample, 'S' the statistics without their launches, 'W' per launch's
// statistics window (window_fields).
class RunResultReader : public ResultReader {
 public:
  void line(char tag, std::string_view text) override {
    const nlohmann::json j = nlohmann::json::parse(text);
    if (tag != 'H' && !header_) throw std::runtime_error("a result line before its header");
    switch (tag) {
      case 'H':
        header_from_json(j, r_);
        expected_[0] = j.at("launches");
        expected_[1] = j.at("records");
        expected_[2] = j.at("occupancy");
        expected_[3] = j.at("windows");
        // Room for exactly what is announced (no growth by doubling), within reason.
        r_.launches.reserve(std::min<size_t>(expected_[0], 1u << 24));
        r_.records.reserve(std::min<size_t>(expected_[1], 1u << 24));
        r_.occupancy.reserve(std::min<size_t>(expected_[2], 1u << 24));
        r_.stats.launches.reserve(std::min<size_t>(expected_[3], 1u << 24));
        header_ = true;
        break;
      case 'L':
        r_.launches.push_back(launch_from_fields(j));
        break;
      case 'O':
        r_.records.push_back(record_from_json(j));
        break;
      case 'C':
        r_.occupancy.push_back(sample_from_json(j));
        break;
      case 'S': {
        // Sent with no launches (write_result); the 'W' lines carry them.
        std::vector<WindowStats> windows = std::move(r_.stats.launches);
        r_.stats = run_stats_from_json(j);
        r_.stats.launches = std::move(windows);
        break;
      }
      case 'W':
        r_.stats.launches.push_back(window_from_fields(j));
        break;
      default:
        throw std::runtime_error(std::string("unknown line tag '") + tag + "'");
    }
  }
  void end() override {
    if (!header_) throw std::runtime_error("no header");
    const size_t got[] = {r_.launches.size(), r_.records.size(), r_.occupancy.size(),
                          r_.stats.launches.size()};
    const char* what[] = {"launches", "records", "occupancy samples", "statistics windows"};
    for (size_t i = 0; i < 4; ++i) {
      if (got[i] != expected_[i]) {
        throw std::runtime_error(std::to_string(got[i]) + " " + what[i] + " where the header announced " +
                                 std::to_string(expected_[i]));
      }
    }
  }
  RunResult take() { return std::move(r_); }

 private:
  RunResult r_;
  bool header_ = false;
  uint64_t expected_[4] = {};
};

void write_result(ResultWriter& out, const RunResult& r) {
  nlohmann::json h = header_json(r);
  h["launches"] = r.launches.size();
  h["records"] = r.records.size();
  h["occupancy"] = r.occupancy.size();
  h["windows"] = r.stats.launches.size();
  out.line('H', h);
  for (const LaunchResult& l : r.launches) out.line('L', launch_fields(l));
  for (const OpRecord& rec : r.records) out.line('O', record_json(rec));
  for (const CounterSample& s : r.occupancy) out.line('C', sample_json(s));
  nlohmann::json stats = to_json(RunStats{r.stats.queue_depth, r.stats.run, {}});
  out.line('S', stats);
  for (const WindowStats& w : r.stats.launches) out.line('W', window_fields(w));
}

RunResult result_of(Outcome& o) {
  RunResult r;
  if (!o.error.empty()) {
    r.error = o.error;
    return r;
  }
  if (!o.read_error.empty()) {
    r.error = "the run's result could not be read: " + o.read_error;
    return r;
  }
  return static_cast<RunResultReader&>(*o.reader).take();
}

Producer simulate(const RunSpec& spec) {
  return [&spec](ResultWriter& out) { write_result(out, run_in_process(spec)); };
}

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

void install_interrupt_handlers() { install(on_parent_signal); }

nlohmann::json run_function_isolated(const std::function<nlohmann::json()>& f) {
  Outcome o = std::move(run_children({[&f](ResultWriter& out) { out.line('R', f()); }}, {0.0}, 1,
                                     [] { return std::make_unique<JsonReader>(); }, {})
                            .at(0));
  if (!o.error.empty()) return nlohmann::json{{"error", o.error}};
  if (!o.read_error.empty()) {
    return nlohmann::json{{"error", std::string("the result could not be read: ") + o.read_error}};
  }
  return std::move(static_cast<JsonReader&>(*o.reader).j);
}

namespace {

// The runs of `specs`, by pointer: a RunSpec holds every launch's kernel,
// which is not copied.
std::vector<RunResult> run_specs(const std::vector<const RunSpec*>& specs, int jobs,
                                 const std::function<void(size_t, size_t)>& on_done) {
  std::vector<Producer> produce;
  std::vector<double> timeouts;
  for (const RunSpec* spec : specs) {
    produce.push_back(simulate(*spec));
    timeouts.push_back(spec->timeout_s);
  }
  std::vector<RunResult> results;
  results.reserve(specs.size());
  for (Outcome& o : run_children(produce, timeouts, jobs, [] { return std::make_unique<RunResultReader>(); },
                                 on_done)) {
    results.push_back(result_of(o));
  }
  return results;
}

}  // namespace

RunResult run_isolated(const RunSpec& spec) { return std::move(run_specs({&spec}, 1, {}).at(0)); }

std::vector<RunResult> run_many_isolated(const std::vector<RunSpec>& specs, int jobs,
                                         const std::function<void(size_t, size_t)>& on_done) {
  std::vector<const RunSpec*> pointers;
  for (const RunSpec& spec : specs) pointers.push_back(&spec);
  return run_specs(pointers, jobs, on_done);
}

}  // namespace kb
