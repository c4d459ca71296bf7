// tl: the PE's programming interface, over the dispatch interface TlTarget
// (tl_target.h; PE_CPU implements it). Kernels include only this header.
// Every call that reaches PE_SCHEDULER becomes one PE command and pays the
// dispatch cost of docs/cost-model.md on PE_CPU; tl.cycles(n) costs exactly
// n cycles (D5).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "models/config/pe_config.h"
#include "models/isa/commands.h"
#include "models/isa/tensor_table.h"
#include "models/tl/tl_target.h"

namespace kb {

// A declared tensor or view: its handle plus a copy of its shape.
struct Tensor {
  Handle handle = 0;
  int64_t rows = 0, cols = 0;
  Dtype dtype = Dtype::kFp32;
  MemSpace space = MemSpace::kTcm;
  uint64_t bytes() const { return uint64_t(rows) * uint64_t(cols) * dtype_bytes(dtype); }
};

struct DotOptions {
  bool transpose_b = false;  // out = a @ b^T
  bool accumulate = false;   // out += a @ b
};

// OpSpec builders for tl.composite. A GEMM op carries m, k, n (and
// transpose_b / accumulate only when set) as typed extras
// (docs/cost-model.md D2/D3); math ops name their operands src_a, src_b.
OpSpec gemm_op(OpScope scope, const Tensor& out, const Tensor& a, const Tensor& b,
               DotOptions opt = {});
OpSpec math_op(MathOp op, OpScope scope, const Tensor& out,
               std::initializer_list<Tensor> operands, Extras extra = {});

// The same ops typed (docs/conventions.md 13: no text on the way to
// PE_SCHEDULER; a composite of them is CompositeCmd::built_typed and stands
// for the OpSpecs above, to_spec). `attr`: scale's factor or fill's value,
// unused by other math ops. A math op given the wrong number of operands
// throws KernelError at once.
TypedOp typed_gemm_op(OpScope scope, const Tensor& out, const Tensor& a, const Tensor& b,
                      DotOptions opt = {});
TypedOp typed_math_op(MathOp op, OpScope scope, const Tensor& out,
                      std::initializer_list<Tensor> operands, double attr = 0.0);

class Tl {
 public:
  Tl(TlTarget& cpu, TensorTable& table, const PeConfig& cfg, std::string kernel_name);

  // --- tensors (no command, no time: descriptor-table entries)
  Tensor hbm(const std::string& name, int64_t rows, int64_t cols, Dtype dtype);
  Tensor tcm(const std::string& name, int64_t rows, int64_t cols, Dtype dtype);
  // rows [row0, row0 + nrows) x cols [col0, col0 + ncols); ncols < 0: all.
  Tensor view(const Tensor& t, int64_t row0, int64_t nrows, int64_t col0 = 0,
              int64_t ncols = -1);
  Tensor rows(const Tensor& t, int64_t row0, int64_t nrows) { return view(t, row0, nrows); }
  // In global PE `owner`'s HBM slice (a cube or mesh).
  // Each PE allocates in a slice from the slice's start, so PEs that
  // declare the same tensors in a slice in the same order share them (SPMD
  // buffers), and the owner's own tl.hbm tensors start there too: a kernel
  // that places into another PE's slice shares those addresses with it.
  Tensor hbm_on(uint32_t owner, const std::string& name, int64_t rows, int64_t cols, Dtype dtype);

  // --- SPMD: where this PE sits. Global PE numbers are
  // cube * pes_per_cube + pe; cubes are row-major (y * mesh_w + x). A
  // single-PE top is a 1 x 1 mesh of one 1-PE cube.
  const PePlace& place() const { return cpu_.place(); }
  uint32_t cube_id() const { return place().cube; }
  uint32_t pe_id() const { return place().pe; }
  uint32_t global_pe() const { return place().global; }
  uint32_t mesh_h() const { return place().mesh_h; }
  uint32_t mesh_w() const { return place().mesh_w; }
  uint32_t pes_per_cube() const { return place().pes_per_cube; }
  uint32_t num_cubes() const { return place().cubes(); }
  uint32_t num_pes() const { return place().pes(); }

