// Storage of a memory target in data mode: sparse, byte addressed. Pages are
// allocated on first write, so a target that never stores (timing mode, or a
// tensor nobody wrote) allocates nothing; unwritten bytes read as zero.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>

namespace kb {

class SparseMemory {
 public:
  // n bytes at `address`; an access may straddle pages and wraps at 2^64
  // like the address map, never past a page's allocation.
  void read(uint64_t address, void* out, uint64_t n) const;
  void write(uint64_t address, const void* in, uint64_t n);
  uint64_t bytes() const { return pages_.size() * kPageBytes; }  // allocated

 private:
  static constexpr uint64_t kPageBytes = 1 << 16;
  uint8_t* page(uint64_t address, bool create);
  const uint8_t* page(uint64_t address) const;
  std::unordered_map<uint64_t, std::unique_ptr<uint8_t[]>> pages_;
};

}  // namespace kb
