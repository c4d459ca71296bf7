#include "models/pe/engines/dtype_codec.h"

#include <cstring>
#include <string>

namespace kb {

namespace {
[[noreturn]] void no_values(Dtype d) {
  throw KernelError(std::string("data mode supports fp32 and bf16, not ") + to_string(d));
}
}  // namespace

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
    default: no_values(d);
  }
}

float decode_element(const uint8_t* bytes, Dtype d) {
  switch (d) {
    case Dtype::kFp32: {
      float x;
      std::memcpy(&x, bytes, 4);
      return x;
    }
    case Dtype::kBf16: {
      uint16_t b;
      std::memcpy(&b, bytes, 2);
      return bf16_bits_to_fp32(b);
    }
    default: no_values(d);
  }
}

void encode_element(float value, Dtype d, uint8_t* bytes) {
  switch (d) {
    case Dtype::kFp32: std::memcpy(bytes, &value, 4); return;
    case Dtype::kBf16: {
      const uint16_t b = fp32_to_bf16_bits(value);
      std::memcpy(bytes, &b, 2);
      return;
    }
    default: no_values(d);
  }
}

}  // namespace kb
