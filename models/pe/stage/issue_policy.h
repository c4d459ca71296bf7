// An engine's issue policy: which of its ready stages may issue, beyond
// PE_SCHEDULER's own rule (the oldest ready stage first). An engine with
// none takes its oldest ready stage; the PE installs a policy beside the
// engine it orders (docs/architecture.md, "Issue policies"): PE_IPC's keeps
// SENDs and RECVs in program order per peer (models/pe/ipc/ipc_issue_policy.h).
//
// PE_SCHEDULER tells each policy of every command it accepts, in program
// order; the first that claims it gives the command a stamp (a command is
// ordered by one policy at most). When the engine is idle it offers the
// policy its ready stages, oldest first, with their command's stamp, until
// one may go; a stage not taken stays ready, in its place. Held stages are
// offered again only after something that could let one go: a stage of the
// engine queued or completed, or PeScheduler::wake(engine).
#pragma once

#include <cstdint>

#include "models/isa/commands.h"
#include "models/pe/stage/stage.h"

namespace kb {

class IssuePolicy {
 public:
  enum class Verdict : uint8_t {
    kIssue,  // the stage goes now (the policy counts it as issued)
    kLater,  // an older stage of the policy's order goes first
    kHeld,   // its turn, but it waits for something outside (a RECV's message)
  };
  virtual ~IssuePolicy() = default;
  // The command types it orders: bit t for Command's alternative t
  // (command_index_v). PE_SCHEDULER asks only those, once each is accepted.
  virtual uint32_t command_types() const = 0;
  // `cmd`, of one of those types, accepted: true, with its stamp, if the
  // policy orders it.
  virtual bool accepted(const Command& cmd, uint64_t* stamp) = 0;
  virtual Verdict offer(const Stage& s, uint64_t stamp) = 0;
};

}  // namespace kb
