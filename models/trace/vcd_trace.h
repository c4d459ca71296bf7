// VCD waveforms of one or several PEs (readable in GTKWave) through
// sc_trace on the observer signals the modules already drive. Each PE's
// signals are under a scope of its hierarchical name: its
// name()'s dots are nested scopes ("pe", or "pe_0" and "pe_1" of a PeTop of
// two, or "top.cluster.pe_3"), below SystemC's top scope "SystemC":
//
//   pe.pe_cpu.state            2 bits  CpuState: 0 idle, 1 dispatching (also tl.cycles),
//                                      2 stalled (descriptor write held by a full queue),
//                                      3 waiting (drain at the end of a launch, tl.wait())
//   pe.pe_cpu.descriptors      64 bits descriptors written to the queue so far
//   pe.pe_scheduler.occupancy  32 bits accepted-but-incomplete commands
//   pe.pe_scheduler.busy_dma, busy_gemm, busy_math, busy_tcm   1 bit each
//                                      (busy_<port> for each row of kEngines)
//
// Time unit 1 ps (the simulation's resolution), so VCD times are the op
// log's start_ps / end_ps. Tracing only reads signals: the model's timing and
// op log do not change.
//
// The file is written like every output (models/util/output_file.h):
// SystemC writes a temporary file (in the target's folder; in $TMPDIR when
// the target is a device or pipe, then copied into it), close() checks that
// it is complete and moves it into place. SystemC checks none of its writes,
// so completeness is checked by its last line: the final time stamp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "models/trace/component_table.h"

namespace kb {

class OutputFile;

// What the VCD traces: the observer signals a PE's modules drive. The
// caller, who knows the PE, names them, so tracing does not include the PE.
struct PeSignals {
  std::string scope;  // the PE's hierarchical name, pe.name()
  const sc_core::sc_signal<uint32_t>& cpu_state;  // CpuState (pe_cpu.h)
  const sc_core::sc_signal<uint64_t>& descriptors;
  const sc_core::sc_signal<uint32_t>& occupancy;
  const sc_core::sc_signal<bool> (&engine_busy)[kNumEngines];  // indexed by Engine
  // Trace the optional engines too (PE_IPC: a PE of a top with several
  // PEs; component_table.h), so a single PE's VCD stays as it was.
  bool optional_engines = false;
};

class PeVcdTrace {
 public:
  // Opens the temporary file and registers the signals of every PE in
  // `pes`, each under its scope; call during elaboration (before
  // sc_start). Throws OutputError for a path that cannot be written (a
  // directory, a missing folder), std::logic_error for no PE, an empty
  // scope or one given twice (their signals would merge).
  PeVcdTrace(const std::vector<PeSignals>& pes, const std::string& path);
  PeVcdTrace(const PeSignals& pe, const std::string& path) : PeVcdTrace(std::vector<PeSignals>{pe}, path) {}
  // Without close(): nothing is written under the final name.
  ~PeVcdTrace();
  PeVcdTrace(const PeVcdTrace&) = delete;
  PeVcdTrace& operator=(const PeVcdTrace&) = delete;
  // After sc_start(); writes the last time step, checks the file and moves
  // it into place (throws OutputError). When the simulation ended by event
  // starvation, this advances simulated time by 1 ps (nothing is left to
  // run): read sc_time_stamp() before.
  void close();

 private:
  sc_core::sc_trace_file* tf_ = nullptr;
  std::unique_ptr<OutputFile> out_;      // the final file
  std::unique_ptr<OutputFile> scratch_;  // SystemC's file when out_ is a device
  std::string written_;                  // the file SystemC writes
};

// Throws OutputError naming `path` unless the VCD file `written` ends with
// the time stamp "#<end_ps>" (SystemC writes it when the file is closed).
void check_vcd_complete(const std::string& written, uint64_t end_ps, const std::string& path);

}  // namespace kb
