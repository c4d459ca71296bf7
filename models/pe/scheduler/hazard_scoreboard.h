// PE_SCHEDULER's hazard scoreboard: orders read-after-write,
// write-after-read and write-after-write between in-flight commands by
// comparing the bytes of the tensors they touch, so two views of one tensor
// conflict only where they overlap (docs/architecture.md, "PE_SCHEDULER: the queue and hazards"). A strided view (a
// column slice) touches rows x a column range, not the bounding range
// between its first and last byte.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace kb {

// The bytes a tensor or view touches: runs of `run` bytes, `stride` bytes
// apart, from `begin`, the last ending at `end`. stride 0: a plain range,
// every byte of [begin, end) (so {begin, end} is one).
struct ByteRange {
  uint64_t begin = 0, end = 0;  // [begin, end) bounds every run
  uint64_t run = 0, stride = 0;

  // rows runs of `run` bytes every `stride` bytes; a plain range when that
  // is every byte of it. Past 2^64 (no valid tensor): [begin, 2^64 - 1)
  // whole, conservatively.
  static ByteRange strided(uint64_t begin, uint64_t run, uint64_t stride, uint64_t rows) {
    if (rows <= 1 || run >= stride) {  // the common case: no gaps
      if (rows == 0) return {begin, begin};
      uint64_t end;  // (rows - 1) x stride + begin + run, saturated
      if (__builtin_mul_overflow(rows - 1, stride, &end) || __builtin_add_overflow(end, begin, &end) ||
          __builtin_add_overflow(end, run, &end)) {
        end = UINT64_MAX;
      }
      return {begin, end};
    }
    return strided_range(begin, run, stride, rows);
  }
  bool contiguous() const { return stride == 0; }
  uint64_t rows() const { return contiguous() ? 1 : (end - begin - run) / stride + 1; }
  bool overlaps(const ByteRange& o) const {
    if (!(begin < o.end && o.begin < end)) return false;
    if ((stride | o.stride) == 0) return true;  // both contiguous
    return strided_overlap(*this, o);
  }

 private:
  static ByteRange strided_range(uint64_t begin, uint64_t run, uint64_t stride, uint64_t rows);
  // Exact for equal strides and for a strided range against a contiguous
  // one; otherwise row by row, conservatively true past a bound on rows.
  static bool strided_overlap(const ByteRange& a, const ByteRange& b);
};

enum class Hazard : uint8_t { kNone, kRaw, kWar, kWaw };
const char* to_string(Hazard h);

class HazardScoreboard {
 public:
  // Registers command `id` and returns the in-flight commands it must wait
  // for, each with the first hazard found, in no particular order.
  struct Blocker {
    uint64_t id;
    Hazard hazard;
  };
  std::vector<Blocker> add(uint64_t id, const std::vector<ByteRange>& reads,
                           const std::vector<ByteRange>& writes);
  // The same, calling `on_blocker(id, tag, hazard)`, `tag` as the earlier
  // command was added with, instead of allocating a list: the scheduler's
  // per-command path, whose tag finds the command without a search.
  template <class F>
  void add(uint64_t id, uint32_t tag, const std::vector<ByteRange>& reads,
           const std::vector<ByteRange>& writes, F on_blocker) {
    const Lists l = next(reads.size(), writes.size());
    std::copy(reads.begin(), reads.end(), l.reads);
    std::copy(writes.begin(), writes.end(), l.writes);
    add_next(id, tag, on_blocker);
  }
  // Room for the ranges the next add_next() registers, `n_reads` then
  // `n_writes` of them, filled in place by the caller (the scheduler computes
  // a command's ranges straight into the entry that keeps them, no copy, no
  // vector resized per command).
  struct Lists {
    ByteRange* reads;
    ByteRange* writes;
  };
  Lists next(size_t n_reads, size_t n_writes) {
    StoredRanges& e = spare();
    e.nr = n_reads;
    e.nw = n_writes;
    if (e.reads.size() < n_reads) e.reads.resize(n_reads);  // only grows
    if (e.writes.size() < n_writes) e.writes.resize(n_writes);
    return {e.reads.data(), e.writes.data()};
  }
  // add() of the lists next() gave.
  template <class F>
  void add_next(uint64_t id, uint32_t tag, F on_blocker) {
    const Ranges later = spare().bind();
    // The live entries' whole bounds, one dense array, first (this runs
    // per command); only an entry they meet is looked at list by list.
    const Span* box = boxes_.data();
    for (size_t i = 0; i < live_; ++i) {
      if (!meet(box[i], later.box)) continue;
      const Hazard h = classify_lists(entries_[slot_[i]].view, later);
      if (h != Hazard::kNone) on_blocker(ids_[i], tags_[i], h);
    }
    boxes_[live_] = later.box;
    ids_[live_] = id;
    tags_[live_] = tag;
    ++live_;
  }
  // Inlined: the scheduler runs it once per command.
  void remove(uint64_t id) {
    for (size_t i = 0; i < live_; ++i) {
      if (ids_[i] != id) continue;
      const size_t last = --live_;
      if (i != last) {  // the last live entry fills the hole; i's buffer becomes spare
        std::swap(slot_[i], slot_[last]);
        boxes_[i] = boxes_[last];
        ids_[i] = ids_[last];
        tags_[i] = tags_[last];
      }
      return;
    }
  }
  size_t size() const { return live_; }

