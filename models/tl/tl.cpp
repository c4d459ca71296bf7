#include "models/tl/tl.h"

#include <utility>
#include <variant>

namespace kb {

Tl::Tl(TlTarget& cpu, TensorTable& table, const PeConfig& cfg, std::string kernel_name)
    : cpu_(cpu), table_(table), cfg_(cfg), kernel_name_(std::move(kernel_name)) {}

Tensor Tl::tensor(Handle h) const {
  const TensorDesc& d = table_.at(h);
  return Tensor{h, d.rows, d.cols, d.dtype, d.space};
}

namespace {
// Descriptor-table mistakes name the kernel, like command errors do.
template <class F>
Handle in_kernel(const std::string& kernel, F f) {
  try {
    return f();
  } catch (const CommandFault&) {
    throw;  // names its kernel and command already
  } catch (const KernelError& e) {
    throw KernelError("kernel '" + kernel + "': " + e.what());
  }
}
}  // namespace

Tensor Tl::hbm(const std::string& name, int64_t rows, int64_t cols, Dtype dtype) {
  return tensor(in_kernel(kernel_name_, [&] { return cpu_.declare(name, MemSpace::kHbm, rows, cols, dtype); }));
}

Tensor Tl::tcm(const std::string& name, int64_t rows, int64_t cols, Dtype dtype) {
  return tensor(in_kernel(kernel_name_, [&] { return cpu_.declare(name, MemSpace::kTcm, rows, cols, dtype); }));
}

Tensor Tl::view(const Tensor& t, int64_t row0, int64_t nrows, int64_t col0, int64_t ncols) {
  return tensor(in_kernel(kernel_name_, [&] {
    // "All columns from col0"; a col0 out of range gets 0 columns, which the
    // table rejects naming the view (t.cols - col0 could overflow).
    const int64_t rest = col0 >= 0 && col0 <= t.cols ? t.cols - col0 : 0;
    return cpu_.view(t.handle, row0, nrows, col0, ncols < 0 ? rest : ncols);
  }));
}

namespace {
// The command to build in `cmd` (TlTarget::next_command()): the alternative
// already there is reused, its fields all set by the caller (once per command).
template <class T>
T& build(Command& cmd) {
  if (T* c = std::get_if<T>(&cmd)) return *c;
  return cmd.emplace<T>();
}

// A MathCmd's fields but its extras.
MathCmd& build_math(Command& cmd, MathOp op, const Tensor& out, std::initializer_list<Tensor> operands) {
  MathCmd& c = build<MathCmd>(cmd);
  c.op = op;
  c.operands.clear();
  for (const Tensor& t : operands) c.operands.push_back(t.handle);  // inline: no allocation
  c.out = out.handle;
  return c;
}
}  // namespace

void Tl::load(const Tensor& dst, const Tensor& src) {
  DmaReadCmd& c = build<DmaReadCmd>(cpu_.next_command());
  c.dst = dst.handle;
  c.src = src.handle;
  cpu_.dispatch_next();
}

void Tl::store(const Tensor& dst, const Tensor& src) {
  DmaWriteCmd& c = build<DmaWriteCmd>(cpu_.next_command());
  c.dst = dst.handle;
  c.src = src.handle;
  cpu_.dispatch_next();
}

void Tl::copy(const Tensor& dst, const Tensor& src) {
  CopyCmd& c = build<CopyCmd>(cpu_.next_command());
  c.dst = dst.handle;
  c.src = src.handle;
  cpu_.dispatch_next();
}

void Tl::dot(const Tensor& out, const Tensor& a, const Tensor& b, DotOptions opt) {
  GemmCmd& c = build<GemmCmd>(cpu_.next_command());
  c.a = a.handle;
  c.b = b.handle;
  c.out = out.handle;
  c.m = a.rows;
  c.k = a.cols;
  c.n = opt.transpose_b ? b.rows : b.cols;
  c.transpose_b = opt.transpose_b;
  c.accumulate = opt.accumulate;
  cpu_.dispatch_next();
}

void Tl::math(MathOp op, const Tensor& out, std::initializer_list<Tensor> operands,
              Extras extra) {
  MathCmd& c = build_math(cpu_.next_command(), op, out, operands);
  if (extra.empty()) {
    c.extra.clear();  // the slot keeps its capacity
  } else {
    c.extra = std::move(extra);
  }
  cpu_.dispatch_next();
}

void Tl::math_with(MathOp op, const Tensor& out, std::initializer_list<Tensor> operands,
                   const char* name, double value) {
  MathCmd& c = build_math(cpu_.next_command(), op, out, operands);
  // One float extra, as {{name, value}} would be, in the slot's own storage.
  c.extra.resize(1);
  c.extra[0].name.assign(name);
  c.extra[0].value = value;
  cpu_.dispatch_next();
}

OpSpec gemm_op(OpScope scope, const Tensor& out, const Tensor& a, const Tensor& b,
               DotOptions opt) {
  OpSpec op{"gemm", scope};
  op.operands = {{"a", a.handle}, {"b", b.handle}};
  op.has_out = true;
  op.out = out.handle;
  op.extra = {{"m", a.rows}, {"k", a.cols}, {"n", opt.transpose_b ? b.rows : b.cols}};
  if (opt.transpose_b) op.extra.push_back({"transpose_b", true});
  if (opt.accumulate) op.extra.push_back({"accumulate", true});
  return op;
}

OpSpec math_op(MathOp kind, OpScope scope, const Tensor& out,
               std::initializer_list<Tensor> operands, Extras extra) {
  static const char* const kSlots[] = {"src_a", "src_b"};
  OpSpec op{to_string(kind), scope};  // the kind constructed, not assigned into an empty string
  size_t i = 0;
  op.operands.reserve(operands.size());  // one allocation, not one per operand
  for (const Tensor& t : operands) op.operands.push_back({kSlots[i++ % 2], t.handle});
  op.has_out = true;
  op.out = out.handle;
  op.extra = std::move(extra);
  return op;
}

namespace {
// A composite's name and rw handles, its ops to come.
CompositeCmd composite_of(const std::string& name, std::initializer_list<Tensor> rw_handles) {
  CompositeCmd c;
  c.name = name;
  c.rw_handles.reserve(rw_handles.size());
  for (const Tensor& t : rw_handles) c.rw_handles.push_back(t.handle);
  return c;
}
}  // namespace

void Tl::composite(const std::string& name, std::vector<OpSpec> ops,
                   std::initializer_list<Tensor> rw_handles) {
  CompositeCmd c = composite_of(name, rw_handles);
  c.ops = std::move(ops);
  cpu_.dispatch(Command(std::move(c)));
}

TypedOp typed_gemm_op(OpScope scope, const Tensor& out, const Tensor& a, const Tensor& b,
                      DotOptions opt) {
  TypedOp op;
  op.kind = OpKind::kGemm;
  op.scope = scope;
  op.in[0] = a.handle;
  op.in[1] = b.handle;
  op.inputs = 2;
  op.out = out.handle;
  op.gemm = {a.rows, opt.transpose_b ? b.rows : b.cols, a.cols, opt.transpose_b, opt.accumulate};
  return op;
}

TypedOp typed_math_op(MathOp kind, OpScope scope, const Tensor& out,
                      std::initializer_list<Tensor> operands, double attr) {
  if (int(operands.size()) != math_op_arity(kind)) throw KernelError(math_arity_error(kind, operands.size()));
  TypedOp op;
  op.kind = OpKind::kMath;
  op.math = kind;
  op.scope = scope;
  int i = 0;
  for (const Tensor& t : operands) op.in[i++] = t.handle;
  op.inputs = i;
  op.out = out.handle;
  const MathAttr a = math_op_attr(kind);  // the op's extra, if it takes one
  if (a == MathAttr::kFactor) op.attrs.factor = attr;
  if (a == MathAttr::kValue) op.attrs.value = attr;
  return op;
}

void Tl::composite(const std::string& name, std::vector<TypedOp> ops,
                   std::initializer_list<Tensor> rw_handles) {
  CompositeCmd c = composite_of(name, rw_handles);
  c.typed = std::move(ops);
  cpu_.dispatch(Command(std::move(c)));
}

void Tl::composite(CompositeCmd cmd) { cpu_.dispatch(Command(std::move(cmd))); }

void Tl::emit(const Command& cmd) { cpu_.dispatch(Command(cmd)); }

// Host access errors name the kernel too (e.g. data mode and an fp16 tensor).
void Tl::host_random(const Tensor& t, uint64_t seed, double lo, double hi) {
  in_kernel(kernel_name_, [&] {
    cpu_.host_fill_random(t.handle, seed, lo, hi);
    return t.handle;
  });
}

void Tl::host_write(const Tensor& t, const std::vector<float>& values) {
  in_kernel(kernel_name_, [&] {
    cpu_.host_write(t.handle, values);
    return t.handle;
  });
}

std::vector<float> Tl::host_read(const Tensor& t) {
  std::vector<float> v;
  in_kernel(kernel_name_, [&] {
    v = cpu_.host_read(t.handle);
    return t.handle;
  });
  return v;
}

DispatchTotals Tl::dispatch_totals() const { return cpu_.dispatch_totals(); }

void Tl::metric(const std::string& name, double value) { cpu_.add_metric(name, value); }

void Tl::cycles(uint64_t n) { cpu_.dispatch(CpuOverheadCmd{n}); }

void Tl::wait() { cpu_.kernel_wait(); }

// Cubes and meshes: another PE's HBM slice, messages between PEs.
Tensor Tl::hbm_on(uint32_t owner, const std::string& name, int64_t rows, int64_t cols, Dtype dtype) {
  return tensor(in_kernel(kernel_name_, [&] { return cpu_.declare_on(owner, name, rows, cols, dtype); }));
}
void Tl::send(const Tensor& src, uint32_t dst_pe) { cpu_.dispatch(SendCmd{src.handle, dst_pe}); }
void Tl::recv(const Tensor& dst, uint32_t src_pe) { cpu_.dispatch(RecvCmd{dst.handle, src_pe}); }

}  // namespace kb
