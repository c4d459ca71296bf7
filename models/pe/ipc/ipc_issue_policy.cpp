#include "models/pe/ipc/ipc_issue_policy.h"

namespace kb {

namespace {
uint64_t& count_of(std::vector<uint64_t>& counts, uint32_t peer) {
  if (counts.size() <= peer) counts.resize(size_t(peer) + 1, 0);
  return counts[peer];
}
}  // namespace

bool IpcIssuePolicy::accepted(const Command& cmd, uint64_t* stamp) {
  if (const auto* sd = std::get_if<SendCmd>(&cmd)) {
    *stamp = count_of(sends_accepted_, sd->dst)++;
    return true;
  }
  if (const auto* rv = std::get_if<RecvCmd>(&cmd)) {
    *stamp = count_of(recvs_accepted_, rv->src)++;
    return true;
  }
  return false;
}

IssuePolicy::Verdict IpcIssuePolicy::offer(const Stage& s, uint64_t stamp) {
  const bool send = s.kind == RecordKind::kSend;
  uint64_t& issued = count_of(send ? sends_issued_ : recvs_issued_, s.peer);
  if (stamp != issued) return Verdict::kLater;
  if (!send && !mailbox_.message_ready(s.peer)) return Verdict::kHeld;
  ++issued;
  return Verdict::kIssue;
}

}  // namespace kb
