#include "models/trace/vcd_trace.h"

#include <cstdio>
#include <stdexcept>

#include "models/pe/pe.h"

namespace kb {

namespace {
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

PeVcdTrace::PeVcdTrace(Pe& pe, const std::string& path) : path_(path) {
  // sc_create_vcd_trace_file() appends ".vcd" to the name it is given.
  const std::string stem = ends_with(path, ".vcd") ? path.substr(0, path.size() - 4) : path;
  written_ = stem + ".vcd";
  if (std::FILE* f = std::fopen(written_.c_str(), "w")) {  // fail early with our message
    std::fclose(f);
  } else {
    throw std::runtime_error("cannot write VCD '" + path + "'");
  }
  tf_ = sc_core::sc_create_vcd_trace_file(stem.c_str());
  if (!tf_) throw std::runtime_error("cannot write VCD '" + path + "'");
  tf_->set_time_unit(1, sc_core::SC_PS);
  const std::string cpu = "pe.pe_cpu.", sched = "pe.pe_scheduler.";
  // read() returns a reference to the signal's current value: traced live.
  sc_core::sc_trace(tf_, pe.pe_cpu.state_signal.read(), cpu + "state", 2);
  sc_core::sc_trace(tf_, pe.pe_cpu.descriptors_signal.read(), cpu + "descriptors", 64);
  sc_core::sc_trace(tf_, pe.pe_scheduler.occupancy_signal.read(), sched + "occupancy", 32);
  const char* const names[kNumEngines] = {"busy_dma", "busy_gemm", "busy_math", "busy_tcm"};
  for (int e = 0; e < kNumEngines; ++e) {
    sc_core::sc_trace(tf_, pe.pe_scheduler.busy_signal[e].read(), sched + names[e]);
  }
}

PeVcdTrace::~PeVcdTrace() {
  try {
    close();
  } catch (const std::exception&) {  // never throw from a destructor
  }
}

void PeVcdTrace::close() {
  if (!tf_) return;
  // SystemC 2.3.4 writes a time step's values when time next advances (or
  // on sc_stop), so after sc_start() returns by event starvation the last
  // step's changes (engines going idle, the queue emptying) are not in the
  // file yet. Advancing 1 ps, with nothing left to run, writes them; the file
  // then ends with a bare "#<end + 1>" time stamp. The caller reads the
  // simulated end time before close().
  if (sc_core::sc_get_status() == sc_core::SC_PAUSED) sc_core::sc_start(1, sc_core::SC_PS);
  sc_core::sc_close_vcd_trace_file(tf_);
  tf_ = nullptr;
  if (written_ != path_ && std::rename(written_.c_str(), path_.c_str()) != 0) {
    throw std::runtime_error("cannot rename '" + written_ + "' to '" + path_ + "'");
  }
}

}  // namespace kb
