// PE_SCHEDULER's ready queue: whatever the order of pushes
// and pops, it gives the items an ordered set gives (the reference, what
// the std::priority_queue it replaced gave), in mostly-ascending pushes (an
// append), out-of-order ones (an insertion), put-backs older than every
// queued item (before the head) and long runs that never drain, where the
// storage stays bounded.
#include "models/pe/scheduler/ready_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

namespace kb {
namespace {

struct Rng {
  uint64_t state = 0x2545f4914f6cdd1dull;
  uint64_t operator()(uint64_t n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (state >> 33) % n;
  }
};

struct Less {
  bool operator()(uint64_t a, uint64_t b) const { return a < b; }
};

TEST(ReadyQueue, PopsWhatAnOrderedSetPops) {
  Rng rnd;
  ReadyQueue<uint64_t, Less> q;
  std::set<uint64_t> ref;
  std::set<uint64_t> used;  // every fresh key so far: keys are distinct
  uint64_t next = 1000;
  std::vector<uint64_t> popped;  // the last pops, to put back
  int appends = 0, put_backs = 0, inserts = 0;
  size_t longest = 0;  // most pops between two drains
  size_t pops_since_drain = 0;
  auto push = [&](uint64_t k) {
    const bool append = ref.empty() || k > *ref.rbegin();
    if (append) ++appends;
    else if (k < *ref.begin()) ++put_backs;
    else ++inserts;
    q.push(k);
    ref.insert(k);
    if (append) {
      ASSERT_LE(q.storage(), std::max(2 * q.size(), q.size() + 64));
    }
  };
  for (int step = 0; step < 200000; ++step) {
    const uint64_t op = rnd(100);
    if (op < 45) {  // a fresh key: mostly the newest, sometimes older (odd: never a fresh even one)
      next += 1 + rnd(3);
      const uint64_t k = rnd(8) == 0 ? (next - rnd(60)) * 4 + 1 : next * 4;
      if (used.insert(k).second) push(k);
    } else if (op < 50 && !popped.empty()) {  // put back what was just popped, newest first
      for (auto it = popped.rbegin(); it != popped.rend(); ++it) push(*it);
      popped.clear();
    } else if (!ref.empty() && (op < 95 || ref.size() > 500)) {
      ASSERT_EQ(q.size(), ref.size());
      ASSERT_EQ(q.top(), *ref.begin()) << "step " << step;
      popped.push_back(*ref.begin());
      if (popped.size() > 4) popped.erase(popped.begin());
      q.pop();
      ref.erase(ref.begin());
      longest = std::max(longest, ++pops_since_drain);
      if (ref.empty()) pops_since_drain = 0;
    }
    ASSERT_EQ(q.empty(), ref.empty());
  }
  while (!ref.empty()) {
    ASSERT_EQ(q.top(), *ref.begin());
    q.pop();
    ref.erase(ref.begin());
  }
  EXPECT_TRUE(q.empty());
  // Every path was taken many times, and the queue went far without draining.
  EXPECT_GT(appends, 10000);
  EXPECT_GT(inserts, 1000);
  EXPECT_GT(put_backs, 1000);
  EXPECT_GT(longest, 1000u);
}

}  // namespace
}  // namespace kb
