// VCD waveforms of a PE (readable in GTKWave) through sc_trace on the
// observer signals the modules already drive:
//
//   pe.pe_cpu.state            2 bits  CpuState: 0 idle, 1 dispatching (also tl.cycles),
//                                      2 stalled (descriptor write held by a full queue),
//                                      3 waiting (drain at the end of a launch, tl.wait())
//   pe.pe_cpu.descriptors      64 bits descriptors written to the queue so far
//   pe.pe_scheduler.occupancy  32 bits accepted-but-incomplete commands
//   pe.pe_scheduler.busy_dma, busy_gemm, busy_math, busy_tcm   1 bit each
//
// Time unit 1 ps (the simulation's resolution), so VCD times are the op
// log's start_ps / end_ps. Tracing only reads signals: the model's timing and
// op log do not change.
#pragma once

#include <string>

#include <systemc>

namespace kb {

class Pe;

class PeVcdTrace {
 public:
  // Opens `path` and registers the signals; call during elaboration (before
  // sc_start). A path not ending in ".vcd" is still honoured (SystemC
  // appends ".vcd"; close() renames the file).
  PeVcdTrace(Pe& pe, const std::string& path);
  ~PeVcdTrace();
  PeVcdTrace(const PeVcdTrace&) = delete;
  PeVcdTrace& operator=(const PeVcdTrace&) = delete;
  // After sc_start(); writes the last time step and closes the file. When
  // the simulation ended by event starvation, this advances simulated time
  // by 1 ps (nothing is left to run): read sc_time_stamp() before.
  void close();

 private:
  sc_core::sc_trace_file* tf_ = nullptr;
  std::string path_, written_;
};

}  // namespace kb
