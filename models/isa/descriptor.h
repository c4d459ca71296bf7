// The binary descriptor of a command: the bytes a descriptor write carries
// into PE_SCHEDULER's queue, exactly logical_bytes() long
// (docs/cost-model.md D2). Plain C++ (commands.h only, no SystemC), so a
// VP's driver can include it.
//
// Little-endian throughout. Field sizes are D2's: framing 4, opcode 1,
// enum 1, tensor handle 8 (the address of a tensor descriptor), scalar 4,
// tuple length 1.
//
//   framing      type (1 byte, Type below) | completion id (3 bytes, the
//                command id modulo 2^24)
//   DmaRead, DmaWrite, Copy
//                dst handle, src handle                              = 20
//   Gemm         a, b, out handles; m, n, k (int32); transpose_b,
//                accumulate (1 byte each: 0 or 1)                    = 42
//   Math         opcode (MathOp); operand count, operand handles; out
//                handle; extras                                      = 4 + 1 + (1 + 8n) + 8 + extras
//   Composite    op count, ops; rw-handle count, rw handles          = 4 + (1 + ops) + (1 + 8r)
//   Send         src handle; destination global PE (uint32)          = 16
//   Recv         dst handle; source global PE (uint32)               = 16
//   op (OpSpec)  opcode (0: gemm, 1 + MathOp: math); scope (bits 0-1:
//                prologue 0, tile 1, epilogue 2; bit 7: has an out
//                handle); operand count, operand handles; out handle if
//                bit 7; extras
//   extras       count (1 byte), then the op's fields in a fixed order
//                (D2 counts no names, so the order names them):
//                gemm: m, k, n (int32), then one byte per flag set:
//                  bit 0 its value, bits 1-7 which flag (0 transpose_b,
//                  1 accumulate);
//                scale: factor (float32); fill: value (float32);
//                every other op: none.
//
// Operand names are slot positions (gemm: a, b; math: src_a, src_b), and a
// composite's name is not part of the descriptor (D2 counts neither).
// A command whose fields do not fit (a scalar past int32, more than 255
// operands, an extra with no field) is refused with EncodeError; bytes
// that are not a descriptor with DecodeError, which says what was expected
// where (DecodeError::code classifies it as a regs::ErrorCode).
// tl.cycles(n) (CpuOverheadCmd) is never written: it has no descriptor.
//
// Tensor descriptor: the kTensorDescBytes (64) bytes of
// one entry of the tensor table (register_map.h), little-endian:
//
//   offset  size  field
//   0       1     memory space (MemSpace: 0 HBM, 1 TCM)
//   1       1     dtype (Dtype: 0 fp32, 1 bf16, 2 fp16, 3 int8)
//   2       6     reserved, 0
//   8       8     byte address of element [0, 0] (u64)
//   16      8     rows (i64)
//   24      8     cols (i64)
//   32      8     row stride, elements (i64)
//   40      8     column stride, elements (i64): 1
//   48      16    name, ASCII, NUL-padded (for messages; may be empty)
//
// decode_tensor checks the layout only (known enums, reserved bytes 0,
// column stride 1, printable name); TensorTable::install then validates the
// tensor itself (shape, alignment, span inside its memory space).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/isa/commands.h"
#include "models/isa/register_map.h"
#include "models/isa/tensor_table.h"

namespace kb::desc {

// A descriptor's type byte: the command's position in Command + 1
// (1 dma_read, 2 dma_write, 3 gemm, 4 math, 5 copy, 6 composite, 8 send,
// 9 recv; a test pins them). 7 would be CpuOverheadCmd, which has none.
template <class T>
constexpr uint8_t type_byte() {
  return uint8_t(command_index_v<T> + 1);
}
template <class T>
constexpr bool has_descriptor() {
  return T::kFixed != FixedClass::kNone;
}

struct EncodeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// `code`: kUnknownType (the type byte), kBadLength (the bytes end inside a
// field or after the last one), kMalformed (a field's value), kBadTensor
// (decode_tensor).
struct DecodeError : std::runtime_error {
  explicit DecodeError(const std::string& what, regs::ErrorCode c = regs::ErrorCode::kMalformed)
      : std::runtime_error(what), code(c) {}
  regs::ErrorCode code;
};

constexpr uint32_t kCompletionIdMask = 0xFFFFFF;  // 24 bits of framing

// The descriptor's bytes: exactly logical_bytes(c), from the command's own
// fields (a composite's op kinds and operands from its text).
std::vector<uint8_t> encode(const Command& c, uint32_t completion_id);
// The same into `out` (resized to logical_bytes(c) first): a reused buffer
// keeps its capacity, so a warm writer allocates nothing per command.
void encode_into(const Command& c, uint32_t completion_id, std::vector<uint8_t>& out);
// PE_CPU's dispatch (once per command): `c` has just passed check_command, so
// a composite's c.typed is its ops decoded now and gives the op kinds and
// GEMM operands without comparing strings; `bytes` is logical_bytes(c) as
// PE_CPU costed it, not counted again (a wrong one is an EncodeError).
void encode_dispatched(const Command& c, uint32_t completion_id, uint32_t bytes, std::vector<uint8_t>& out);

struct Decoded {
  Command cmd;
  uint32_t completion_id = 0;
};
Decoded decode(const uint8_t* data, size_t size);

// A tensor descriptor's bytes (layout above). `d.handle` is not encoded:
// the handle is where the entry lives. EncodeError for a name longer than
// 16 bytes or not printable ASCII.
std::array<uint8_t, regs::kTensorDescBytes> encode_tensor(const TensorDesc& d, const std::string& name);
// Fills space, dtype, address, rows, cols, row_stride and name (handle 0).
// DecodeError (code kBadTensor) names the field and what was expected.
TensorDesc decode_tensor(const uint8_t* data, size_t size);

}  // namespace kb::desc
