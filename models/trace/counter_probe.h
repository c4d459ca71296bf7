// CounterProbe: records the change history of a uint32_t signal, e.g.
// PE_SCHEDULER's queue occupancy, for traces (and, in tests, the
// record-based statistics that check the streaming ones).
//
// An SC_METHOD sensitive to the signal's value-changed event appends
// (time, value) pairs. It only reads the signal, so adding a probe never
// changes the model's timing or the op log. Several changes at one time step
// (delta cycles) keep the last value: the history is a step function of
// simulated time, first sample (0, initial value).
#pragma once

#include <cstdint>
#include <vector>

#include <systemc>

namespace kb {

struct CounterSample {
  uint64_t time_ps = 0;
  uint32_t value = 0;
};

class CounterProbe : public sc_core::sc_module {
 public:
  CounterProbe(sc_core::sc_module_name name, const sc_core::sc_signal_in_if<uint32_t>& signal);
  const std::vector<CounterSample>& samples() const { return samples_; }

 private:
  void sample();  // SC_METHOD on the signal's value_changed_event()

  const sc_core::sc_signal_in_if<uint32_t>& signal_;
  std::vector<CounterSample> samples_;
};

// The value of a step function given by `samples` at `time_ps` (0 before the
// first sample).
uint32_t counter_value_at(const std::vector<CounterSample>& samples, uint64_t time_ps);

}  // namespace kb
