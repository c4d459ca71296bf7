#include "models/mem/sparse_memory.h"

#include <algorithm>
#include <cstring>

namespace kb {

uint8_t* SparseMemory::page(uint64_t address, bool create) {
  auto it = pages_.find(address / kPageBytes);
  if (it != pages_.end()) return it->second.get();
  if (!create) return nullptr;
  auto p = std::make_unique<uint8_t[]>(kPageBytes);
  std::memset(p.get(), 0, kPageBytes);
  return pages_.emplace(address / kPageBytes, std::move(p)).first->second.get();
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
