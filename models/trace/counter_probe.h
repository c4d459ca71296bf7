// CounterProbe: the change history of a uint32_t signal, e.g.
// PE_SCHEDULER's queue occupancy, for traces (and, in tests, the
// record-based statistics that check the streaming ones).
//
// An SC_METHOD sensitive to the signal's value-changed event takes
// (time, value) pairs. It only reads the signal, so adding a probe never
// changes the model's timing or the op log. Several changes at one time step
// (delta cycles) keep the last value: the history is a step function of
// simulated time, first sample (0, initial value). A sample is final once
// simulated time moves past it (or at flush()); final samples go to the sink
// as they come (a trace written as the run goes) and, when kept, to
// samples().
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

class CounterProbe : public sc_core::sc_module {
 public:
  using Sink = std::function<void(const CounterSample&)>;
  // keep: hold the whole history in samples(); sink: receives each final
  // sample (may be empty).
  CounterProbe(sc_core::sc_module_name name, const sc_core::sc_signal_in_if<uint32_t>& signal,
               bool keep = true, Sink sink = {});
  // Makes the last sample final; call once simulation has ended.
  void flush();
  // The history (when kept); complete after flush().
  const std::vector<CounterSample>& samples() const { return samples_; }

 private:
  void sample();  // SC_METHOD on the signal's value_changed_event()
  void commit(const CounterSample& s);

  const sc_core::sc_signal_in_if<uint32_t>& signal_;
  bool keep_;
  Sink sink_;
  std::vector<CounterSample> samples_;
  // The sample of the latest time step, still open to delta-cycle changes.
  CounterSample pending_;
  bool has_pending_ = true;
  // The last final sample (none before the first).
  CounterSample last_;
  bool has_last_ = false;
};

// The value of a step function given by `samples` at `time_ps` (0 before the
// first sample).
uint32_t counter_value_at(const std::vector<CounterSample>& samples, uint64_t time_ps);

}  // namespace kb
