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
  // One pass over the earlier writes finds RAW and WAW; WAR only if neither.
  Hazard h = Hazard::kNone;
  for (const ByteRange& w : earlier_writes) {
    for (const ByteRange& r : later_reads)
      if (w.overlaps(r)) return Hazard::kRaw;
    if (h == Hazard::kNone) {
      for (const ByteRange& lw : later_writes)
        if (w.overlaps(lw)) h = Hazard::kWaw;
    }
  }
  if (h != Hazard::kNone) return h;
  return any_overlap(later_writes, earlier_reads) ? Hazard::kWar : Hazard::kNone;
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
