#include "models/isa/init_tracker.h"

namespace kb {

namespace {
template <class F>
void for_each_row_range(const TensorDesc& t, F f) {
  const uint64_t row_bytes = uint64_t(t.cols) * dtype_bytes(t.dtype);
  if (t.row_stride == t.cols) {  // contiguous: one range
    f(t.address, t.address + uint64_t(t.rows) * row_bytes);
    return;
  }
  const uint64_t stride = uint64_t(t.row_stride) * dtype_bytes(t.dtype);
  for (int64_t r = 0; r < t.rows; ++r) f(t.address + uint64_t(r) * stride, t.address + uint64_t(r) * stride + row_bytes);
}
}  // namespace

void InitTracker::add(uint64_t begin, uint64_t end) {
  if (covered(begin, end)) return;  // the usual case: a buffer rewritten
  const uint64_t key = begin;
  auto it = ranges_.upper_bound(begin);
  if (it != ranges_.begin()) {
    auto prev = std::prev(it);
    if (prev->second >= begin) {  // overlaps or touches: extend it
      begin = prev->first;
      end = std::max(end, prev->second);
      it = ranges_.erase(prev);
    }
  }
  while (it != ranges_.end() && it->first <= end) {
    end = std::max(end, it->second);
    it = ranges_.erase(it);
  }
  ranges_.emplace(begin, end);
  remember(key, begin, end);
}

bool InitTracker::covered(uint64_t begin, uint64_t end) const {
  if (cached(begin, end)) return true;
  auto it = ranges_.upper_bound(begin);
  if (it == ranges_.begin()) return false;
  --it;
  if (!(it->first <= begin && end <= it->second)) return false;
  remember(begin, it->first, it->second);
  return true;
}

void InitTracker::mark_rows(const TensorDesc& t) {
  if (covered(t.span_begin(), t.span_end())) return;  // already: every row is
  for_each_row_range(t, [this](uint64_t b, uint64_t e) { add(b, e); });
}

bool InitTracker::initialised_rows(const TensorDesc& t) const {
  // The bounding range covered covers every row; else row by row.
  if (covered(t.span_begin(), t.span_end())) return true;
  bool ok = true;
  for_each_row_range(t, [&](uint64_t b, uint64_t e) { ok = ok && covered(b, e); });
  return ok;
}

}  // namespace kb
