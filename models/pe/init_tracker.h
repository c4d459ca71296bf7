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
  // The range that answered last: ranges only grow, so it stays covered,
  // and a kernel reads the same buffers over and over.
  mutable uint64_t last_begin_ = 0, last_end_ = 0;
};

}  // namespace kb
