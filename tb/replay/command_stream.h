// The recorded PE_CPU command stream (docs/cost-model.md TR7):
// StreamRecorder writes every tensor declaration, command,
// tl.wait() and tl.host_random() of a live run to a text file; load_command_stream turns such a
// file (or a hand-written one) back into kernels that replay it through the
// same dispatch path, so both give identical dispatch accounting, op logs and
// latency.
//
// ---------------------------------------------------------------------------
// Format: kernbench command stream, version 1
//
// Plain text, one item per line, fields separated by spaces or tabs. Leading
// whitespace (indentation) is ignored. Blank lines and lines whose first
// non-blank character is '#' are comments. The first line must be exactly
//
//   # kernbench command stream v1
//
// Every other line starts with a keyword:
//
//   kernel NAME
//       Starts a kernel launch: the lines up to the next `kernel` are its
//       body. Only comments may come before the first `kernel`.
//   tensor ID NAME SPACE DTYPE ROWSxCOLS @ADDRESS [stride=ROW_STRIDE]
//       A tensor descriptor (no command, no time). SPACE hbm|tcm; DTYPE
//       fp32|bf16|fp16|int8; ADDRESS the byte address in hex (0x...; HBM
//       starts at 0x10000000000, TCM at 0x0); ROW_STRIDE elements between
//       rows, COLS when omitted. A view is a plain tensor line with its own
//       address and its base's row stride.
//   dma_read  dst=ID src=ID                       DmaReadCmd  (tl.load)
//   dma_write dst=ID src=ID                       DmaWriteCmd (tl.store)
//   copy      dst=ID src=ID                       CopyCmd     (tl.copy)
//   send      src=ID dst_pe=PE                    SendCmd     (tl.send; PE a global PE number)
//   recv      dst=ID src_pe=PE                    RecvCmd     (tl.recv)
//   gemm out=ID a=ID b=ID m=M n=N k=K [transpose_b] [accumulate]
//                                                 GemmCmd     (tl.dot)
//   math OP out=ID [src_a=ID] [src_b=ID] [extra=...]...
//                                                 MathCmd; OP a math op's name
//       (models/isa/math_ops.h, kMathOps); src_b needs src_a.
//   composite NAME [rw=ID,ID,...]                 CompositeCmd; its OpSpecs
//     op KIND SCOPE [out=ID] OPERAND=ID... [extra=...]...   follow, one per
//   end                                           line, closed by `end`.
//       KIND gemm or a math op name; SCOPE prologue|tile|epilogue; operands
//       in OpSpec order under their OpSpec names (gemm: a b, math: src_a
//       src_b). A gemm op carries m, n, k (and transpose_b, accumulate) as
//       extras, as tl's gemm_op builds it.
//   cycles N                                      tl.cycles(N)
//   wait                                          tl.wait()
//   host_random ID seed=SEED [lo=LO] [hi=HI]      tl.host_random: the host
//       initialises the tensor with seeded uniform values in [LO, HI)
//       (floats as in extras; default -1 and 1), after the queue drains.
//       (tl.host_write's explicit values are not recorded: PE_CPU does not
//       report them, so a replay of such a kernel reads them uninitialised.)
//
// KEY=VALUE fields may come in any order, except that `op` operands and
// extras keep their order. Numbers are decimal integers unless stated.
//
// IDs are the stream's own tensor numbers (the recorder numbers tensors 1,
// 2, ... in declaration order; a hand-written file may use any). An ID is
// declared by one
// `tensor` line before it is used and is valid to the end of the file, like
// a handle in the run's descriptor table (a later kernel section may use it
// when the sections run in order in one run).
//
// Extras: extra=NAME:TYPE:VALUE with TYPE
//   bool   0 or 1                  extra=transpose_b:bool:1
//   int    64-bit integer          extra=m:int:64
//   float  a double; the recorder writes the shortest text that reads back
//          exactly (std::to_chars); inf, -inf and nan are allowed
//                                  extra=factor:float:0.08838834764831843
//   ints   comma-separated integers, possibly none
//                                  extra=shape:ints:64,64
//   str    the rest of the field   extra=tag:str:rows
//
// Names (kernel, tensor, composite, operand and extra names, str values) are
// written with %XX escapes (two hex digits) for bytes that would split or
// confuse a field: space and other bytes <= 0x20, 0x7f, '%', '=', '"', and
// ':' in extra names. `""` is the empty name. An operand literally named
// `out` or `extra` is written %6Fut / %65xtra.
//
// The loader checks syntax and IDs only; tensors (alignment, span, memory
// space, TCM capacity) are checked by the descriptor table and commands by
// PE_CPU at dispatch, exactly as for a live kernel: such an error fails the
// run (exit status 1) as "FILE:LINE: <the live kernel's message> (the
// line)". A file is read only if it is a regular file of at most
// kMaxStreamFileBytes without NUL bytes (else StreamError, exit status 2).
//
// Example:
//   # kernbench command stream v1
//   kernel scaled_copy
//   tensor 1 x hbm bf16 64x64 @0x10000000000
//   tensor 2 a tcm bf16 64x64 @0x0
//   host_random 1 seed=7
//   dma_read dst=2 src=1
//   math scale out=2 src_a=2 extra=factor:float:0.5
//   wait
//   dma_write dst=1 src=2
// ---------------------------------------------------------------------------
#pragma once

#include <fstream>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "models/pe/cpu/pe_cpu.h"
#include "models/util/output_file.h"

namespace kb {

// A malformed stream: "FILE:LINE: what is wrong (the offending line)".
struct StreamError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Writes what PE_CPU sees to `path` in the format above. Attach it with
// PeCpu::set_observer for the whole run, then close() it.
class StreamRecorder : public CpuObserver {
 public:
  explicit StreamRecorder(const std::string& path);  // throws OutputError naming path
  void on_launch(const std::string& kernel) override;
  void on_tensor(const TensorDesc& d, const std::string& name) override;
  void on_command(const Command& cmd) override;
  void on_wait() override;
  void on_host_fill(Handle h, uint64_t seed, double lo, double hi) override;
  // Checks every write and moves the file into place (OutputFile); throws
  // OutputError naming the path. Without it, nothing is written.
  void close();

 private:
  uint64_t id(Handle h) const;
  OutputFile file_;
  std::ostream& out_ = file_.stream();
  std::unordered_map<Handle, uint64_t> ids_;
  uint64_t next_id_ = 1;
};

// Parses a whole stream up front (errors surface before any simulation) and
// returns one kernel per `kernel` section, named as in the file. Each kernel
// replays its section through the live dispatch path: tensors via
// PeCpu::declare_at, commands via tl.emit, cycles via tl.cycles, waits via
// tl.wait. Throws StreamError. Memory is linear in the file: its text once
// plus one small record per line and per section.
std::vector<std::pair<std::string, Kernel>> load_command_stream(const std::string& path);
// The same from text; `source` names it in messages.
std::vector<std::pair<std::string, Kernel>> parse_command_stream(const std::string& text,
                                                                 const std::string& source);

}  // namespace kb
