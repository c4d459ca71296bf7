// Which bytes of HBM and TCM hold a value: written by an earlier command or
// by the host. PE_CPU consults it at dispatch, in timing and data mode
// alike, so reading an uninitialised tensor is an error naming the kernel,
// the command and the tensor before any time is charged. Command order is
// program order, and the scheduler's hazard ordering makes "written by an
// earlier command" mean "written before this command reads".
#pragma once

#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <iterator>
#include <map>

#include "models/isa/tensor_table.h"

namespace kb {

class InitTracker {
 public:
  // Inline: both run for every command, and a kernel reads and writes the
  // same few buffers over and over, which the cache answers; the rest is
  // out of line.
  void mark(const TensorDesc& t) {  // every row of the tensor or view
    if (!cached(t.span_begin(), t.span_end())) mark_rows(t);
  }
  bool initialised(const TensorDesc& t) const {  // every byte of every row
    return cached(t.span_begin(), t.span_end()) || initialised_rows(t);
  }

 private:
  void mark_rows(const TensorDesc& t);
  bool initialised_rows(const TensorDesc& t) const;
  void add(uint64_t begin, uint64_t end);
  bool covered(uint64_t begin, uint64_t end) const;
  std::map<uint64_t, uint64_t> ranges_;  // begin -> end, disjoint, merged
  // Ranges that answered, by the begin address asked about (a hash of it):
  // ranges only grow, so a range once covered stays covered, and a tensor
  // asked about again finds its range in one probe. A kernel's buffers may
  // be more disjoint ranges than a short list of the latest holds (gqa-decode
  // opt3 missed four latest ranges on one read in five).
  struct Span {
    uint64_t begin = 0, end = 0;
  };
  static constexpr int kCacheBits = 6;
  static size_t slot(uint64_t begin) {
    return size_t((begin * 0x9E3779B97F4A7C15ull) >> (64 - kCacheBits));  // Fibonacci hashing
  }
  mutable Span cache_[size_t(1) << kCacheBits];
  bool cached(uint64_t begin, uint64_t end) const {
    const Span& r = cache_[slot(begin)];
    return r.begin <= begin && end <= r.end && begin < end;
  }
  // `key`: the begin address asked about; [begin, end) covers it.
  void remember(uint64_t key, uint64_t begin, uint64_t end) const { cache_[slot(key)] = {begin, end}; }
};

}  // namespace kb
