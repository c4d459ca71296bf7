// Which bytes of HBM and TCM hold a value: written by an earlier command or
// by the host. PE_CPU consults it at dispatch, in timing and data mode
// alike, so reading an uninitialised tensor is an error naming the kernel,
// the command and the tensor before any time is charged. Command order is
// program order, and the scheduler's hazard ordering makes "written by an
// earlier command" mean "written before this command reads".
#pragma once

#include <cstdint>
#include <algorithm>
#include <iterator>
#include <map>

#include "models/pe/tensor_table.h"

namespace kb {

class InitTracker {
 public:
  void mark(const TensorDesc& t);                // every row of the tensor or view
  bool initialised(const TensorDesc& t) const;   // every byte of every row

 private:
  void add(uint64_t begin, uint64_t end);
  bool covered(uint64_t begin, uint64_t end) const;
  std::map<uint64_t, uint64_t> ranges_;  // begin -> end, disjoint, merged
  // The ranges that answered last: ranges only grow, so they stay covered,
  // and a kernel reads the same few buffers over and over.
  struct Span {
    uint64_t begin = 0, end = 0;
  };
  static constexpr int kRecent = 4;
  mutable Span recent_[kRecent];
  mutable int next_recent_ = 0;
  void remember(uint64_t begin, uint64_t end) const {
    recent_[next_recent_] = {begin, end};
    next_recent_ = (next_recent_ + 1) % kRecent;
  }
};

}  // namespace kb
