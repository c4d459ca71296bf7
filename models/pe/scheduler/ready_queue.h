// PE_SCHEDULER's ready stages of one engine, smallest first: what a
// std::priority_queue with std::greater gives, for less work per stage.
// Stages mostly become ready in order (a later command's after an earlier
// one's), so a push is an append and a pop moves a head index; one out of
// order is inserted in place, and one older than every queued item (PE_IPC
// puts back the stages it passed over) takes the slot before the head.
// Keys must be distinct (a stage is queued once).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace kb {

template <class T, class Less>
class ReadyQueue {
 public:
  bool empty() const { return head_ == items_.size(); }
  size_t size() const { return items_.size() - head_; }
  const T& top() const { return items_[head_]; }
  size_t storage() const { return items_.size(); }  // queued and popped-not-dropped (tests)
  void pop() {
    if (++head_ == items_.size()) {  // drained: the storage starts over
      items_.clear();
      head_ = 0;
    }
  }
  void push(const T& x) {
    const Less less;
    if (empty() || less(items_.back(), x)) {
      // Popped items are dropped once they are at least half the storage
      // (amortized: each is moved at most once), so appends keep it
      // bounded by twice the queue's size however long the queue never
      // drains (an insert or put-back does not compact).
      if (head_ >= kCompactAt && 2 * head_ >= items_.size()) {
        items_.erase(items_.begin(), items_.begin() + std::ptrdiff_t(head_));
        head_ = 0;
      }
      items_.push_back(x);
    } else if (head_ > 0 && less(x, items_[head_])) {
      items_[--head_] = x;
    } else {
      items_.insert(std::upper_bound(items_.begin() + std::ptrdiff_t(head_), items_.end(), x, less), x);
    }
  }

 private:
  static constexpr size_t kCompactAt = 64;
  std::vector<T> items_;  // [head_, end) queued, in order
  size_t head_ = 0;
};

}  // namespace kb
