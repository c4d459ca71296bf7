#include "models/mem/hbm.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "models/util/checked.h"

namespace kb {

namespace {

uint64_t transfer_cycles(const HbmTiming& t, uint64_t bytes) {
  const std::optional<uint64_t> c = ceil_to_u64(double(bytes) / t.bytes_per_cycle - 1e-9);
  if (!c) {
    throw std::overflow_error("HBM transfer of " + std::to_string(bytes) +
                              " bytes: the cycle count does not fit in 64 bits");
  }
  return *c;
}

}  // namespace

HbmTiming hbm_timing(const PeConfig& cfg) {
  HbmTiming t;
  t.clock_freq_ghz = cfg.clock_freq_ghz;
  t.bytes_per_cycle = cfg.hbm_bytes_per_cycle();
  t.latency_cycles = cfg.hbm.latency_cycles;
  return t;
}

uint64_t hbm_access_cycles(const HbmTiming& t, uint64_t bytes) {
  const std::optional<uint64_t> c = checked_add(t.latency_cycles, transfer_cycles(t, bytes));
  if (!c) {
    throw std::overflow_error("HBM access of " + std::to_string(bytes) +
                              " bytes: the cycle count does not fit in 64 bits");
  }
  return *c;
}

Hbm::Hbm(sc_core::sc_module_name name, const HbmTiming& timing, MemoryRange range, bool store_data)
    : sc_module(name),
      in("in"),
      timing_(timing),
      range_(range),
      clock_(timing.clock_freq_ghz),
      storage_(store_data ? &store_ : nullptr) {
  in.register_b_transport(this, &Hbm::b_transport);
  in.register_nb_transport_fw(this, &Hbm::nb_transport_fw);
  in.register_transport_dbg(this, &Hbm::transport_dbg);
  in.register_get_direct_mem_ptr(this, &Hbm::get_direct_mem_ptr);
}

uint64_t Hbm::enabled_bytes(const tlm::tlm_generic_payload& p) {
  const unsigned char* be = p.get_byte_enable_ptr();
  const uint64_t n = p.get_data_length();
  if (!be) return n;
  // An initiator sends the same pattern burst after burst (a tile's rows):
  // counted once, then recognised by its bytes.
  const size_t period = p.get_byte_enable_length();
  const size_t tail = size_t(n % period);
  for (const EnablePattern& e : patterns_) {
    if (e.bytes.size() == period && e.tail == tail && std::memcmp(e.bytes.data(), be, period) == 0) {
      return n / period * e.enabled + e.enabled_tail;
    }
  }
  EnablePattern& e = patterns_[next_pattern_];
  next_pattern_ = (next_pattern_ + 1) % kPatterns;
  e.bytes.assign(be, be + period);
  e.tail = tail;
  e.enabled = count_enabled(be, period);
  e.enabled_tail = count_enabled(be, tail);
  return n / period * e.enabled + e.enabled_tail;
}

void Hbm::access(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  ++transactions_;
  if (memory_access(p, range_, storage_) != tlm::TLM_OK_RESPONSE) return;  // no time for an error
  const uint64_t now = now_ps();
  const uint64_t arrival = now + ps_of(delay);
  const bool idle = arrival >= train_end_ps_;  // the pipe is idle: a new train
  const uint64_t start = idle ? arrival : train_start_ps_;
  const std::optional<uint64_t> bytes = checked_add(idle ? 0 : train_bytes_, enabled_bytes(p));
  if (!bytes) throw std::overflow_error("HBM: a train of more than 2^64 bytes");
  const uint64_t transfer = transfer_cycles(timing_, *bytes);
  const std::optional<uint64_t> access = checked_add(transfer, timing_.latency_cycles);
  if (!access) throw std::overflow_error("HBM access: the cycle count does not fit in 64 bits");
  // The whole access first: a time past 2^64 ps is reported for it
  // (TimeOverflow), and the state is left as it was.
  const uint64_t done = start + clock_.delay_ps(start, *access);
  train_end_ps_ = start + clock_.delay_ps(start, transfer);
  train_start_ps_ = start;
  train_bytes_ = *bytes;
  delay = from_ps(done - now);
}

void Hbm::b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) { access(p, delay); }

tlm::tlm_sync_enum Hbm::nb_transport_fw(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                        sc_core::sc_time& delay) {
  if (phase != tlm::BEGIN_REQ) {
    // Every request completes at once (TLM_COMPLETED), so no other phase of
    // the base protocol can reach this target.
    SC_REPORT_ERROR(name(), "nb_transport_fw: phase other than BEGIN_REQ");
    return tlm::TLM_COMPLETED;
  }
  access(p, delay);
  return tlm::TLM_COMPLETED;
}

unsigned Hbm::transport_dbg(tlm::tlm_generic_payload& p) { return memory_debug(p, range_, storage_); }

bool Hbm::get_direct_mem_ptr(tlm::tlm_generic_payload& p, tlm::tlm_dmi& dmi) {
  (void)p;
  // Denied for the whole range, so the initiator does not ask again.
  dmi.allow_read_write();
  dmi.set_start_address(range_.base);
  dmi.set_end_address(range_.end == 0 ? ~uint64_t(0) : range_.end - 1);
  dmi.set_granted_access(tlm::tlm_dmi::DMI_ACCESS_NONE);
  return false;
}

}  // namespace kb
