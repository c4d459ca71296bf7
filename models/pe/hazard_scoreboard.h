// PE_SCHEDULER's hazard scoreboard: orders read-after-write,
// write-after-read and write-after-write between in-flight commands by
// comparing the byte ranges of the tensors they touch, so two views of one
// tensor conflict only where they overlap (DESIGN.md "Hazard scoreboard").
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kb {

struct ByteRange {
  uint64_t begin = 0, end = 0;  // [begin, end)
  bool overlaps(const ByteRange& o) const { return begin < o.end && o.begin < end; }
};

enum class Hazard : uint8_t { kNone, kRaw, kWar, kWaw };
const char* to_string(Hazard h);

class HazardScoreboard {
 public:
  // Registers command `id` and returns the in-flight commands it must wait
  // for, each with the first hazard found.
  struct Blocker {
    uint64_t id;
    Hazard hazard;
  };
  std::vector<Blocker> add(uint64_t id, const std::vector<ByteRange>& reads,
                           const std::vector<ByteRange>& writes);
  // The same, calling `on_blocker(id, hazard)` instead of allocating a list
  // (the scheduler's per-command path).
  template <class F>
  void add(uint64_t id, const std::vector<ByteRange>& reads, const std::vector<ByteRange>& writes,
           F on_blocker) {
    for (const Entry& e : entries_) {
      if (!e.live) continue;
      const Hazard h = classify(e.reads, e.writes, reads, writes);
      if (h != Hazard::kNone) on_blocker(e.id, h);
    }
    Entry& slot = free_slot();
    slot.id = id;
    slot.live = true;
    slot.reads.assign(reads.begin(), reads.end());
    slot.writes.assign(writes.begin(), writes.end());
    ++live_;
  }
  void remove(uint64_t id);
  size_t size() const { return live_; }

  // The hazard a later access pattern has against an earlier one.
  static Hazard classify(const std::vector<ByteRange>& earlier_reads,
                         const std::vector<ByteRange>& earlier_writes,
                         const std::vector<ByteRange>& later_reads,
                         const std::vector<ByteRange>& later_writes);

 private:
  struct Entry {
    uint64_t id = 0;
    bool live = false;
    std::vector<ByteRange> reads, writes;  // capacity kept across reuse
  };
  Entry& free_slot();
  // At most queue_depth live entries: a linear scan is the cheap look-up.
  std::vector<Entry> entries_;
  size_t live_ = 0;
};

}  // namespace kb
