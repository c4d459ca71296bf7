#include "tb/runner.h"

#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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

// Fails early (before simulating) when an output file cannot be written.
void check_writable(const std::string& path, const char* what) {
  if (path.empty()) return;
  std::ofstream probe(path, std::ios::binary);
  if (!probe) throw std::runtime_error(std::string("cannot write ") + what + " '" + path + "'");
}

void write_stats_file(const std::string& path, const RunStats& stats, const PeConfig& cfg) {
  nlohmann::json j = to_json(stats);
  j["clock_freq_ghz"] = cfg.clock_freq_ghz;
  std::ofstream out(path, std::ios::binary);
  out << j.dump(2) << "\n";
  if (!out) throw std::runtime_error("cannot write statistics '" + path + "'");
}

}  // namespace

RunResult run_in_process(const RunSpec& spec) {
  RunResult r;
  // Declared before pe so that it outlives it: PE_CPU calls it until the end.
  std::unique_ptr<StreamRecorder> recorder;
  // The trace is written as the run goes (to a temporary file until commit).
  std::unique_ptr<OutputFile> trace_file;
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
    pe = std::make_unique<Pe>("pe", spec.config);
    // The records stay in memory only for the caller; otherwise they are
    // streamed (op log file, trace, summary) or just counted.
    pe->op_log().configure(spec.keep_records, spec.oplog_path);
    if (!spec.trace_path.empty()) {
      trace_file = std::make_unique<OutputFile>(spec.trace_path);
      trace = std::make_unique<ChromeTrace>(trace_file->stream());
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
    check_writable(spec.stats_path, "statistics");
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
    if (recorder) recorder->close();  // also after a failed kernel: its stream so far
    if (vcd) vcd->close();
  } catch (const std::exception& e) {
    r.error = e.what();
    return r;
  }
  pe->op_log().close();
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
  try {
    if (trace) {
      for (const LaunchResult& l : r.launches) trace->launch({l.kernel, l.start_ps, l.end_ps});
      trace->finish();
      trace_file->commit();
    }
    if (!spec.stats_path.empty()) write_stats_file(spec.stats_path, r.stats, spec.config);
  } catch (const std::exception& e) {
    if (r.ok) r.error = e.what();
    r.ok = false;
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

namespace {

struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::string data;
  std::string error;  // fork/pipe failure
};

// Forks a child that simulates `spec` and writes its result as JSON to a pipe.
Child start_child(const std::function<std::string()>& produce) {
  Child c;
  int fds[2];
  if (pipe(fds) != 0) {
    c.error = std::string("pipe: ") + std::strerror(errno);
    return c;
  }
  std::fflush(nullptr);
  c.pid = fork();
  if (c.pid < 0) {
    c.error = std::string("fork: ") + std::strerror(errno);
    close(fds[0]);
    close(fds[1]);
    return c;
  }
  if (c.pid == 0) {  // child: simulate, send the result, leave without cleanup
    close(fds[0]);
    const std::string out = produce();
    size_t off = 0;
    while (off < out.size()) {
      const ssize_t n = write(fds[1], out.data() + off, out.size() - off);
      if (n <= 0) _exit(3);
      off += size_t(n);
    }
    close(fds[1]);
    std::fflush(nullptr);
    _exit(0);
  }
  close(fds[1]);
  c.fd = fds[0];
  return c;
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

// Waits for the child; its output, or the reason there is none in `error`.
std::string reap_child(Child& c, std::string& error) {
  if (!c.error.empty()) {
    error = c.error;
    return "";
  }
  close(c.fd);
  int status = 0;
  while (waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status) || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || c.data.empty()) {
    error = WIFSIGNALED(status)
                ? "run crashed: " + std::string(strsignal(WTERMSIG(status)))
                : "run ended without a result (exit status " +
                      std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")";
    return "";
  }
  return std::move(c.data);
}

RunResult finish_child(Child& c) {
  RunResult r;
  const std::string data = reap_child(c, r.error);
  return r.error.empty() ? run_result_from_json(nlohmann::json::parse(data)) : r;
}

std::function<std::string()> simulate(const RunSpec& spec) {
  return [&spec] { return to_json(run_in_process(spec)).dump(); };
}

}  // namespace

nlohmann::json run_function_isolated(const std::function<nlohmann::json()>& f) {
  Child c = start_child([&f] { return f().dump(); });
  if (c.error.empty()) {
    while (read_some(c)) {
    }
  }
  std::string error;
  const std::string data = reap_child(c, error);
  return error.empty() ? nlohmann::json::parse(data) : nlohmann::json{{"error", error}};
}

RunResult run_isolated(const RunSpec& spec) {
  Child c = start_child(simulate(spec));
  if (c.error.empty()) {
    while (read_some(c)) {
    }
  }
  return finish_child(c);
}

std::vector<RunResult> run_many_isolated(const std::vector<RunSpec>& specs, int jobs,
                                         const std::function<void(size_t, size_t)>& on_done) {
  std::vector<RunResult> results(specs.size());
  std::vector<std::pair<size_t, Child>> running;
  size_t next = 0, done = 0;
  jobs = std::max(jobs, 1);
  while (done < specs.size()) {
    while (running.size() < size_t(jobs) && next < specs.size()) {
      running.emplace_back(next, start_child(simulate(specs[next])));
      ++next;
    }
    std::vector<pollfd> fds;
    for (auto& [i, c] : running) fds.push_back({c.error.empty() ? c.fd : -1, POLLIN, 0});
    bool failed_start = false;
    for (auto& [i, c] : running) failed_start |= !c.error.empty();
    if (!failed_start && poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) break;
    for (size_t k = 0; k < running.size();) {
      auto& [i, c] = running[k];
      const bool finished = !c.error.empty() || ((fds[k].revents & (POLLIN | POLLHUP | POLLERR)) && !read_some(c));
      if (!finished) {
        ++k;
        continue;
      }
      results[i] = finish_child(c);
      ++done;
      if (on_done) on_done(done, specs.size());
      running.erase(running.begin() + long(k));
      fds.erase(fds.begin() + long(k));
    }
  }
  return results;
}

}  // namespace kb
