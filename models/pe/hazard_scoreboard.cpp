#include "models/pe/hazard_scoreboard.h"

#include <algorithm>

namespace kb {

const char* to_string(Hazard h) {
  switch (h) {
    case Hazard::kNone: return "none";
    case Hazard::kRaw: return "RAW";
    case Hazard::kWar: return "WAR";
    case Hazard::kWaw: return "WAW";
  }
  return "?";
}

Hazard HazardScoreboard::classify(const std::vector<ByteRange>& earlier_reads,
                                  const std::vector<ByteRange>& earlier_writes,
                                  const std::vector<ByteRange>& later_reads,
                                  const std::vector<ByteRange>& later_writes) {
  return classify(ranges_of(earlier_reads, earlier_writes), ranges_of(later_reads, later_writes));
}

std::vector<HazardScoreboard::Blocker> HazardScoreboard::add(
    uint64_t id, const std::vector<ByteRange>& reads, const std::vector<ByteRange>& writes) {
  std::vector<Blocker> blockers;
  add(id, reads, writes, [&](uint64_t earlier, Hazard h) { blockers.push_back({earlier, h}); });
  return blockers;
}

HazardScoreboard::Entry& HazardScoreboard::free_slot() {
  for (Entry& e : entries_)
    if (!e.live) return e;
  entries_.emplace_back();
  return entries_.back();
}

void HazardScoreboard::remove(uint64_t id) {
  for (Entry& e : entries_) {
    if (e.live && e.id == id) {
      e.live = false;
      --live_;
      return;
    }
  }
}

}  // namespace kb