  // The hazard a later access pattern has against an earlier one.
  static Hazard classify(const std::vector<ByteRange>& earlier_reads,
                         const std::vector<ByteRange>& earlier_writes,
                         const std::vector<ByteRange>& later_reads,
                         const std::vector<ByteRange>& later_writes);

 private:
  struct Span {
    uint64_t begin = 0, end = 0;
  };
  // Two [begin, end) bounds (Span or ByteRange) share a byte.
  template <class A, class B>
  static bool meet(const A& a, const B& b) {
    return (a.begin < b.end) & (b.begin < a.end);
  }
  // One side's read and write ranges with the bounding range of each: a
  // pair of lists whose bounds do not meet needs no range-by-range check.
  struct RangeList {
    const ByteRange* p = nullptr;
    size_t n = 0;
    Span box;           // empty (0, 0), which meets nothing, when n == 0
    bool plain = true;  // every range contiguous: bounds decide
  };
  struct Ranges {
    RangeList reads, writes;
    Span box;  // bounds both (spans HBM and TCM when both are touched)
  };
  static Span hull(const RangeList& a, const RangeList& b) {
    if (!a.n) return b.box;
    if (!b.n) return a.box;
    return {std::min(a.box.begin, b.box.begin), std::max(a.box.end, b.box.end)};
  }
  static RangeList list_of(const ByteRange* p, size_t n) {
    if (n == 1) return {p, 1, {p[0].begin, p[0].end}, p[0].stride == 0};  // the common case
    RangeList l{p, n, {}, true};
    if (n) l.box = {p[0].begin, p[0].end};
    uint64_t strides = n ? p[0].stride : 0;
    for (size_t i = 1; i < n; ++i) {
      l.box.begin = std::min(l.box.begin, p[i].begin);
      l.box.end = std::max(l.box.end, p[i].end);
      strides |= p[i].stride;
    }
    l.plain = strides == 0;
    return l;
  }
  static Ranges ranges_of(const std::vector<ByteRange>& reads, const std::vector<ByteRange>& writes) {
    Ranges r{list_of(reads.data(), reads.size()), list_of(writes.data(), writes.size()), {}};
    r.box = hull(r.reads, r.writes);
    return r;
  }
  // Inlined: accept() runs it for every pair of commands in flight.
  [[gnu::always_inline]] static bool any_overlap(const RangeList& a, const RangeList& b) {
    if (!meet(a.box, b.box)) return false;  // also when either list is empty
    if (a.plain && b.plain) {  // the common case: contiguous tensors
      for (size_t i = 0; i < a.n; ++i)
        for (size_t j = 0; j < b.n; ++j)
          if (meet(a.p[i], b.p[j])) return true;
      return false;
    }
    for (size_t i = 0; i < a.n; ++i)
      for (size_t j = 0; j < b.n; ++j)
        if (a.p[i].overlaps(b.p[j])) return true;
    return false;
  }
  // RAW before WAW before WAR: the first hazard that orders the pair.
  static Hazard classify(const Ranges& earlier, const Ranges& later) {
    if (!meet(earlier.box, later.box)) return Hazard::kNone;
    return classify_lists(earlier, later);
  }
  // classify() once the whole bounds are known to meet.
  [[gnu::always_inline]] static Hazard classify_lists(const Ranges& earlier, const Ranges& later) {
    if (any_overlap(earlier.writes, later.reads)) return Hazard::kRaw;
    if (any_overlap(earlier.writes, later.writes)) return Hazard::kWaw;
    if (any_overlap(later.writes, earlier.reads)) return Hazard::kWar;
    return Hazard::kNone;
  }
  // An entry's ranges in buffers kept across reuse, with the bounding
  // ranges computed once.
  struct StoredRanges {
    std::vector<ByteRange> reads, writes;  // [0, nr) and [0, nw) used; only grow
    size_t nr = 0, nw = 0;
    Ranges view;  // points into the buffers: movable, not copyable
    StoredRanges() = default;
    StoredRanges(StoredRanges&&) noexcept = default;
    StoredRanges& operator=(StoredRanges&&) noexcept = default;
    StoredRanges(const StoredRanges&) = delete;
    StoredRanges& operator=(const StoredRanges&) = delete;
    // view of the buffers as they are now.
    const Ranges& bind() {
      view = {list_of(reads.data(), nr), list_of(writes.data(), nw), {}};
      view.box = hull(view.reads, view.writes);
      return view;
    }
  };
  // The entry at position live_ (made when every entry is live).
  [[gnu::always_inline]] StoredRanges& spare() {
    if (live_ == entries_.size()) grow();
    return entries_[slot_[live_]];
  }
  void grow();  // one more entry, spare
  // Live entries are positions [0, live_) of boxes_, ids_, tags_ and
  // slot_, in no order (remove() moves the last into the hole): the scan
  // reads only live ones. slot_ maps a position to its ranges in
  // entries_, whose buffers stay put; slot_[live_..] are the spare ones. At
  // most queue_depth entries are live.
  std::vector<Span> boxes_;  // each entry's Ranges::box
  std::vector<uint64_t> ids_;
  std::vector<uint32_t> tags_;  // add()'s tag of each entry
  std::vector<uint32_t> slot_;
  std::vector<StoredRanges> entries_;
  size_t live_ = 0;
};

}  // namespace kb
