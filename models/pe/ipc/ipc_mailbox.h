// IPC_MAILBOX: PE_IPC's receive side. The target behind the PE's `ipc`
// socket, the PE's IPC window (models/mem/address_map.h: ipc_window(g),
// kIpcWindowStride bytes), and the PE's IPC receive queue. PE_IPC
// (models/pe/ipc/pe_ipc.h) is the engine that sends into other PEs'
// mailboxes and takes messages from its own.
//
// Window layout (offsets in the window of the receiving PE; s = the
// sending global PE, s < kMaxIpcSources):
//   0x0000 + 16 s   HEADER(s): a 16-byte write {u64 message bytes, u32 s,
//                   u32 0} (little-endian) that takes a slot in the queue.
//   0x8000 + 16 s   DATA(s): a FIFO port, kIpcPortWidth (16) bytes wide: a
//                   burst is a write with streaming width 16 and the
//                   message's next bytes as its data (at most 64 KiB,
//                   PE_DMA's kMaxBurstBytes).
// A write elsewhere, a read, byte enables, DATA without a HEADER or past its
// message's bytes, or a HEADER whose source field is not s get an error
// response.
//
// Protocol (TLM-2.0 base protocol, nb_transport or b_transport on `msg`):
// - The receive port takes ceil(n / tcm.bytes_per_cycle) cycles per write
//   of n bytes (a HEADER counts 16), one write after another in arrival
//   order: senders to one PE share its port.
// - Back-pressure: the queue holds, per source, at most ipc.queue_depth
//   messages that arrived or are arriving and that no recv has taken (a
//   slot per source and depth: one busy sender cannot starve another, so a
//   reply never waits behind requests). A HEADER to a full queue (or while
//   another from its source waits) is accepted (TLM_UPDATED, END_REQ) but
//   not answered: BEGIN_RESP comes on the backward path when a recv frees a
//   slot of that source; the sender's SEND stage waits for it.
// - A RECV from src issues only once the oldest message from src (FIFO per
//   source) has fully arrived (message_ready; on_arrival wakes
//   PE_SCHEDULER). Its stage takes the message (take()), and the slot frees
//   when the stage ends (free_slot_at()).
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "models/config/pe_config.h"
#include "models/util/busy_calendar.h"
#include "models/util/clock.h"
#include "models/util/instant_calendar.h"

namespace kb {

constexpr uint64_t kIpcHeaderBytes = 16;
constexpr uint64_t kIpcPortWidth = 16;                 // DATA's streaming width
constexpr uint64_t kIpcDataOffset = 0x8000;            // DATA(0) in the window
constexpr uint32_t kMaxIpcSources = 0x8000 / 16;       // 2048

class IpcMailbox : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket_optional<IpcMailbox> msg;  // the IPC receive window (may stay unbound)

  // A message sent here.
  struct Message {
    uint32_t src = 0;
    uint64_t bytes = 0, arrived = 0;
    uint64_t done_ps = 0;  // the last byte's arrival (once arrived == bytes)
    std::vector<uint8_t> data;  // data mode
    bool complete() const { return arrived == bytes; }
  };

  IpcMailbox(sc_core::sc_module_name name, const PeConfig& cfg);
  // Its place among the PEs at an instant (models/util/instant_calendar.h).
  void set_pe(uint32_t pe) {
    arrival_ev_.set_pe(pe);
    free_ev_.set_pe(pe);
  }
  // This PE's global number (the window it owns).
  void set_self(uint32_t global) { self_ = global; }

  uint64_t slots_taken(uint32_t src) const {
    auto it = taken_.find(src);
    return it == taken_.end() ? 0 : it->second;
  }
  // The oldest message from src not yet taken has fully arrived (its last
  // byte is in by now): a RECV from src may issue.
  bool message_ready(uint32_t src) const;
  // Messages sent here that no recv took, "" when none (a run that ends
  // with some fails, never ends silently).
  std::string undelivered() const;
  // Bytes in of the oldest message from src not yet taken (*any: one is).
  uint64_t arrived_bytes(uint32_t src, bool* any) const {
    auto it = by_src_.find(src);
    *any = it != by_src_.end() && !it->second.empty();
    return *any ? it->second.front().arrived : 0;
  }
  // Called (from a method) when a message's last byte is in.
  void on_arrival(std::function<void()> f) { on_arrival_ = std::move(f); }
  uint64_t queue_depth() const { return cfg_.ipc.queue_depth; }
  uint64_t headers_waiting() const { return waiting_.size(); }

  // A RECV stage (PE_IPC): the oldest message from src not yet taken (null:
  // none); take() removes it and hands over its bytes (data: may be null),
  // its slot stays taken until free_slot_at(the stage's end, src).
  const Message* oldest(uint32_t src) const;
  void take(uint32_t src, std::vector<uint8_t>* data);
  void free_slot_at(uint64_t end_ps, uint32_t src);

 private:
  struct WaitingHeader {
    tlm::tlm_generic_payload* p = nullptr;  // nb form (null: a b_transport thread)
    uint32_t src = 0;
    uint64_t bytes = 0;
    uint64_t arrive_ps = 0;
    bool* granted = nullptr;  // b_transport form: set when it has its slot
  };
  void b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  unsigned transport_dbg(tlm::tlm_generic_payload& p);
  // Decodes a write into the window: 0 refused (status set), 1 HEADER, 2 DATA.
  int decode(tlm::tlm_generic_payload& p, uint32_t* src, uint64_t* bytes);
  uint64_t port_write(uint64_t arrive_ps, uint64_t n);  // the port's end time
  void take_slot(uint32_t src, uint64_t bytes, uint64_t header_in_ps);
  void data_write(tlm::tlm_generic_payload& p, uint32_t src, sc_core::sc_time& delay);
  void free_slots();  // free_ev_: slots whose recv ended; waiting HEADERs
  void arrived();     // arrival_ev_
  bool slot_free(uint32_t src) const;  // a HEADER from src may take a slot now

  const PeConfig& cfg_;
  Clock clock_;
  uint32_t self_ = 0;
  // Receive queue: per source, oldest first; slots taken; HEADERs waiting.
  std::map<uint32_t, std::deque<Message>> by_src_;
  std::map<uint32_t, uint64_t> taken_;  // slots per source
  std::deque<WaitingHeader> waiting_;
  // Ends of RECV stages whose slot is still taken, and the slot's source.
  std::deque<std::pair<uint64_t, uint32_t>> free_at_ps_;
  // One notification per message completed (an sc_event would keep only
  // the earliest of several pending).
  InstantQueue arrival_ev_{InstantKind::kIpcArrival, [this] { arrived(); }};
  std::function<void()> on_arrival_;
  BusyCalendar receive_port_;  // the receive port's writes booked ahead
  InstantActor free_ev_{InstantKind::kIpcSlotsFree, [this] { free_slots(); }};
  sc_core::sc_event slot_granted_;  // b_transport HEADERs
};

}  // namespace kb
