// PE_IPC's issue policy (models/pe/stage/issue_policy.h): SENDs to one PE,
// and RECVs from one PE, issue in program order, so messages match RECVs in
// the order the kernel wrote them whatever the hazards allow; and a RECV
// issues only once its message has fully arrived in this PE's IPC_MAILBOX
// (message_ready), so a RECV never holds PE_IPC waiting.
#pragma once

#include <cstdint>
#include <vector>

#include "models/pe/ipc/ipc_mailbox.h"
#include "models/pe/stage/issue_policy.h"

namespace kb {

class IpcIssuePolicy : public IssuePolicy {
 public:
  explicit IpcIssuePolicy(const IpcMailbox& mailbox) : mailbox_(mailbox) {}
  uint32_t command_types() const override {
    return 1u << command_index_v<SendCmd> | 1u << command_index_v<RecvCmd>;
  }
  bool accepted(const Command& cmd, uint64_t* stamp) override;
  Verdict offer(const Stage& s, uint64_t stamp) override;

 private:
  const IpcMailbox& mailbox_;
  // Per peer: SENDs / RECVs accepted and issued.
  std::vector<uint64_t> sends_accepted_, sends_issued_, recvs_accepted_, recvs_issued_;
};

}  // namespace kb
