// The deadlock diagnostic: when sc_start() returns with
// launches unfinished (no event is left: every launched PE is blocked and
// nothing is in flight), what each blocked PE waits for. The runner prints
// it and exits with status 1.
#pragma once

#include <string>
#include <vector>

#include "models/pe/pe.h"

namespace kb {

// "" when no PE has an unfinished launch. Otherwise one paragraph:
//   deadlock at T us: <pe> (cube<c>.pe<p>) waits in RecvCmd #7 for a message
//   from PE 2 (4096 bytes), none arrived; <pe> ... waits in SendCmd #3 for a
//   slot in PE 0's IPC queue (4 of 4 taken)
// naming, per PE with an unfinished launch, PE_IPC's wait (a RECV's
// message, a SEND's slot), else PE_CPU held by a full command queue, else
// the commands in flight. Call it after sc_start() returned.
std::string deadlock_report(const std::vector<Pe*>& pes);

}  // namespace kb
