// The bookings of a resource that moves one transfer at a time (a UCIe
// link, PE_IPC's receive port). Loosely-timed initiators call in their own
// order with annotated arrival times, so a booking for a later time can be
// made before one for an earlier time: each transfer takes the first idle
// gap at or after its arrival that holds it (first fit), never a place
// behind a booking it arrived before. Bookings that ended before the
// current simulated time are dropped (no arrival is earlier than now), so
// the calendar holds only what is still ahead.
#pragma once

#include <cstdint>
#include <iterator>
#include <map>

namespace kb {

class BusyCalendar {
 public:
  struct Booking {
    uint64_t start, end;
  };
  // Books the first [start, end_of(start)) with start >= arrival_ps that
  // overlaps no booking, and returns it. end_of(start) >= start (a transfer
  // may need its start aligned, e.g. to a clock edge). An empty transfer
  // books nothing. `now_ps`: the current simulated time.
  template <class EndOf>
  Booking book(uint64_t arrival_ps, uint64_t now_ps, EndOf end_of) {
    while (!busy_.empty() && busy_.begin()->second <= now_ps) busy_.erase(busy_.begin());
    uint64_t start = arrival_ps;
    auto next = busy_.upper_bound(start);
    if (next != busy_.begin() && std::prev(next)->second > start) start = std::prev(next)->second;
    uint64_t end = end_of(start);
    while (next != busy_.end() && next->first < end) {  // does not fit before `next`
      if (next->second > start) start = next->second;
      end = end_of(start);
      ++next;
    }
    if (end > start) {  // joined to touching neighbours: the map stays small
      uint64_t lo = start, hi = end;
      if (next != busy_.end() && next->first == end) {
        hi = next->second;
        next = busy_.erase(next);
      }
      if (next != busy_.begin() && std::prev(next)->second == start) {
        lo = std::prev(next)->first;
        busy_.erase(std::prev(next));
      }
      busy_.emplace(lo, hi);
    }
    return {start, end};
  }

 private:
  std::map<uint64_t, uint64_t> busy_;  // start -> end (ps), disjoint, not touching
};

}  // namespace kb
