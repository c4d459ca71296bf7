#include "tb/run/runner.h"

#include "models/top/deadlock.h"

#include <memory>

#include <systemc>

#include "models/pe/pe.h"
#include "models/top/pe_top.h"
#include "models/trace/chrome_trace.h"
#include "models/trace/counter_probe.h"
#include "models/trace/schema_version.h"
#include "models/trace/vcd_trace.h"
#include "models/util/output_file.h"
#include "tb/replay/command_stream.h"
#include "tb/run/harness.h"
#include "tb/run/result_codec.h"

namespace kb {

uint64_t RunResult::latency_ps() const {
  uint64_t t = 0;
  for (const LaunchResult& l : launches) t += l.latency_ps();
  return t;
}

RunResult run_in_process(const RunSpec& spec) {
  RunResult r;
  std::unique_ptr<OutputFile> trace_out, stats_out;
  // Declared before pe so that it outlives it: PE_CPU calls it until the end.
  std::unique_ptr<StreamRecorder> recorder;
  // The trace is written as the run goes (to trace_out's temporary file).
  std::unique_ptr<ChromeTrace> trace;
  std::unique_ptr<PeProbes> probes;  // before top, whose PE_SCHEDULER writes to them
  std::unique_ptr<PeTop> top;
  Pe* pe = nullptr;
  // The summary statistics, computed as the run goes (constant memory).
  std::unique_ptr<StreamingStats> stats;
  std::unique_ptr<PeVcdTrace> vcd;
  prepare_run(spec.lookahead);
  try {
    // Before any sc_time exists (models/util/sim_time.h: figures are in ps
    // at any resolution).
    if (spec.time_resolution_fs != 1000) {
      sc_core::sc_set_time_resolution(double(spec.time_resolution_fs), sc_core::SC_FS);
    }
    trace_out = open_output(spec.trace_path, "trace");
    stats_out = open_output(spec.stats_path, "statistics");
    top = std::make_unique<PeTop>(spec.config);
    pe = &top->pe();
    // The records stay in memory only for the caller; otherwise they are
    // streamed (op log file, trace, summary) or just counted.
    pe->op_log().configure(spec.keep_records, spec.oplog_path);
    if (trace_out) {
      trace = std::make_unique<ChromeTrace>(trace_out->stream(), spec.trace_window);
      warn_on_large_trace(*trace, spec.trace_warn_bytes);
    }
    probes = std::make_unique<PeProbes>(std::vector<Pe*>{pe}, trace.get(), spec.keep_records);  // pid 1, "pe"
    if (spec.summary) {
      stats = std::make_unique<StreamingStats>(uint32_t(spec.config.scheduler.queue_depth));
      pe->op_log().set_stats(stats.get());
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
    r.sim_wall_seconds = simulate();
    r.end_ps = now_ps();  // before vcd->close(), which may advance 1 ps
    probes->flush();      // the last instant's records (a run stopped by an error)
  } catch (const std::exception& e) {
    r.error = e.what();
    return r;
  }
  r.launches = pe->pe_cpu.results();
  r.data_bytes = top->data_bytes();
  r.peak_rss_kb = peak_rss_kb();
  for (int c = 0; c < kNumComponents; ++c) r.records_by_component[c] = pe->op_log().count(Component(c));
  for (int c = 0; c < kNumComponents; ++c) r.busy_ps[c] = pe->op_log().busy_ps(Component(c));
  const std::vector<OpRecord>& records = pe->op_log().records();
  if (stats) r.stats = stats->finish(r.launches);
  if (spec.keep_records) {
    r.records = records;
    r.occupancy = probes->occupancy(0);
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
    if (std::string left = undelivered_messages({pe}); !left.empty()) {
      r.ok = false;
      r.error = std::move(left);
    }
  }
  if (r.ok && r.launches.size() != spec.launches.size()) {
    r.ok = false;
    r.error = "simulation ended before every kernel launch completed";
  }
  // Each output on its own, so one failing does not lose the others.
  auto commit = [&r](const std::function<void()>& write) { commit_output(r.ok, r.error, write); };
  commit([&] { pe->op_log().close(); });
  if (recorder) commit([&] { recorder->close(); });
  if (vcd) commit([&] { vcd->close(); });
  if (trace_out) {
    commit([&] {
      for (const LaunchResult& l : r.launches) probes->process(0)->launch({l.kernel, l.start_ps, l.end_ps});
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
  return [&spec](ResultWriter& out) { write_run_result(out, run_in_process(spec)); };
}

// The runs of `specs`, by pointer: a RunSpec holds every launch's kernel,
// which is not copied.
std::vector<RunResult> run_specs(const std::vector<const RunSpec*>& specs, int jobs,
                                 const std::function<void(size_t, size_t)>& on_done) {
  std::vector<Producer> produce;
  std::vector<ChildTimeout> timeouts;
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
