#include "models/trace/counter_probe.h"

#include <algorithm>

#include "models/util/sim_time.h"

namespace kb {

CounterHistory::CounterHistory(uint32_t initial, bool keep, Sink sink)
    : keep_(keep), sink_(std::move(sink)), pending_{0, initial} {}

void CounterHistory::commit(const CounterSample& s) {
  last_ = s;
  has_last_ = true;
  if (keep_) samples_.push_back(s);
  if (sink_) sink_(s);
}

void CounterHistory::observe(uint64_t time_ps, uint32_t value) {
  const CounterSample s{time_ps, value};
  if (has_pending_ && pending_.time_ps == s.time_ps) {
    // A later change of the same time step; back to the last final value
    // means no change at all.
    pending_.value = s.value;
    if (has_last_ && last_.value == s.value) has_pending_ = false;
    return;
  }
  if (has_pending_) commit(pending_);  // time has moved on: it is final
  has_pending_ = !has_last_ || last_.value != s.value;
  pending_ = s;
}

void CounterHistory::flush() {
  if (has_pending_) commit(pending_);
  has_pending_ = false;
}

CounterProbe::CounterProbe(sc_core::sc_module_name name,
                           const sc_core::sc_signal_in_if<uint32_t>& signal, bool keep, Sink sink)
    : sc_module(name), signal_(signal), history_(signal.read(), keep, std::move(sink)) {
  SC_HAS_PROCESS(CounterProbe);
  SC_METHOD(sample);
  sensitive << signal.value_changed_event();
  dont_initialize();
}

void CounterProbe::sample() { history_.observe(now_ps(), signal_.read()); }

uint32_t counter_value_at(const std::vector<CounterSample>& samples, uint64_t time_ps) {
  auto it = std::upper_bound(samples.begin(), samples.end(), time_ps,
                             [](uint64_t t, const CounterSample& s) { return t < s.time_ps; });
  return it == samples.begin() ? 0 : std::prev(it)->value;
}

}  // namespace kb
