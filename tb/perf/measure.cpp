#include "tb/perf/measure.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "tb/run/isolated.h"

namespace kb::perf_detail {

namespace {

// The ceiling: the cheapest loosely-timed transaction SystemC offers, one
// b_transport and one wait per command.
struct CeilingTarget : sc_core::sc_module {
  tlm_utils::simple_target_socket<CeilingTarget> in{"in"};
  explicit CeilingTarget(sc_core::sc_module_name n) : sc_module(n) {
    in.register_b_transport(this, &CeilingTarget::b_transport);
  }
  void b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
    delay += sc_core::sc_time(1, sc_core::SC_NS);
    p.set_response_status(tlm::TLM_OK_RESPONSE);
  }
};

struct CeilingInitiator : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<CeilingInitiator> out{"out"};
  uint64_t n;
  CeilingInitiator(sc_core::sc_module_name name, uint64_t count) : sc_module(name), n(count) {
    SC_HAS_PROCESS(CeilingInitiator);
    SC_THREAD(run);
  }
  void run() {
    tlm::tlm_generic_payload p;
    unsigned char data[8] = {};
    p.set_data_ptr(data);
    p.set_data_length(8);
    p.set_streaming_width(8);
    for (uint64_t i = 0; i < n; ++i) {
      p.set_command(tlm::TLM_WRITE_COMMAND);
      p.set_address(i);
      p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      out->b_transport(p, delay);
      sc_core::wait(delay);
    }
  }
};

nlohmann::json ceiling(uint64_t n) {
  CeilingInitiator init("initiator", n);
  CeilingTarget target("target");
  init.out.bind(target.in);
  const auto t0 = std::chrono::steady_clock::now();
  sc_core::sc_start();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return {{"commands", n}, {"seconds", s}};
}

// One ceiling run before a workload's run: its rate (commands/s), also
// kept in *best_ceiling when the fastest; 0 and *error set when it failed.
double paired_ceiling(const PerfOptions& o, double* best_ceiling, std::string* error) {
  const nlohmann::json c = run_function_isolated([&] { return ceiling(o.ceiling_commands); });
  if (c.contains("error")) {
    *error = "ceiling benchmark failed: " + c["error"].get<std::string>();
    return 0;
  }
  const double rate = double(c["commands"]) / double(c["seconds"]);
  *best_ceiling = std::max(*best_ceiling, rate);
  return rate;
}

}  // namespace

// `repeats` runs, each right after a ceiling run. The machine is shared and
// its speed drifts over seconds: the fastest run is the one least disturbed
// (its rates are reported), and a run compared with the ceiling measured
// just before it gives a ratio that drift hardly touches (the median is
// reported). `best_ceiling` collects the fastest ceiling seen.
Row measure(const std::string& name, const std::function<Measured()>& run, const PerfOptions& o,
            double* best_ceiling) {
  Row row{name};
  std::vector<double> ratios;
  Measured best;
  for (int i = 0; i < o.repeats; ++i) {
    const double ceiling_rate = paired_ceiling(o, best_ceiling, &row.error);
    if (!row.error.empty()) return row;
    Measured m = run();
    if (!m.error.empty()) {
      row.error = m.error;
      return row;
    }
    // A composite's work is its stages; a single-op command is one stage.
    ratios.push_back(double(std::max(m.commands, m.stages)) / m.seconds / ceiling_rate);
    if (i == 0 || m.seconds < best.seconds) best = std::move(m);
  }
  row.commands = best.commands;
  row.stages = best.stages;
  row.seconds = best.seconds;
  row.rss_kb = best.rss_kb;
  std::sort(ratios.begin(), ratios.end());
  const size_t n = ratios.size();
  row.fraction = n % 2 ? ratios[n / 2] : (ratios[n / 2 - 1] + ratios[n / 2]) / 2;
  return row;
}

}  // namespace kb::perf_detail
