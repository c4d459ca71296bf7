#include "models/mem/backing_store.h"

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

float BackingStore::load(uint64_t address, Dtype d) const {
  const uint8_t* p = page(address);
  const uint64_t off = address % kPageBytes;  // elements never straddle pages
  switch (d) {
    case Dtype::kFp32: {
      float x = 0;
      if (p) std::memcpy(&x, p + off, 4);
      return x;
    }
    case Dtype::kBf16: {
      uint16_t b = 0;
      if (p) std::memcpy(&b, p + off, 2);
      return bf16_bits_to_fp32(b);
    }
    default: throw KernelError(std::string("data mode supports fp32 and bf16, not ") + to_string(d));
  }
}

void BackingStore::store(uint64_t address, Dtype d, float value) {
  uint8_t* p = page(address, true) + address % kPageBytes;
  switch (d) {
    case Dtype::kFp32: std::memcpy(p, &value, 4); return;
    case Dtype::kBf16: {
      const uint16_t b = fp32_to_bf16_bits(value);
      std::memcpy(p, &b, 2);
      return;
    }
    default: throw KernelError(std::string("data mode supports fp32 and bf16, not ") + to_string(d));
  }
}

}  // namespace kb
