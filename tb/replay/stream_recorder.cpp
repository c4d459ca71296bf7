// The recorder of tb/replay/command_stream.h: what PE_CPU sees, in the
// stream format.
#include "tb/replay/command_stream.h"

#include <cstdio>
#include <type_traits>
#include <variant>

#include "models/util/overloaded.h"
#include "tb/replay/stream_text.h"

namespace kb {

using cmdstream::encode;
using cmdstream::encode_operand;
using cmdstream::extras_text;
using cmdstream::float_text;

StreamRecorder::StreamRecorder(const std::string& path) : file_(path, "command stream") {
  out_ << cmdstream::kHeader << "\n";
}

void StreamRecorder::on_launch(const std::string& kernel) {
  out_ << "\nkernel " << encode(kernel) << "\n";
}

// Views are written as plain tensors: their address and row stride say
// everything the model uses, and a replayed declare_at gives the same bytes.
// Stream IDs are the recorder's own dense numbers in declaration order, so
// a live run and the replay of its stream record the same file.
uint64_t StreamRecorder::id(Handle h) const {
  auto it = ids_.find(h);
  return it == ids_.end() ? 0 : it->second;
}

void StreamRecorder::on_tensor(const TensorDesc& d, const std::string& name) {
  char addr[32];
  std::snprintf(addr, sizeof addr, "@0x%llx", (unsigned long long)d.address);
  ids_[d.handle] = next_id_;
  out_ << "tensor " << next_id_++ << " " << encode(name) << " " << to_string(d.space) << " "
       << to_string(d.dtype) << " " << d.rows << "x" << d.cols << " " << addr
       << " stride=" << d.row_stride << "\n";
}

void StreamRecorder::on_command(const Command& cmd) {
  std::visit(
      overloaded{
          [&](const GemmCmd& c) {  // out first, as a person reads "out = a @ b"
            out_ << "gemm out=" << id(c.out) << " a=" << id(c.a) << " b=" << id(c.b) << " m=" << c.m
                 << " n=" << c.n << " k=" << c.k << (c.transpose_b ? " transpose_b" : "")
                 << (c.accumulate ? " accumulate" : "") << "\n";
          },
          [&](const MathCmd& c) {
            out_ << "math " << to_string(c.op) << " out=" << id(c.out);
            // PE_CPU only records commands it accepted, so arity <= 2.
            for (size_t i = 0; i < c.operands.size(); ++i)
              out_ << (i == 0 ? " src_a=" : " src_b=") << id(c.operands[i]);
            out_ << extras_text(c.extra) << "\n";
          },
          [&](const CompositeCmd& c) {
            out_ << "composite " << encode(c.name);
            if (!c.rw_handles.empty()) {
              out_ << " rw=";
              for (size_t i = 0; i < c.rw_handles.size(); ++i)
                out_ << (i ? "," : "") << id(c.rw_handles[i]);
            }
            out_ << "\n";
            auto write_op = [&](const OpSpec& op) {
              out_ << "  op " << encode(op.kind) << " " << to_string(op.scope);
              if (op.has_out) out_ << " out=" << id(op.out);
              for (const NamedOperand& o : op.operands)
                out_ << " " << encode_operand(o.name) << "=" << id(o.handle);
              out_ << extras_text(op.extra) << "\n";
            };
            if (c.built_typed()) {
              for (const TypedOp& op : c.typed) write_op(to_spec(op));
            }
            for (const OpSpec& op : c.ops) write_op(op);
            out_ << "end\n";
          },
          [&](const CpuOverheadCmd& c) { out_ << "cycles " << c.cycles << "\n"; },
          [&](const auto& c) {  // fixed fields: KEYWORD key=value ..., a flag bare when set
            using T = std::decay_t<decltype(c)>;
            static_assert(has_fields_v<T>, "commands.h: a command lists its fields or has its own case here");
            out_ << T::kKeyword;
            for_each_field<T>([&](const auto& f) {
              using M = field_member_t<decltype(f)>;
              const M& v = c.*(f.member);
              if constexpr (std::is_same_v<M, Handle>) out_ << " " << f.key << "=" << id(v);
              else if constexpr (std::is_same_v<M, bool>) out_ << (v ? " " : "") << (v ? f.key : "");
              else out_ << " " << f.key << "=" << v;
            });
            out_ << "\n";
          }},
      cmd);
}

void StreamRecorder::on_wait() { out_ << "wait\n"; }

void StreamRecorder::on_host_fill(Handle h, uint64_t seed, double lo, double hi) {
  out_ << "host_random " << id(h) << " seed=" << seed << " lo=" << float_text(lo)
       << " hi=" << float_text(hi) << "\n";
}

void StreamRecorder::close() { file_.commit(); }

}  // namespace kb
