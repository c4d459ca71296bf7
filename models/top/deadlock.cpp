#include "models/top/deadlock.h"

#include <cstdio>

namespace kb {

namespace {

std::string where(const Pe& pe) {
  // The name, and where it sits when the name does not say it (a flat top).
  const PePlace& p = pe.place();
  const std::string at = "cube" + std::to_string(p.cube) + ".pe" + std::to_string(p.pe);
  const std::string name = pe.name();
  return name == at ? name + " (PE " + std::to_string(p.global) + ")" : name + " (" + at + ", PE " + std::to_string(p.global) + ")";
}

const Pe* find_pe(const std::vector<Pe*>& pes, uint32_t global) {
  for (const Pe* pe : pes)
    if (pe && pe->index() == global) return pe;
  return nullptr;
}

std::string ipc_wait(const std::vector<Pe*>& pes, const IpcWait& w, uint32_t from) {
  if (w.kind == IpcWait::kMessage) {
    std::string s = "waits in RecvCmd #" + std::to_string(w.cmd_id) + " for a message from PE " +
                    std::to_string(w.peer) + " (" + std::to_string(w.bytes) + " bytes), ";
    if (!w.header_arrived) return s + "none arrived";
    return s + std::to_string(w.arrived_bytes) + " bytes of its oldest arrived";
  }
  std::string s = "waits in SendCmd #" + std::to_string(w.cmd_id) + " for a slot in PE " + std::to_string(w.peer) +
                  "'s IPC queue";
  if (const Pe* to = find_pe(pes, w.peer)) {
    s += " (" + std::to_string(to->pe_ipc().slots_taken(from)) + " of " + std::to_string(to->pe_ipc().queue_depth()) +
         " taken by PE " + std::to_string(from) + ")";
  }
  return s;
}

}  // namespace

std::string deadlock_report(const std::vector<Pe*>& pes) {
  std::string out;
  for (const Pe* pe : pes) {
    if (!pe || !pe->pe_cpu.busy()) continue;
    std::string what;
    IpcWait w = pe->pe_ipc().wait_state();
    if (w.kind == IpcWait::kNone) {
      // A RECV PE_SCHEDULER holds back until its message is in.
      if (const Stage* r = pe->pe_scheduler.held_stage(Engine::kIpc)) {
        w.kind = IpcWait::kMessage;
        w.cmd_id = r->cmd_id;
        w.peer = r->peer;
        w.bytes = r->bytes;
        w.arrived_bytes = pe->pe_ipc().arrived_bytes(r->peer, &w.header_arrived);
      }
    }
    if (w.kind != IpcWait::kNone) {
      what = ipc_wait(pes, w, pe->index());
    } else if (pe->pe_scheduler.writer_blocked()) {
      what = "PE_CPU waits for a slot in PE_SCHEDULER's queue (" + std::to_string(pe->pe_scheduler.occupancy()) +
             " commands in flight)";
    } else if (pe->pe_scheduler.occupancy()) {
      what = "waits for " + std::to_string(pe->pe_scheduler.occupancy()) + " command(s) in flight";
    } else {
      what = "has an unfinished launch with nothing in flight";
    }
    out += (out.empty() ? "" : "; ") + where(*pe) + " " + what;
  }
  if (out.empty()) return out;
  char t[64];
  std::snprintf(t, sizeof t, "deadlock at %.3f us: ", sc_core::sc_time_stamp().to_seconds() * 1e6);
  return t + out;
}

}  // namespace kb