  // --- single-op commands (docs/cost-model.md D8 FIXED)
  void load(const Tensor& dst_tcm, const Tensor& src_hbm);   // DmaReadCmd
  void store(const Tensor& dst_hbm, const Tensor& src_tcm);  // DmaWriteCmd
  void copy(const Tensor& dst, const Tensor& src);           // CopyCmd
  void dot(const Tensor& out, const Tensor& a, const Tensor& b, DotOptions opt = {});  // GemmCmd
  // MathCmd: out = op(operands...)
  void math(MathOp op, const Tensor& out, std::initializer_list<Tensor> operands,
            Extras extra = {});
  void add(const Tensor& out, const Tensor& a, const Tensor& b) { math(MathOp::kAdd, out, {a, b}); }
  void sub(const Tensor& out, const Tensor& a, const Tensor& b) { math(MathOp::kSub, out, {a, b}); }
  void mul(const Tensor& out, const Tensor& a, const Tensor& b) { math(MathOp::kMul, out, {a, b}); }
  void max(const Tensor& out, const Tensor& a, const Tensor& b) { math(MathOp::kMax, out, {a, b}); }
  void div(const Tensor& out, const Tensor& a, const Tensor& b) { math(MathOp::kDiv, out, {a, b}); }
  // b is a [rows, 1] column broadcast across a's columns.
  void add_bcast(const Tensor& out, const Tensor& a, const Tensor& b) { math(MathOp::kAddBcast, out, {a, b}); }
  void sub_bcast(const Tensor& out, const Tensor& a, const Tensor& b) { math(MathOp::kSubBcast, out, {a, b}); }
  void mul_bcast(const Tensor& out, const Tensor& a, const Tensor& b) { math(MathOp::kMulBcast, out, {a, b}); }
  void div_bcast(const Tensor& out, const Tensor& a, const Tensor& b) { math(MathOp::kDivBcast, out, {a, b}); }
  void exp(const Tensor& out, const Tensor& a) { math(MathOp::kExp, out, {a}); }
  void scale(const Tensor& out, const Tensor& a, double factor) {
    math_with(MathOp::kScale, out, {a}, "factor", factor);
  }
  void fill(const Tensor& out, double value) { math_with(MathOp::kFill, out, {}, "value", value); }
  void rowmax(const Tensor& out, const Tensor& a) { math(MathOp::kRowMax, out, {a}); }
  void rowsum(const Tensor& out, const Tensor& a) { math(MathOp::kRowSum, out, {a}); }

  // --- IPC: single-op commands (docs/cost-model.md D8 FIXED) on
  // PE_IPC. send moves src's bytes into global PE dst_pe's IPC receive
  // queue; recv completes once the oldest message from global PE src_pe
  // has arrived, and leaves it in dst (same byte count).
  void send(const Tensor& src, uint32_t dst_pe);  // SendCmd
  void recv(const Tensor& dst, uint32_t src_pe);  // RecvCmd

  // --- composite (docs/cost-model.md D1, D7: over the cap throws at emit time)
  // One CompositeCmd: PE_SCHEDULER expands it into its tile plan. rw_handles
  // are read and written (hazards) and counted in logical_bytes.
  void composite(const std::string& name, std::vector<OpSpec> ops,
                 std::initializer_list<Tensor> rw_handles);
  void composite(const std::string& name, std::vector<TypedOp> ops,
                 std::initializer_list<Tensor> rw_handles);
  void composite(CompositeCmd cmd);

  // --- host access (zero simulated time, after the queue drains)
  // Inputs: seeded uniform values in [lo, hi), rounded to the dtype. In
  // timing mode nothing is stored, but the tensor counts as initialised.
  void host_random(const Tensor& t, uint64_t seed, double lo = -1.0, double hi = 1.0);
  void host_write(const Tensor& t, const std::vector<float>& values);
  std::vector<float> host_read(const Tensor& t);  // data mode only
  bool data_mode() const { return cfg_.data_mode; }

  // A pre-built command through the same dispatch path (e.g. replay).
  void emit(const Command& cmd);

  // --- PE_CPU control
  void cycles(uint64_t n);  // CpuOverheadCmd: exactly n cycles, no dispatch
  void wait();              // until every issued command has completed

  const PeConfig& config() const { return cfg_; }
  const std::string& kernel_name() const { return kernel_name_; }
  Tensor tensor(Handle h) const;
  // Running dispatch totals of this launch, and figures the kernel reports
  // about itself (they appear in the run's result and JSON).
  DispatchTotals dispatch_totals() const;
  void metric(const std::string& name, double value);
  // For testbenches that drive the dispatch interface directly
  // (command-stream replay declares tensors at recorded addresses); kernels
  // should not need it.
  TlTarget& cpu() { return cpu_; }

 private:
  // math() with the one float extra {{name, value}}, no Extras built.
  void math_with(MathOp op, const Tensor& out, std::initializer_list<Tensor> operands,
                 const char* name, double value);

  TlTarget& cpu_;
  TensorTable& table_;
  const PeConfig& cfg_;
  std::string kernel_name_;
};

}  // namespace kb
