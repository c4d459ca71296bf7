#include "models/trace/counter_probe.h"

#include <algorithm>

namespace kb {

CounterProbe::CounterProbe(sc_core::sc_module_name name,
                           const sc_core::sc_signal_in_if<uint32_t>& signal)
    : sc_module(name), signal_(signal) {
  samples_.push_back({0, signal.read()});
  SC_HAS_PROCESS(CounterProbe);
  SC_METHOD(sample);
  sensitive << signal.value_changed_event();
  dont_initialize();
}

void CounterProbe::sample() {
  const CounterSample s{sc_core::sc_time_stamp().value(), signal_.read()};
  if (samples_.back().time_ps == s.time_ps) {
    samples_.back().value = s.value;  // a later delta cycle of the same time step
    if (samples_.size() >= 2 && samples_[samples_.size() - 2].value == s.value) samples_.pop_back();
    return;
  }
  if (samples_.back().value != s.value) samples_.push_back(s);
}

uint32_t counter_value_at(const std::vector<CounterSample>& samples, uint64_t time_ps) {
  auto it = std::upper_bound(samples.begin(), samples.end(), time_ps,
                             [](uint64_t t, const CounterSample& s) { return t < s.time_ps; });
  return it == samples.begin() ? 0 : std::prev(it)->value;
}

}  // namespace kb
