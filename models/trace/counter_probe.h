// The change history of a counter, e.g. PE_SCHEDULER's queue occupancy,
// for traces (and, in tests, the record-based statistics that check the
// streaming ones).
//
// CounterHistory is told every value the counter takes, as it takes it
// (PE_SCHEDULER calls it where its occupancy changes: no signal, no
// process, so a trace costs no SystemC activation per change). Several
// values at one time step keep the last; a value equal to the last final
// one is no change. The history is a step function of simulated time, first
// sample (0, initial value). A sample is final once simulated time moves
// past it (or at flush()); final samples go to the sink as they come (a
// trace written as the run goes) and, when kept, to samples().
//
// CounterProbe is the same history of a uint32_t signal, for an observer
// outside the model (a VP, a test): an SC_METHOD sensitive to the signal's
// value-changed event. It only reads the signal, so adding a probe never
// changes the model's timing or the op log.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <systemc>

namespace kb {

struct CounterSample {
  uint64_t time_ps = 0;
  uint32_t value = 0;
};

class CounterHistory {
 public:
  using Sink = std::function<void(const CounterSample&)>;
  // initial: the value at time 0; keep: hold the whole history in
  // samples(); sink: receives each final sample (may be empty). Told by
  // PE_SCHEDULER, the sink runs inside its step: it must not throw.
  explicit CounterHistory(uint32_t initial = 0, bool keep = true, Sink sink = {});
  // The counter is `value` at `time_ps`, which never decreases.
  void observe(uint64_t time_ps, uint32_t value);
  // Makes the last sample final; call once simulation has ended.
  void flush();
  // The history (when kept); complete after flush().
  const std::vector<CounterSample>& samples() const { return samples_; }

 private:
  void commit(const CounterSample& s);

  bool keep_;
  Sink sink_;
  std::vector<CounterSample> samples_;
  // The sample of the latest time step, still open to later changes.
  CounterSample pending_;
  bool has_pending_ = true;
  // The last final sample (none before the first).
  CounterSample last_;
  bool has_last_ = false;
};

class CounterProbe : public sc_core::sc_module {
 public:
  using Sink = CounterHistory::Sink;
  CounterProbe(sc_core::sc_module_name name, const sc_core::sc_signal_in_if<uint32_t>& signal,
               bool keep = true, Sink sink = {});
  void flush() { history_.flush(); }
  const std::vector<CounterSample>& samples() const { return history_.samples(); }

 private:
  void sample();  // SC_METHOD on the signal's value_changed_event()

  const sc_core::sc_signal_in_if<uint32_t>& signal_;
  CounterHistory history_;
};

// The value of a step function given by `samples` at `time_ps` (0 before the
// first sample).
uint32_t counter_value_at(const std::vector<CounterSample>& samples, uint64_t time_ps);

}  // namespace kb
