// PE_SCHEDULER's hazard scoreboard (which keeps its live entries
// dense, a removed one's place taken by the last, and lets the scheduler
// fill an entry's ranges in place): whatever the order of adds and removes
// and the way in, add() reports exactly the live commands a brute-force
// classify() over every live command finds, each with the same hazard.
#include "models/pe/scheduler/hazard_scoreboard.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <utility>

namespace kb {
namespace {

struct Access {
  std::vector<ByteRange> reads, writes;
};

struct Rng {
  uint64_t state = 0x9e3779b97f4a7c15ull;
  uint64_t operator()(uint64_t n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (state >> 33) % n;
  }
};

// 0-3 ranges in [0, 1024): mostly plain, some strided, some empty.
std::vector<ByteRange> random_list(Rng& rnd) {
  std::vector<ByteRange> l(rnd(4));
  for (ByteRange& r : l) {
    const uint64_t begin = rnd(1024);
    if (rnd(4) == 0) {
      const uint64_t stride = 2 + rnd(32);
      r = ByteRange::strided(begin, 1 + rnd(stride - 1), stride, 1 + rnd(8));
    } else {
      r = {begin, begin + rnd(64)};  // sometimes empty: begin == end
    }
  }
  return l;
}

TEST(HazardScoreboard, AddReportsWhatClassifyFindsAgainstEveryLiveCommand) {
  Rng rnd;
  HazardScoreboard sb;
  std::map<uint64_t, Access> live;  // the reference: every live command
  std::map<uint64_t, uint32_t> tags;  // each command's tag
  uint64_t next_id = 1;
  int with_blockers = 0, removes_not_last = 0;
  for (int step = 0; step < 20000; ++step) {
    // Keep between 0 and 12 live, removing any of them (not just the oldest).
    if (!live.empty() && (live.size() >= 12 || rnd(3) == 0)) {
      auto it = live.begin();
      std::advance(it, rnd(live.size()));
      removes_not_last += std::next(it) != live.end();
      sb.remove(it->first);
      live.erase(it);
      ASSERT_EQ(sb.size(), live.size());
      continue;
    }
    const Access a{random_list(rnd), random_list(rnd)};
    std::vector<std::pair<uint64_t, Hazard>> want;
    for (const auto& [id, e] : live) {
      const Hazard h = HazardScoreboard::classify(e.reads, e.writes, a.reads, a.writes);
      if (h != Hazard::kNone) want.push_back({id, h});
    }
    // Three ways in: the list-returning add(), the tagged add(), and the
    // scheduler's next() + add_next() filling the entry in place (over the
    // stale ranges of an earlier entry). A tag comes back with its id.
    std::vector<std::pair<uint64_t, Hazard>> got;
    auto take = [&](uint64_t id, uint32_t tag, Hazard h) {
      EXPECT_EQ(tag, tags.at(id)) << "id " << id;
      got.push_back({id, h});
    };
    tags[next_id] = step % 3 == 0 ? 0 : uint32_t(rnd(1u << 31));  // the list-returning add() tags 0
    switch (step % 3) {
      case 0:
        for (const HazardScoreboard::Blocker& b : sb.add(next_id, a.reads, a.writes)) got.push_back({b.id, b.hazard});
        break;
      case 1: sb.add(next_id, tags[next_id], a.reads, a.writes, take); break;
      case 2: {
        const HazardScoreboard::Lists l = sb.next(a.reads.size(), a.writes.size());
        std::copy(a.reads.begin(), a.reads.end(), l.reads);
        std::copy(a.writes.begin(), a.writes.end(), l.writes);
        sb.add_next(next_id, tags[next_id], take);
        break;
      }
    }
    std::sort(got.begin(), got.end());
    ASSERT_EQ(got, want) << "step " << step;
    with_blockers += !want.empty();
    live[next_id++] = a;
    ASSERT_EQ(sb.size(), live.size());
  }
  // Both outcomes and out-of-order removes are well represented.
  EXPECT_GT(with_blockers, 2000);
  EXPECT_LT(with_blockers, 12000);
  EXPECT_GT(removes_not_last, 2000);
}

// A removed command blocks nothing; an id never added removes nothing.
TEST(HazardScoreboard, RemovedCommandsBlockNothing) {
  const std::vector<ByteRange> none, r{{0, 100}};
  HazardScoreboard sb;
  EXPECT_TRUE(sb.add(1, none, r).empty());
  EXPECT_EQ(sb.add(2, none, r).size(), 1u);  // WAW on 1
  sb.remove(1);
  sb.remove(99);
  EXPECT_EQ(sb.size(), 1u);
  const auto b = sb.add(3, r, none);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].id, 2u);
  EXPECT_EQ(b[0].hazard, Hazard::kRaw);
  sb.remove(2);
  sb.remove(3);
  EXPECT_EQ(sb.size(), 0u);
  EXPECT_TRUE(sb.add(4, r, r).empty());
}

// A gapless strided range is [begin, (rows - 1) x stride + begin + run),
// saturated at 2^64 - 1 (the 128-bit figure is the reference).
TEST(ByteRange, GaplessEndSaturates) {
  Rng rnd;
  const uint64_t big[] = {0, 1, 7, uint64_t(1) << 32, uint64_t(1) << 62, UINT64_MAX - 5, UINT64_MAX};
  for (int i = 0; i < 20000; ++i) {
    auto pick = [&] { return rnd(2) ? big[rnd(7)] : rnd(1u << 20); };
    const uint64_t begin = pick(), stride = pick(), rows = rnd(3) ? rnd(5) : pick();
    const uint64_t run = std::max(stride, pick());  // run >= stride: no gaps
    const ByteRange r = ByteRange::strided(begin, run, stride, rows);
    const unsigned __int128 end =
        rows == 0 ? begin : (unsigned __int128)(rows - 1) * stride + begin + run;
    ASSERT_EQ(r.begin, begin);
    ASSERT_EQ(r.end, end > UINT64_MAX ? UINT64_MAX : uint64_t(end))
        << begin << " " << run << " " << stride << " " << rows;
    ASSERT_TRUE(r.contiguous());
  }
}

}  // namespace
}  // namespace kb
