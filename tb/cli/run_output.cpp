#include "tb/cli/run_output.h"

#include <iostream>
#include <stdexcept>

#include "tb/cli/cli_util.h"
#include "tb/run/report.h"

namespace kb::cli {

void Outputs::apply(RunSpec& spec) const {
  spec.trace_path = trace;
  spec.trace_window = trace_window;
  spec.vcd_path = vcd;
  spec.stats_path = stats;
  spec.summary = !no_summary || !stats.empty();
}

void add_output_options(CLI::App* sub, Outputs& o) {
  sub->add_option("--trace", o.trace,
                  "write a Chrome / Perfetto trace (JSON; open in ui.perfetto.dev or chrome://tracing)")
      ->type_name("FILE.json");
  // Parsed where the text enters: bad values exit 2 before any run.
  sub->add_option_function<std::string>(
         "--trace-window",
         [&o](const std::string& text) {
           try {
             o.trace_window = parse_trace_window(text);
           } catch (const std::invalid_argument& e) {
             throw CLI::ValidationError("--trace-window", "'" + shown(text) + "': " + e.what());
           }
         },
         "write only the trace events overlapping this span of simulated time (slices kept whole, "
         "process and thread names always): a whole number of ps or a number with a unit ps, ns, us, "
         "ms, s, e.g. 100us:250us; for runs whose whole trace is too large for a browser (README)")
      ->type_name("START:END")
      ->needs("--trace");
  sub->add_option("--vcd", o.vcd,
                  "write VCD waveforms (GTKWave): engine busy, queue occupancy, PE_CPU state, "
                  "descriptors written")
      ->type_name("FILE.vcd");
  sub->add_option("--stats", o.stats,
                  "write statistics as JSON: busy time and utilisation, commands and logical "
                  "bytes by type, dispatch, stall, CPU- or engine-bound verdict")
      ->type_name("FILE.json");
  sub->add_flag("--no-summary", o.no_summary,
                "leave the statistics summary out of the report (it is computed as the run goes, "
                "in constant memory; leaving it out makes long runs about 10-20% faster)");
}

void print_written(const std::string& oplog, const Outputs& outputs) {
  if (!oplog.empty()) std::cout << "op log written to " << oplog << "\n";
  if (!outputs.trace.empty()) std::cout << "trace written to " << outputs.trace << "\n";
  if (!outputs.vcd.empty()) std::cout << "VCD written to " << outputs.vcd << "\n";
  if (!outputs.stats.empty()) std::cout << "statistics written to " << outputs.stats << "\n";
}

int report_run(const std::string& title, const std::string& name, const RunResult& r, const PeConfig& cfg,
               const Bench* bench, const BenchParams* params, const std::string& oplog, OutputFile* json,
               const Outputs& outputs) {
  if (!r.ok) {
    std::cerr << "kernbench: " << title << " failed: " << terminal_safe(r.error, SIZE_MAX) << "\n";
    return kExitRunFailed;
  }
  if (bench && bench->report) bench->report(std::cout, *params, cfg, r);
  else print_run_report(std::cout, title, cfg, r);
  // The child wrote these and checked them: the run failed if one could not be.
  print_written(oplog, outputs);
  if (json) {
    // Written a launch at a time: as dump(j) of run_summary_json + "figures".
    write_run_summary_json(json->stream(), name, cfg, r,
                           bench ? bench_figures(*bench, *params, cfg, r) : nlohmann::json());
    json->stream() << "\n";
    json->commit();
  }
  return 0;
}

}  // namespace kb::cli
