// InitTracker (models/isa/init_tracker.h) against a byte map: a tensor
// is initialised exactly when every byte of every row has been marked,
// whatever its cache of recent answers holds.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "models/isa/init_tracker.h"

namespace kb {
namespace {

constexpr uint64_t kBase = uint64_t(1) << 40;
constexpr uint64_t kWindow = 8192;

TensorDesc tensor(uint64_t offset, int64_t rows, int64_t cols, int64_t row_stride, Dtype dtype) {
  TensorDesc d;
  d.address = kBase + offset;
  d.rows = rows, d.cols = cols, d.row_stride = row_stride, d.dtype = dtype;
  return d;
}

// The reference: one flag per byte of the window.
struct ByteMap {
  std::vector<bool> set = std::vector<bool>(kWindow, false);
  template <class F>
  void rows(const TensorDesc& t, F f) {
    const uint64_t row_bytes = uint64_t(t.cols) * dtype_bytes(t.dtype);
    const uint64_t stride = uint64_t(t.row_stride) * dtype_bytes(t.dtype);
    for (int64_t r = 0; r < t.rows; ++r) {
      for (uint64_t b = 0; b < row_bytes; ++b) f(t.address - kBase + uint64_t(r) * stride + b);
    }
  }
  void mark(const TensorDesc& t) {
    rows(t, [&](uint64_t i) { set[i] = true; });
  }
  bool initialised(const TensorDesc& t) {
    bool ok = true;
    rows(t, [&](uint64_t i) { ok = ok && set[i]; });
    return ok;
  }
};

TEST(InitTracker, AgreesWithAByteMapOverRandomMarksAndReads) {
  const Dtype dtypes[] = {Dtype::kFp32, Dtype::kBf16, Dtype::kInt8};
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    auto pick = [&](uint64_t n) { return uint64_t(rng() % n); };
    // A pool of tensors and strided views used over and over, as a
    // kernel's buffers are: many share a begin address or a cache slot.
    std::vector<TensorDesc> pool;
    while (pool.size() < 150) {
      const Dtype dt = dtypes[pick(3)];
      const int64_t rows = int64_t(1 + pick(6)), cols = int64_t(1 + pick(24));
      const int64_t stride = pick(2) ? cols : cols + int64_t(pick(16));
      const uint64_t span = (uint64_t(rows - 1) * uint64_t(stride) + uint64_t(cols)) * dtype_bytes(dt);
      const uint64_t offset = pick(kWindow - span) / dtype_bytes(dt) * dtype_bytes(dt);
      pool.push_back(tensor(offset, rows, cols, stride, dt));
    }
    InitTracker init;
    ByteMap ref;
    int agreed_true = 0;
    for (int step = 0; step < 4000; ++step) {
      const TensorDesc& t = pool[pick(pool.size())];
      if (pick(6) == 0) {
        init.mark(t);
        ref.mark(t);
      } else {
        const bool want = ref.initialised(t);
        ASSERT_EQ(init.initialised(t), want) << "seed " << seed << " step " << step << " tensor at +"
                                             << t.address - kBase << " " << t.shape_string() << " stride "
                                             << t.row_stride;
        agreed_true += want;
      }
    }
    EXPECT_GT(agreed_true, 0) << "seed " << seed << ": no read found its tensor initialised";
  }
}

// A view of part of a marked tensor is initialised; one reaching a byte
// past it, or a strided view whose gap bytes were never marked but whose
// rows were, answer by their own bytes.
TEST(InitTracker, ViewsAndGaps) {
  InitTracker init;
  const TensorDesc whole = tensor(0, 4, 16, 16, Dtype::kFp32);  // bytes [0, 256)
  EXPECT_FALSE(init.initialised(whole));
  init.mark(whole);
  EXPECT_TRUE(init.initialised(whole));
  EXPECT_TRUE(init.initialised(tensor(64, 2, 8, 16, Dtype::kFp32)));   // rows 1-2, half the columns
  EXPECT_FALSE(init.initialised(tensor(192, 2, 16, 16, Dtype::kFp32)));  // row 3 and one past
  // Two columns of 4 rows, 64 bytes apart: marked row by row, the gaps stay unmarked.
  const TensorDesc strided = tensor(1024, 4, 4, 16, Dtype::kFp32);
  init.mark(strided);
  EXPECT_TRUE(init.initialised(strided));
  EXPECT_FALSE(init.initialised(tensor(1024, 1, 16, 16, Dtype::kFp32)));
  EXPECT_TRUE(init.initialised(tensor(1024 + 64, 3, 4, 16, Dtype::kFp32)));
  // Asked again, after many other ranges went through the cache.
  for (uint64_t i = 0; i < 200; ++i) init.mark(tensor(2048 + 16 * i, 1, 2, 2, Dtype::kFp32));
  EXPECT_TRUE(init.initialised(whole));
  EXPECT_FALSE(init.initialised(tensor(2048 + 8, 1, 4, 4, Dtype::kFp32)));  // bytes [2056, 2072): a gap
  EXPECT_FALSE(init.initialised(tensor(192, 2, 16, 16, Dtype::kFp32)));
}

}  // namespace
}  // namespace kb
