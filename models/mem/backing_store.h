// Data mode's memory: a sparse, byte-addressed store for HBM and TCM (their
// address ranges are disjoint, see tensor_table.h). Pages are allocated on
// first write, so timing mode, which never writes, allocates nothing.
// Elements are kept in their dtype's encoding: fp32 as IEEE single, bf16 as
// the upper half of an fp32 rounded to nearest even.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "models/pe/tensor_table.h"

namespace kb {

// fp32 -> bf16 bits, round to nearest, ties to even (NaN stays NaN).
uint16_t fp32_to_bf16_bits(float x);
float bf16_bits_to_fp32(uint16_t b);
// The value an fp32 takes when stored as `d` (identity for fp32).
float round_to_dtype(float x, Dtype d);

class BackingStore {
 public:
  float load(uint64_t address, Dtype d) const;
  void store(uint64_t address, Dtype d, float value);
  // Element [r, c] of a tensor or view (unsigned: no overflow for a
  // validated descriptor, see TensorTable::validate_tensor).
  static uint64_t element_address(const TensorDesc& t, int64_t r, int64_t c) {
    return t.address + (uint64_t(r) * uint64_t(t.row_stride) + uint64_t(c)) * dtype_bytes(t.dtype);
  }
  float get(const TensorDesc& t, int64_t r, int64_t c) const {
    return load(element_address(t, r, c), t.dtype);
  }
  void set(const TensorDesc& t, int64_t r, int64_t c, float v) {
    store(element_address(t, r, c), t.dtype, v);
  }
  uint64_t bytes() const { return pages_.size() * kPageBytes; }

 private:
  static constexpr uint64_t kPageBytes = 1 << 16;
  uint8_t* page(uint64_t address, bool create);
  const uint8_t* page(uint64_t address) const;
  // An element's bytes, which may straddle two pages (a misaligned address
  // the table would reject; kept correct here rather than trusted, issue 11).
  void read_bytes(uint64_t address, void* out, uint64_t n) const;
  void write_bytes(uint64_t address, const void* in, uint64_t n);
  std::unordered_map<uint64_t, std::unique_ptr<uint8_t[]>> pages_;
};

}  // namespace kb
