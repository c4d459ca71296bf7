// PE_IPC: the PE's inter-PE message engine. One in-order engine of
// PE_SCHEDULER (Engine::kIpc): it runs SEND and RECV stages one at a time.
// A message goes to the receiving PE's IPC_MAILBOX
// (models/pe/ipc/ipc_mailbox.h: the window layout, the receive port and
// back-pressure); a RECV takes it from this PE's mailbox.
//
// Protocol (TLM-2.0 base protocol, nb_transport; the interconnect forwards
// both paths):
// - send(src, dst): the SEND stage takes dma.setup_cycles; then, if src is
//   in HBM, its bytes are read over `mem` (bursts of at most 64 KiB, one or
//   more per row); then the HEADER goes to ipc_window(dst) over `mem`; once
//   its response arrives, the DATA bursts go, all issued at that time. The
//   stage ends when the last burst's response arrives. Data mode: the bursts
//   carry src's bytes; timing mode: a scratch buffer.
// - recv(dst, src): PE_SCHEDULER issues a RECV stage only once the oldest
//   message from src (FIFO per source) has fully arrived (the mailbox's
//   message_ready), so a RECV never holds PE_IPC waiting; it then checks
//   its byte count against dst's (a mismatch fails the command: a
//   CommandFault naming both sizes and the source PE) and copies it into
//   dst: a TCM dst takes ceil(bytes / tcm.bytes_per_cycle) +
//   tcm.latency_cycles; an HBM dst is written over `mem` (bursts of at most
//   64 KiB). The slot frees when the stage ends.
// - PE_IPC runs one stage at a time. Sends to one PE, and recvs from one
//   PE, issue in program order (PE_SCHEDULER), so messages match recvs in
//   the order the kernel wrote them whatever the hazards allow; a SEND
//   whose HEADER is held by a full queue occupies PE_IPC until answered.
//   Sending to itself works (the top routes the PE's own window back).
// - `mem` sends one burst at a time, through the burst initiator PE_DMA
//   uses too (models/pe/engines/burst_initiator.h).
//
// Uncontended times, from the stage's issue (R = tcm.bytes_per_cycle, P
// the number of DATA bursts, H = hbm access cycles of bytes, all in cycles
// of the PE clock, plus whatever the interconnect between adds):
//   SEND  = setup + [src in HBM: H] + ceil(16 / R) + ceil(bytes / R)
//           (bursts are serialised on the receiver's port)
//   RECV  = [TCM dst: ceil(bytes / R) + tcm.latency_cycles | HBM dst: H],
//           from its issue, which is at or after its message's last byte
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>

#include "models/config/pe_config.h"
#include "models/pe/engines/burst_initiator.h"
#include "models/pe/engines/stage_engine.h"
#include "models/pe/ipc/ipc_mailbox.h"

namespace kb {

// What a blocked PE waits for in IPC (the deadlock report, models/top/deadlock.h):
// a SEND held for a slot (PE_IPC), or a RECV held for its message (PE_SCHEDULER).
struct IpcWait {
  enum Kind { kNone, kMessage, kSlot } kind = kNone;
  uint64_t cmd_id = 0;
  uint32_t peer = 0;             // kMessage: the source PE; kSlot: the destination PE
  uint64_t bytes = 0;            // the stage's bytes
  bool header_arrived = false;   // kMessage: a message from peer is arriving
  uint64_t arrived_bytes = 0;    // of it
};

class PeIpc : public StageEngine {
 public:
  BurstInitiator::Socket mem;  // to other PEs' windows and HBM, through the PE's bus

  // `mailbox`: this PE's, where its RECVs take their messages.
  PeIpc(sc_core::sc_module_name name, const PeConfig& cfg, IpcMailbox& mailbox);
  // Its place among the PEs at an instant (models/util/instant_calendar.h).
  void set_pe(uint32_t pe) { initiator_.set_pe(pe); }
  // This PE's global number (the HEADER's source, the DATA port it writes).
  void set_self(uint32_t global) { self_ = global; }
  void set_place(const PePlace& place) override {
    set_self(place.global);
    set_pe(place.global);
  }
  tlm::tlm_initiator_socket<32>* mem_port() override { return &mem; }

  IpcWait wait_state() const;
  // The mailbox's state, where the deadlock report and the run's end ask
  // for it (models/top/deadlock.cpp, tb/run/harness.cpp).
  uint64_t slots_taken(uint32_t src) const { return mailbox_.slots_taken(src); }
  uint64_t queue_depth() const { return mailbox_.queue_depth(); }
  uint64_t arrived_bytes(uint32_t src, bool* any) const { return mailbox_.arrived_bytes(src, any); }
  std::string undelivered() const { return mailbox_.undelivered(); }

 protected:
  uint64_t cycles_of(const Stage& s) const override;  // the RECV copy into TCM
  std::optional<sc_core::sc_time> execute(const Stage& s, CommandData* d) override;

 private:
  std::optional<sc_core::sc_time> start(const Stage& s, CommandData* d);  // execute()'s body
  enum class Phase { kIdle, kRead, kHeader, kData, kTake, kWrite, kDone };
  struct Burst {
    uint64_t address = 0, length = 0, buf = 0;
    bool read = false;
    bool header = false;
    uint64_t width = 0;  // streaming width
  };
  void plan_runs(const BytePattern& p, bool read);  // bursts over a tensor in HBM
  bool in_tcm(const BytePattern& p) const;
  bool advance();  // runs phases until one waits; true when the stage is done
  bool send_bursts();
  void resume();  // the continuation after a late response
  void next_phase();

  IpcMailbox& mailbox_;
  uint32_t self_ = 0;

  // The stage under way.
  const Stage* stage_ = nullptr;
  bool data_ = false;
  Phase phase_ = Phase::kIdle;
  bool waiting_slot_ = false;   // our HEADER is held by a full queue
  std::vector<Burst> bursts_;
  size_t next_ = 0;
  uint64_t issue_ps_ = 0, start_ps_ = 0;
  std::vector<uint8_t> buffer_;   // the message's bytes (data mode)
  std::vector<uint8_t> scratch_;  // timing mode: a burst's worth
  uint8_t header_[kIpcHeaderBytes] = {};
  BurstInitiator initiator_{mem, "PE_IPC", InstantKind::kIpcResume, [this] { resume(); }};
};

}  // namespace kb
