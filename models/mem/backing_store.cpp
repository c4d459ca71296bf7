#include "models/mem/backing_store.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace kb {

uint16_t fp32_to_bf16_bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu)) {
    return uint16_t((u >> 16) | 0x40);  // quiet NaN
  }
  const uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);  // ties to even
  return uint16_t((u + rounding) >> 16);
}

float bf16_bits_to_fp32(uint16_t b) {
  const uint32_t u = uint32_t(b) << 16;
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

float round_to_dtype(float x, Dtype d) {
  switch (d) {
    case Dtype::kFp32: return x;
    case Dtype::kBf16: return bf16_bits_to_fp32(fp32_to_bf16_bits(x));
    default: throw KernelError(std::string("data mode supports fp32 and bf16, not ") + to_string(d));
  }
}

uint8_t* BackingStore::page(uint64_t address, bool create) {
  auto it = pages_.find(address / kPageBytes);
  if (it != pages_.end()) return it->second.get();
  if (!create) return nullptr;
  auto p = std::make_unique<uint8_t[]>(kPageBytes);  // zero-filled
  std::memset(p.get(), 0, kPageBytes);
  return pages_.emplace(address / kPageBytes, std::move(p)).first->second.get();
}

const uint8_t* BackingStore::page(uint64_t address) const {
  auto it = pages_.find(address / kPageBytes);
  return it == pages_.end() ? nullptr : it->second.get();
}

void BackingStore::read_bytes(uint64_t address, void* out, uint64_t n) const {
  auto* dst = static_cast<uint8_t*>(out);
  while (n > 0) {
    const uint64_t off = address % kPageBytes;
    const uint64_t chunk = std::min(n, kPageBytes - off);  // never past this page
    if (const uint8_t* p = page(address)) std::memcpy(dst, p + off, chunk);
    else std::memset(dst, 0, chunk);
    dst += chunk;
    n -= chunk;
    address += chunk;  // wraps at 2^64 like the address map, never past a page
  }
}

void BackingStore::write_bytes(uint64_t address, const void* in, uint64_t n) {
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

float BackingStore::load(uint64_t address, Dtype d) const {
  switch (d) {
    case Dtype::kFp32: {
      float x;
      read_bytes(address, &x, 4);
      return x;
    }
    case Dtype::kBf16: {
      uint16_t b;
      read_bytes(address, &b, 2);
      return bf16_bits_to_fp32(b);
    }
    default: throw KernelError(std::string("data mode supports fp32 and bf16, not ") + to_string(d));
  }
}

void BackingStore::store(uint64_t address, Dtype d, float value) {
  switch (d) {
    case Dtype::kFp32: write_bytes(address, &value, 4); return;
    case Dtype::kBf16: {
      const uint16_t b = fp32_to_bf16_bits(value);
      write_bytes(address, &b, 2);
      return;
    }
    default: throw KernelError(std::string("data mode supports fp32 and bf16, not ") + to_string(d));
  }
}

}  // namespace kb
