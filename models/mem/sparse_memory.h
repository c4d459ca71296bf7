// Storage of a memory target in data mode: sparse, byte addressed. Pages are
// allocated on first write, so a target that never stores (timing mode, or a
// tensor nobody wrote) allocates nothing; unwritten bytes read as zero.
//
// The pages of every SparseMemory of a process share one cap
// (set_storage_limit; docs/cli.md, "Memory limits"): a write that needs a
// page past it throws StorageLimitError, saying how much is held and the
// cap, instead of growing until the allocator fails.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <unordered_map>

namespace kb {

struct StorageLimitError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class SparseMemory {
 public:
  SparseMemory() = default;
  ~SparseMemory();
  SparseMemory(const SparseMemory&) = delete;
  SparseMemory& operator=(const SparseMemory&) = delete;
  // The cap on the pages of every SparseMemory of this process, bytes
  // (0: none, the default); what is held now.
  static void set_storage_limit(uint64_t bytes) { limit_bytes_ = bytes; }
  static uint64_t storage_limit() { return limit_bytes_; }
  static uint64_t storage_held() { return held_bytes_; }
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
  static inline uint64_t limit_bytes_ = 0;
  static inline uint64_t held_bytes_ = 0;
};

}  // namespace kb
