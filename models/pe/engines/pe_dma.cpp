#include "models/pe/engines/pe_dma.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "models/mem/address_map.h"
#include "models/mem/hbm.h"
#include "models/pe/engines/engine_timing.h"

namespace kb {

uint64_t hbm_access_cycles(const PeConfig& cfg, uint64_t bytes) {
  try {
    return hbm_access_cycles(hbm_timing(cfg), bytes);  // the HBM's own formula (models/mem/hbm.h)
  } catch (const std::overflow_error& e) {
    throw KernelError(e.what());
  }
}

uint64_t dma_cycles(const PeConfig& cfg, const Stage& s) {
  if (s.tcm_only) {
    return cycles_add(cfg.dma.setup_cycles, ceil_div_real(s.bytes, cfg.tcm.bytes_per_cycle), "DMA copy");
  }
  return cycles_add(cfg.dma.setup_cycles, hbm_access_cycles(cfg, s.bytes), "DMA");
}

PeDma::PeDma(sc_core::sc_module_name name, const PeConfig& cfg) : StageEngine(name, cfg), mem("mem") {}

bool PeDma::in_tcm(const BytePattern& p) const {
  return MemoryRange{kTcmBase, kTcmBase + cfg_.tcm.size_bytes}.contains(p.address, 1);
}

namespace {
// A gap-free pattern is one run.
uint64_t run_count(const BytePattern& p) { return p.pitch == p.run_bytes ? 1 : p.runs; }
uint64_t run_length(const BytePattern& p) { return p.pitch == p.run_bytes ? p.run_bytes * p.runs : p.run_bytes; }
}  // namespace

std::optional<sc_core::sc_time> PeDma::execute(const Stage& s, CommandData* d) {
  stage_ = &s;
  data_ = data_mode() ? d : nullptr;
  if (s.tcm_only) {  // never leaves the PE: the copy's formula
    const sc_core::sc_time t = clock_.cycles(dma_cycles(cfg_, s));
    if (data_) {
      buffer_.resize(s.bytes);
      for (uint64_t r = 0; r < s.src.runs; ++r)
        port_.read(s.src.address + r * s.src.pitch, &buffer_[r * s.src.run_bytes], s.src.run_bytes);
      for (uint64_t r = 0; r < s.dst.runs; ++r)
        port_.write(s.dst.address + r * s.dst.pitch, &buffer_[r * s.dst.run_bytes], s.dst.run_bytes);
    }
    return t;
  }
  begin_transfer(s);
  if (!send_bursts()) return std::nullopt;  // resume() goes on when the memory answers
  end_transfer();
  return from_ps(initiator_.end_ps() - start_ps_);
}

void PeDma::begin_transfer(const Stage& s) {
  side_[0] = s.src;
  side_[1] = s.dst;
  for (int i = 0; i < 2; ++i) hbm_side_[i] = side_[i].runs > 0 && !in_tcm(side_[i]);
  if (data_) {
    buffer_.assign(s.bytes, 0);
    if (s.src.runs == 0) {  // a staged block (command_data.h)
      auto it = data_->staging.find({s.role, s.tile});
      if (it == data_->staging.end() || it->second.size() != s.bytes) {
        throw KernelError("PE_DMA: no staged block for tile " + std::to_string(s.tile));
      }
      buffer_.swap(it->second);
      data_->staging.erase(it);
    } else if (!hbm_side_[0]) {  // TCM source
      for (uint64_t r = 0; r < s.src.runs; ++r)
        port_.read(s.src.address + r * s.src.pitch, &buffer_[r * s.src.run_bytes], s.src.run_bytes);
    }
  }
  start_ps_ = now_ps();
  setup_ps_ = ps_of(clock_.cycles(cfg_.dma.setup_cycles));
  initiator_.begin(start_ps_ + setup_ps_);
  cursor_ = Cursor{};
}

void PeDma::end_transfer() {
  if (!data_) return;
  const Stage& s = *stage_;
  if (s.dst.runs == 0) {  // to staging, for the tile's GEMM
    data_->staging[{s.role, s.tile}] = std::move(buffer_);
    buffer_.clear();
  } else if (!hbm_side_[1]) {  // TCM destination
    for (uint64_t r = 0; r < s.dst.runs; ++r)
      port_.write(s.dst.address + r * s.dst.pitch, &buffer_[r * s.dst.run_bytes], s.dst.run_bytes);
  }
}

std::vector<uint8_t>& PeDma::enable_pattern(uint64_t pitch, uint64_t run) {
  for (EnablePattern& e : enables_) {
    if (e.pitch == pitch && e.run == run && !e.bytes.empty()) return e.bytes;
  }
  EnablePattern& e = enables_[next_enables_];
  next_enables_ = (next_enables_ + 1) % kEnablePatterns;
  e.pitch = pitch;
  e.run = run;
  e.bytes.assign(pitch, TLM_BYTE_DISABLED);
  std::fill(e.bytes.begin(), e.bytes.begin() + long(run), TLM_BYTE_ENABLED);
  return e.bytes;
}

// A side's runs become bursts of at most kMaxBurstBytes:
// - a gap-free pattern: one run, cut into bursts;
// - a strided one whose pitch fits a burst: as many runs as fit in one
//   burst's span, the gaps masked by a byte-enable pattern one pitch long
//   (repeated over the burst, IEEE 1666 14.14), so a tile block of a
//   matrix is one transaction; the HBM counts enabled bytes only;
// - a wider pitch: one burst per run (cut when a run is longer).
bool PeDma::next_burst() {
  while (cursor_.side < 2) {
    const BytePattern& p = side_[cursor_.side];
    if (!hbm_side_[cursor_.side] || cursor_.run >= run_count(p)) {
      cursor_ = Cursor{cursor_.side + 1, 0, 0, 0};
      continue;
    }
    const bool read = cursor_.side == 0;
    tlm::tlm_generic_payload& b = initiator_.payload();
    b.set_command(read ? tlm::TLM_READ_COMMAND : tlm::TLM_WRITE_COMMAND);
    b.set_address(p.address + cursor_.run * p.pitch + cursor_.off);
    burst_buf_ = cursor_.buf;
    const uint64_t length = run_length(p);
    if (p.pitch != p.run_bytes && p.pitch <= kMaxBurstBytes && cursor_.off == 0) {
      const uint64_t fit = (kMaxBurstBytes - p.run_bytes) / p.pitch + 1;
      burst_runs_ = std::min(fit, p.runs - cursor_.run);
      const uint64_t span = (burst_runs_ - 1) * p.pitch + p.run_bytes;
      std::vector<uint8_t>& enables = enable_pattern(p.pitch, p.run_bytes);
      if (span_.size() < span) span_.resize(span);
      if (data_ && !read) {  // the runs into their places in the span
        for (uint64_t i = 0; i < burst_runs_; ++i)
          std::memcpy(&span_[i * p.pitch], &buffer_[burst_buf_ + i * p.run_bytes], p.run_bytes);
      }
      burst_pitch_ = p.pitch;
      burst_run_bytes_ = p.run_bytes;
      b.set_data_ptr(span_.data());
      b.set_data_length(unsigned(span));
      b.set_streaming_width(unsigned(span));
      b.set_byte_enable_ptr(enables.data());
      b.set_byte_enable_length(unsigned(p.pitch));
      cursor_.run += burst_runs_;
      cursor_.buf += burst_runs_ * p.run_bytes;
      return true;
    }
    burst_runs_ = 0;  // a plain burst: the packed buffer itself
    const uint64_t n = std::min(kMaxBurstBytes, length - cursor_.off);
    if (!data_ && span_.size() < n) span_.resize(n);
    b.set_data_ptr(data_ ? buffer_.data() + cursor_.buf : span_.data());
    b.set_data_length(unsigned(n));
    b.set_streaming_width(unsigned(n));
    b.set_byte_enable_ptr(nullptr);
    b.set_byte_enable_length(0);
    cursor_.off += n;
    cursor_.buf += n;
    if (cursor_.off == length) {
      ++cursor_.run;
      cursor_.off = 0;
    }
    return true;
  }
  return false;
}

bool PeDma::send_bursts() {
  while (next_burst()) {
    if (!initiator_.send(start_ps_ + setup_ps_)) return false;  // every burst leaves when the setup ends
    unpack_span();
  }
  return true;
}

void PeDma::unpack_span() {
  if (data_ && burst_runs_ && initiator_.payload().is_read()) {
    for (uint64_t i = 0; i < burst_runs_; ++i)
      std::memcpy(&buffer_[burst_buf_ + i * burst_run_bytes_], &span_[i * burst_pitch_], burst_run_bytes_);
  }
}

void PeDma::resume() {
  const auto end = initiator_.resume(
      [this] {
        unpack_span();
        if (!send_bursts()) return false;
        end_transfer();
        return true;
      },
      error_);
  if (end) finish(end->delay, end->ok);
}

}  // namespace kb
