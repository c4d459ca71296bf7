#include "tb/run/mesh_run.h"

#include <algorithm>
#include <memory>

#include "models/mem/sparse_memory.h"
#include "models/top/deadlock.h"
#include "models/top/memory_estimate.h"
#include "models/top/mesh_top.h"
#include "models/top/pe_top.h"
#include "models/trace/chrome_trace.h"
#include "models/trace/counter_probe.h"
#include "models/trace/schema_version.h"
#include "models/trace/vcd_trace.h"
#include "models/util/output_file.h"
#include "models/util/sim_time.h"
#include "tb/run/harness.h"
#include "tb/run/isolated.h"
#include "tb/run/memory_limit.h"
#include "tb/run/mesh_op_log.h"

namespace kb {

MeshRunResult run_mesh_in_process(const MeshRunSpec& spec) {
  MeshRunResult r;
  const TopologyConfig& topo = spec.config.topology;
  r.mesh_h = uint32_t(topo.mesh.h);
  r.mesh_w = uint32_t(topo.mesh.w);
  r.pes_per_cube = uint32_t(topo.cube.pes);
  std::unique_ptr<OutputFile> trace_out, oplog_out, stats_out;
  std::unique_ptr<ChromeTrace> trace;
  // Per PE, in global order: its trace process and occupancy counter;
  // before top, whose PE_SCHEDULERs write to them.
  std::unique_ptr<PeProbes> probes;
  std::unique_ptr<MeshTop> top;
  std::unique_ptr<PeVcdTrace> vcd;
  std::unique_ptr<MeshOpLog> oplog;  // after top: it leaves the PEs' logs first
  std::vector<Pe*> launched;
  prepare_run(spec.lookahead);
  try {
    trace_out = open_output(spec.trace_path, "trace");
    oplog_out = open_output(spec.oplog_path, "op log");
    stats_out = open_output(spec.stats_path, "statistics");
    top = std::make_unique<MeshTop>(spec.config);
    if (trace_out) {
      trace = std::make_unique<ChromeTrace>(trace_out->stream(), spec.trace_window);
      warn_on_large_trace(*trace, spec.trace_warn_bytes);
    }
    std::vector<Pe*> every_pe;
    for (size_t g = 0; g < top->size(); ++g) {
      every_pe.push_back(&top->pe(g));
      every_pe.back()->op_log().configure(false, "");  // the records go to the mesh's op log, not kept
    }
    if (oplog_out || trace_out) {  // with a trace alone, to settle the logs as with an op log (mesh_op_log.h)
      std::vector<OpLog*> logs;
      std::vector<std::string> pe_names, link_names;
      for (Pe* pe : every_pe) {
        logs.push_back(&pe->op_log());
        pe_names.push_back(pe->name());
      }
      for (size_t i = 0; i < top->links(); ++i) link_names.push_back(top->link(i).name());
      oplog = std::make_unique<MeshOpLog>(oplog_out ? &oplog_out->stream() : nullptr, std::move(logs), std::move(pe_names),
                                          std::move(link_names));
    }
    // As a single-PE run's process: op log, occupancy counter, launches.
    probes = std::make_unique<PeProbes>(every_pe, trace.get(), false);
    // The links' process after the PEs', a track per
    // direction; a burst's slice is its time on the pipe (LinkRecord: the
    // bursts of one direction never overlap).
    TraceTrackProcess* trace_links = nullptr;
    if (trace && top->links() > 0) {
      std::vector<std::string> names;
      for (size_t i = 0; i < top->links(); ++i) names.push_back(top->link(i).name());
      trace_links = &trace->add_track_process("links", names);
    }
    if (oplog || trace_links) {
      MeshOpLog* log = oplog.get();
      for (size_t i = 0; i < top->links(); ++i) {
        top->link(i).on_record([log, trace_links, i](const LinkRecord& lr) {
          if (trace_links) {
            // Booked ahead in gaps: held until time passes their start.
            trace_links->booked(i, "LINK " + std::to_string(lr.bytes) + " B", lr.start_ps, lr.end_ps, lr.bytes,
                                now_ps());
          }
          if (log) log->link_transfer(i, lr.start_ps, lr.end_ps, lr.bytes);
        });
      }
    }
    if (!spec.vcd_path.empty()) {
      for (size_t g = 0; g < top->size(); ++g) top->pe(g).enable_signals(true);
      std::vector<PeSignals> signals;
      for (size_t g = 0; g < top->size(); ++g) {
        signals.push_back(pe_signals(top->pe(g)));
        signals.back().optional_engines = true;  // busy_ipc: a mesh PE has PE_IPC
      }
      vcd = std::make_unique<PeVcdTrace>(signals, spec.vcd_path);
    }
    std::vector<uint32_t> pes = spec.pes;
    if (pes.empty()) {
      for (size_t g = 0; g < top->size(); ++g) pes.push_back(uint32_t(g));
    }
    for (uint32_t g : pes) {
      if (std::count(pes.begin(), pes.end(), g) > 1) {
        throw std::invalid_argument("PE " + std::to_string(g) + " is named twice in the launch set");
      }
      if (g >= top->size()) {
        throw std::invalid_argument("PE " + std::to_string(g) + " is not in the mesh (" +
                                    std::to_string(top->size()) + " PEs)");
      }
      launched.push_back(&top->pe(g));
      top->pe(g).launch(spec.kernel_name, spec.kernel);
    }
    r.sim_wall_seconds = simulate();
    probes->flush();
  } catch (const std::exception& e) {
    r.error = e.what();
    return r;
  }
  r.peak_rss_kb = peak_rss_kb();
  r.data_bytes = top->data_bytes();
  r.ok = true;
  bool first = true;
  std::vector<Pe*> all, blocked;
  for (size_t g = 0; g < top->size(); ++g) all.push_back(&top->pe(g));
  for (size_t g = 0; g < top->size(); ++g) {
    Pe& pe = top->pe(g);
    MeshPeResult p;
    p.global = uint32_t(g);
    p.name = pe.name();
    p.launched = std::find(launched.begin(), launched.end(), &pe) != launched.end();
    for (int c = 0; c < kNumComponents; ++c) p.busy_ps[c] = pe.op_log().busy_ps(Component(c));
    r.stages += pe.op_log().count() - pe.op_log().count(Component::kPeCpu);
    const auto& results = pe.pe_cpu.results();
    if (p.launched) {
      if (results.empty() || pe.pe_cpu.busy()) {
        blocked.push_back(&pe);
      } else {
        p.launch = results.back();
        if (!p.launch.error.empty() && r.ok) {
          r.ok = false;
          r.error = p.name + ": " + p.launch.error;
        }
        r.start_ps = first ? p.launch.start_ps : std::min(r.start_ps, p.launch.start_ps);
        r.end_ps = first ? p.launch.end_ps : std::max(r.end_ps, p.launch.end_ps);
        first = false;
        r.commands += p.launch.commands;
        r.dispatch_ps += p.launch.dispatch_ps;
        if (g == 0) r.metrics = p.launch.metrics;
      }
    }
    r.pes.push_back(std::move(p));
  }
  if (!blocked.empty()) {
    // A failed launch (its error first) can leave its peers waiting. Every
    // PE is passed: the report names receivers that are not blocked too.
    const std::string report = deadlock_report(all);
    r.error = r.ok ? report : r.error + "; then " + report;
    r.ok = false;
  }
  if (r.ok) {
    if (std::string left = undelivered_messages(all); !left.empty()) {
      r.ok = false;
      r.error = std::move(left);
    }
  }
  for (size_t i = 0; i < top->links(); ++i) {
    const UcieLink& link = top->link(i);
    MeshLinkResult l;
    l.name = link.name();
    l.bytes = link.bytes();
    l.transactions = link.transactions();
    l.busy_ps = link.busy_ps();
    r.links.push_back(l);
  }
  auto commit = [&r](const std::function<void()>& write) { commit_output(r.ok, r.error, write); };
  if (oplog_out) {
    commit([&] {
      oplog->finish();
      oplog_out->commit();
    });
  }
  if (vcd) commit([&] { vcd->close(); });
  if (trace) {
    commit([&] {
      for (size_t g = 0; g < top->size(); ++g) {
        top->pe(g).op_log().close();
        for (const LaunchResult& l : top->pe(g).pe_cpu.results()) probes->process(g)->launch({l.kernel, l.start_ps, l.end_ps});
      }
      trace->finish();
      trace_out->commit();
    });
  }
  if (stats_out) {
    commit([&] {
      nlohmann::json j = to_json(r);
      j["schema_version"] = kSchemaVersion;
      j["clock_freq_ghz"] = spec.config.clock_freq_ghz;
      j.erase("sim_wall_seconds");  // statistics of the model, not of the host
      j.erase("peak_rss_kb");
      stats_out->stream() << j.dump(2) << "\n";
      stats_out->commit();
    });
  }
  return r;
}

MeshRunResult run_mesh_isolated(const MeshRunSpec& spec) {
  const uint64_t launched = spec.pes.empty() ? spec.config.topology.pes() : spec.pes.size();
  const MemoryEstimate estimate = estimate_mesh_memory(spec.config, launched);
  const MemoryLimit limit = memory_limit(spec.max_memory_bytes);
  check_fits(estimate, limit);
  // What the model leaves under the limit, for data mode's pages.
  uint64_t storage_cap = limit.bytes - estimate.resident_bytes;
  if (limit.address_space) storage_cap = std::min(storage_cap, *limit.address_space - estimate.address_space_bytes);
  storage_cap = std::max<uint64_t>(storage_cap, 1);
  double budget = spec.timeout_s;
  if (spec.timeout_s > 0 && spec.deadline) {
    budget = std::chrono::duration<double>(*spec.deadline - std::chrono::steady_clock::now()).count();
    if (budget <= 0) {  // the bench's earlier runs took the whole limit
      MeshRunResult r;
      r.error = "timed out after " + seconds_text(spec.timeout_s) + " s";
      return r;
    }
  }
  // The child is given what is left of the limit; its message names the limit.
  return mesh_run_result_from_json(run_function_isolated(
      [&spec, storage_cap] {
        SparseMemory::set_storage_limit(storage_cap);
        return to_json(run_mesh_in_process(spec));
      },
      ChildTimeout::remaining(budget, spec.timeout_s)));
}

}  // namespace kb
