#include "models/mem/sparse_memory.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace kb {

namespace {
std::string mib(uint64_t bytes) { return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB"; }
}  // namespace

SparseMemory::~SparseMemory() { held_bytes_ -= pages_.size() * kPageBytes; }

uint8_t* SparseMemory::page(uint64_t address, bool create) {
  auto it = pages_.find(address / kPageBytes);
  if (it != pages_.end()) return it->second.get();
  if (!create) return nullptr;
  if (limit_bytes_ > 0 && held_bytes_ + kPageBytes > limit_bytes_) {
    throw StorageLimitError("data mode: the memories' storage would pass its limit of " + mib(limit_bytes_) +
                            " (" + mib(held_bytes_) +
                            " held; the limit is --max-memory, or the memory this machine has, less the "
                            "model's own; docs/cli.md, \"Memory limits\"): run a smaller size or fewer PEs, "
                            "or without --data");
  }
  auto p = std::make_unique<uint8_t[]>(kPageBytes);
  std::memset(p.get(), 0, kPageBytes);
  uint8_t* at = pages_.emplace(address / kPageBytes, std::move(p)).first->second.get();
  held_bytes_ += kPageBytes;
  return at;
}

const uint8_t* SparseMemory::page(uint64_t address) const {
  auto it = pages_.find(address / kPageBytes);
  return it == pages_.end() ? nullptr : it->second.get();
}

void SparseMemory::read(uint64_t address, void* out, uint64_t n) const {
  auto* dst = static_cast<uint8_t*>(out);
  while (n > 0) {
    const uint64_t off = address % kPageBytes;
    const uint64_t chunk = std::min(n, kPageBytes - off);  // never past this page
    if (const uint8_t* p = page(address)) std::memcpy(dst, p + off, chunk);
    else std::memset(dst, 0, chunk);
    dst += chunk;
    n -= chunk;
    address += chunk;  // wraps at 2^64, never past a page
  }
}

void SparseMemory::write(uint64_t address, const void* in, uint64_t n) {
  const auto* src = static_cast<const uint8_t*>(in);
  while (n > 0) {
    const uint64_t off = address % kPageBytes;
    const uint64_t chunk = std::min(n, kPageBytes - off);
    std::memcpy(page(address, true) + off, src, chunk);
    src += chunk;
    n -= chunk;
    address += chunk;
  }
}

}  // namespace kb
