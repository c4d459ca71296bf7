// Data mode's element encodings: fp32 as IEEE single, bf16 as the upper half
// of an fp32 rounded to nearest even. Other dtypes have no values (data mode
// rejects them at dispatch, command_check.h).
#pragma once

#include <cstdint>

#include "models/isa/tensor_table.h"

namespace kb {

// fp32 -> bf16 bits, round to nearest, ties to even (NaN stays NaN).
uint16_t fp32_to_bf16_bits(float x);
float bf16_bits_to_fp32(uint16_t b);
// The value an fp32 takes when stored as `d` (identity for fp32).
float round_to_dtype(float x, Dtype d);
// One element's bytes (dtype_bytes(d) of them) <-> its value.
float decode_element(const uint8_t* bytes, Dtype d);
void encode_element(float value, Dtype d, uint8_t* bytes);

}  // namespace kb
