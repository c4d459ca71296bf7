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

namespace {
bool any_overlap(const std::vector<ByteRange>& a, const std::vector<ByteRange>& b) {
  for (const ByteRange& x : a)
    for (const ByteRange& y : b)
      if (x.overlaps(y)) return true;
  return false;
}
}  // namespace

Hazard HazardScoreboard::classify(const std::vector<ByteRange>& earlier_reads,
                                  const std::vector<ByteRange>& earlier_writes,
                                  const std::vector<ByteRange>& later_reads,
                                  const std::vector<ByteRange>& later_writes) {
  if (any_overlap(later_reads, earlier_writes)) return Hazard::kRaw;
  if (any_overlap(later_writes, earlier_writes)) return Hazard::kWaw;
  if (any_overlap(later_writes, earlier_reads)) return Hazard::kWar;
  return Hazard::kNone;
}

std::vector<HazardScoreboard::Blocker> HazardScoreboard::add(
    uint64_t id, std::vector<ByteRange> reads, std::vector<ByteRange> writes) {
  std::vector<Blocker> blockers;
  for (const Entry& e : entries_) {
    const Hazard h = classify(e.reads, e.writes, reads, writes);
    if (h != Hazard::kNone) blockers.push_back({e.id, h});
  }
  entries_.push_back({id, std::move(reads), std::move(writes)});
  return blockers;
}

void HazardScoreboard::remove(uint64_t id) {
  entries_.erase(std::remove_if(entries_.begin(), entries_.end(),
                                [id](const Entry& e) { return e.id == id; }),
                 entries_.end());
}

}  // namespace kb
