// PE_DMA: moves tensors between HBM and TCM (DMA_READ / DMA_WRITE), within
// TCM (COPY) and a composite's HBM operand and output blocks.
//
// A transfer takes the DMA setup time, then its HBM side travels over `mem`
// as bursts with the tensor's real addresses, at most kMaxBurstBytes each
// (next_burst(): a strided block is one burst with a byte-enable pattern
// where it fits), all issued when the setup ends. The stage ends
// when the last burst's response does: with the HBM to itself that is
// dma_cycles() (below); sharing it costs what the HBM model says.
// A TCM -> TCM copy never leaves the PE and takes dma_cycles() too.
//
// Data mode: the bursts carry the bytes; the TCM side is read or written
// through the `data` socket, a composite's block through its staging
// buffer (command_data.h). Timing mode: the bursts point at a scratch buffer a
// burst long; the HBM copies nothing.
//
// `mem` uses nb_transport (PE_SCHEDULER issues stages from methods). A
// memory that answers TLM_COMPLETED (the HBM model, through the
// interconnect) costs no process switch; one that answers later (an AT
// target, or a b_transport-only target behind simple_target_socket) is
// served one burst at a time, each burst sent once the previous request
// phase ended, and the stage then finishes on PE_SCHEDULER's backward path.
// PE_IPC sends its bursts the same way: the one burst initiator
// (models/pe/engines/burst_initiator.h).
#pragma once

#include "models/pe/engines/burst_initiator.h"
#include "models/pe/engines/stage_engine.h"

namespace kb {

// HBM access, uncontended: latency + ceil(bytes / (channels x GB/s x eff /
// f)); the HBM model's formula (models/mem/hbm.h), with KernelError.
uint64_t hbm_access_cycles(const PeConfig& cfg, uint64_t bytes);
// A DMA stage with the HBM to itself: setup + HBM access (DMA_READ /
// DMA_WRITE), or setup + ceil(bytes / tcm.bytes_per_cycle) (TCM -> TCM copy).
uint64_t dma_cycles(const PeConfig& cfg, const Stage& s);

class PeDma : public StageEngine {
 public:
  static constexpr uint64_t kMaxBurstBytes = 64 * 1024;

  BurstInitiator::Socket mem;  // to HBM, through the PE's bus

  PeDma(sc_core::sc_module_name name, const PeConfig& cfg);
  // Its place among the PEs at an instant (models/util/instant_calendar.h).
  void set_pe(uint32_t pe) { initiator_.set_pe(pe); }
  void set_place(const PePlace& place) override { set_pe(place.global); }
  tlm::tlm_initiator_socket<32>* mem_port() override { return &mem; }

 protected:
  uint64_t cycles_of(const Stage& s) const override { return dma_cycles(cfg_, s); }
  std::optional<sc_core::sc_time> execute(const Stage& s, CommandData* d) override;

 private:
  // The next burst of the transfer under way: the runs of src (reads) and
  // then of dst (writes) that lie outside TCM.
  struct Cursor {
    int side = 0;       // 0: src, 1: dst, 2: done
    uint64_t run = 0;   // in the side's pattern
    uint64_t off = 0;   // within the run
    uint64_t buf = 0;   // the burst's offset in buffer_ (data mode)
  };
  bool next_burst();    // fills burst_ from cursor_; false when none is left
  bool in_tcm(const BytePattern& p) const;
  void begin_transfer(const Stage& s);
  void end_transfer();  // data mode: the TCM or staging side
  // Sends bursts until one does not complete at once; true when all did.
  bool send_bursts();
  void unpack_span();  // after a burst's response: a masked read's runs into buffer_
  void resume();  // the continuation: the next burst after a late response

  const Stage* stage_ = nullptr;
  CommandData* data_ = nullptr;
  BytePattern side_[2];
  bool hbm_side_[2] = {};
  Cursor cursor_;
  BurstInitiator initiator_{mem, "PE_DMA", InstantKind::kDmaResume, [this] { resume(); }};
  std::vector<uint8_t> buffer_;  // data mode: the transfer's bytes, packed
  std::vector<uint8_t> span_;    // a masked burst's span (timing mode: any burst's)
  // Byte-enable patterns, one pitch long, by (pitch, run): a composite's
  // streams take turns (A and B tiles), so a few are kept rather than
  // rebuilt at every change.
  struct EnablePattern {
    uint64_t pitch = 0, run = 0;
    std::vector<uint8_t> bytes;
  };
  static constexpr int kEnablePatterns = 4;
  EnablePattern enables_[kEnablePatterns];
  int next_enables_ = 0;  // the entry replaced next (round robin)
  std::vector<uint8_t>& enable_pattern(uint64_t pitch, uint64_t run);
  // The burst in flight: its runs (0: a plain burst), their geometry and
  // where they go in buffer_.
  uint64_t burst_runs_ = 0, burst_pitch_ = 0, burst_run_bytes_ = 0, burst_buf_ = 0;
  uint64_t start_ps_ = 0;
  uint64_t setup_ps_ = 0;  // the setup's end, from start_ps_
};

}  // namespace kb
