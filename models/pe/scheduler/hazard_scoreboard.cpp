#include "models/pe/scheduler/hazard_scoreboard.h"

#include <algorithm>

namespace kb {

namespace {

using i128 = __int128;

// floor(a / b) for b > 0.
i128 floor_div(i128 a, i128 b) {
  const i128 q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

// Rows [lo, hi] of `s` (inclusive, clipped to [0, s.rows)) whose run meets
// [x, y); empty when lo > hi. A contiguous `s` is one row.
void rows_meeting(const ByteRange& s, i128 x, i128 y, i128* lo, i128* hi) {
  if (s.contiguous()) {
    const bool meet = i128(s.begin) < y && x < i128(s.end);
    *lo = 0;
    *hi = meet ? 0 : -1;
    return;
  }
  // begin + j * stride < y  and  begin + j * stride + run > x.
  const i128 b = s.begin, st = s.stride, w = s.run;
  *hi = std::min<i128>(floor_div(y - b - 1, st), i128(s.rows()) - 1);
  *lo = std::max<i128>(floor_div(x - b - w, st) + 1, 0);
}

// Past this many rows compared one by one, two strided ranges of different
// strides are taken to overlap (conservative: it can only order more).
constexpr i128 kMaxRowsCompared = 4096;

}  // namespace

ByteRange ByteRange::strided_range(uint64_t begin, uint64_t run, uint64_t stride, uint64_t rows) {
  const i128 end = i128(begin) + i128(rows - 1) * stride + run;  // rows >= 2
  if (end > i128(UINT64_MAX)) return {begin, UINT64_MAX};  // would wrap: all of it, conservatively
  return {begin, uint64_t(end), run, stride};
}

bool ByteRange::strided_overlap(const ByteRange& a, const ByteRange& b) {
  i128 lo, hi;
  if (a.contiguous() || b.contiguous()) {  // rows of the strided one that meet the other
    const ByteRange& s = a.contiguous() ? b : a;
    const ByteRange& c = a.contiguous() ? a : b;
    rows_meeting(s, c.begin, c.end, &lo, &hi);
    return lo <= hi;
  }
  if (a.stride == b.stride) {
    // Row i of a meets row j of b iff -b.run < d + (j - i) stride < a.run,
    // d = b.begin - a.begin, for some j - i in [-(a.rows - 1), b.rows - 1].
    const i128 d = i128(b.begin) - i128(a.begin), st = a.stride;
    lo = std::max<i128>(floor_div(-i128(b.run) - d, st) + 1, -(i128(a.rows()) - 1));
    hi = std::min<i128>(floor_div(i128(a.run) - d - 1, st), i128(b.rows()) - 1);
    return lo <= hi;
  }
  // Different strides: the rows of the one with fewer, inside the other's
  // bounds, each against the other.
  const bool a_fewer = a.rows() <= b.rows();
  const ByteRange& few = a_fewer ? a : b;
  const ByteRange& many = a_fewer ? b : a;
  rows_meeting(few, many.begin, many.end, &lo, &hi);
  if (hi - lo >= kMaxRowsCompared) return true;
  for (i128 i = lo; i <= hi; ++i) {
    const i128 x = i128(few.begin) + i * few.stride;
    i128 l2, h2;
    rows_meeting(many, x, x + few.run, &l2, &h2);
    if (l2 <= h2) return true;
  }
  return false;
}

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

void HazardScoreboard::grow() {
  slot_.push_back(uint32_t(entries_.size()));
  entries_.emplace_back();
  boxes_.emplace_back();
  ids_.emplace_back();
  tags_.emplace_back();
}

std::vector<HazardScoreboard::Blocker> HazardScoreboard::add(
    uint64_t id, const std::vector<ByteRange>& reads, const std::vector<ByteRange>& writes) {
  std::vector<Blocker> blockers;
  add(id, 0, reads, writes, [&](uint64_t earlier, uint32_t, Hazard h) { blockers.push_back({earlier, h}); });
  return blockers;
}

}  // namespace kb
