// The loader of tb/replay/command_stream.h: a parsed stream
// (tb/replay/stream_parser.h) as kernels that replay it through the live
// dispatch path.
#include "tb/replay/command_stream.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <type_traits>
#include <variant>

#include "models/tl/tl.h"
#include "models/util/input_file.h"
#include "models/util/overloaded.h"
#include "tb/replay/stream_parser.h"
#include "tb/replay/stream_text.h"

namespace kb {

namespace {

using cmdstream::Section;
using cmdstream::shorten;
using cmdstream::Step;
using cmdstream::Stream;

// Replaces every stream ID in a command by its live handle.
Command with_handles(Command cmd, const std::function<Handle(Handle)>& h) {
  std::visit(overloaded{
                        [&](MathCmd& c) {
                          for (Handle& o : c.operands) o = h(o);
                          c.out = h(c.out);
                        },
                        [&](CompositeCmd& c) {
                          for (OpSpec& op : c.ops) {
                            for (NamedOperand& o : op.operands) o.handle = h(o.handle);
                            if (op.has_out) op.out = h(op.out);
                          }
                          for (TypedOp& op : c.typed) {
                            for (int i = 0; i < op.inputs && i < 2; ++i) op.in[i] = h(op.in[i]);
                            op.out = h(op.out);
                          }
                          for (Handle& r : c.rw_handles) r = h(r);
                        },
                        [&](CpuOverheadCmd&) {},
                        [&](auto& c) {  // fixed fields: each handle field
                          using T = std::decay_t<decltype(c)>;
                          static_assert(has_fields_v<T>, "commands.h: a command lists its fields or has its own case here");
                          for_each_field<T>([&](const auto& f) {
                            if constexpr (std::is_same_v<field_member_t<decltype(f)>, Handle>)
                              c.*(f.member) = h(c.*(f.member));
                          });
                        }},
             cmd);
  return cmd;
}

void replay_steps(Tl& tl, Stream& st, const Section& sec,
                  std::vector<std::pair<uint64_t, size_t>>& by_id,
                  std::vector<std::pair<uint64_t, size_t>>& by_ticket);

// Replays section `index` of the stream. An error names the stream's file
// and line, and the offending line; a kernel error keeps its class (the run
// failed, exit status 1) and its message as a live kernel gets it.
void replay(Tl& tl, Stream& st, size_t index) {
  const Section& sec = st.sections[index];
  // A command can fail after its line was replayed (PE_CPU runs ahead): its
  // ID or ticket (CommandFault) maps back to its step. Both grow in order.
  std::vector<std::pair<uint64_t, size_t>> by_id, by_ticket;
  const auto fault_step = [&](const CommandFault& f) -> const Step* {
    const auto& v = f.cmd_id ? by_id : by_ticket;
    const uint64_t key = f.cmd_id ? f.cmd_id : f.ticket;
    const auto it = std::lower_bound(v.begin(), v.end(), std::make_pair(key, size_t(0)));
    return it != v.end() && it->first == key ? &st.steps[it->second] : nullptr;
  };
  try {
    replay_steps(tl, st, sec, by_id, by_ticket);
    tl.cpu().drain();  // here, so that a late failure still finds its line
  } catch (const CommandFault& f) {
    const Step* s = fault_step(f);
    if (!s) throw;
    throw KernelError(st.source + ":" + std::to_string(s->line) + ": " + f.what() + " (" +
                      shorten(st.line_text(*s)) + ")");
  }
}

void replay_steps(Tl& tl, Stream& st, const Section& sec,
                  std::vector<std::pair<uint64_t, size_t>>& by_id,
                  std::vector<std::pair<uint64_t, size_t>>& by_ticket) {
  for (size_t i = sec.begin; i < sec.end; ++i) {
    const Step& s = st.steps[i];
    const auto where = [&] { return st.source + ":" + std::to_string(s.line) + ": "; };
    const auto line = [&] { return " (" + shorten(st.line_text(s)) + ")"; };
    // The parser saw every ID declared earlier in the file; it can only be
    // missing here when that earlier section did not run in this run.
    const auto handle = [&](Handle id) {
      const auto it = st.ids.find(id);
      if (it == st.ids.end()) {
        throw StreamError(where() + "tensor ID " + std::to_string(id) +
                          " was declared by a kernel section that has not run" + line());
      }
      return it->second;
    };
    try {
      // Declarations and host fills are named by kernel like tl's (PE_CPU
      // names the kernel and command of a rejected command itself).
      const auto in_kernel = [&](const auto& f) {
        try {
          f();
        } catch (const CommandFault&) {
          throw;  // an earlier command failed meanwhile (a host fill drains)
        } catch (const KernelError& e) {
          throw KernelError("kernel '" + sec.name + "': " + e.what());
        }
      };
      std::visit(overloaded{[&](const cmdstream::TensorLine& d) {
                              in_kernel([&] {
                                st.ids[d.id] = tl.cpu().declare_at(d.name, d.space, d.rows, d.cols,
                                                                   d.dtype, d.address, d.row_stride);
                              });
                            },
                            [&](const cmdstream::WaitLine&) { tl.wait(); },
                            [&](const cmdstream::HostRandomLine& h) {
                              const Handle t = handle(h.id);
                              in_kernel([&] { tl.cpu().host_fill_random(t, h.seed, h.lo, h.hi); });
                            },
                            [&](const Command& c) {
                              by_ticket.emplace_back(tl.cpu().next_ticket(), i);
                              if (const auto* o = std::get_if<CpuOverheadCmd>(&c)) return tl.cycles(o->cycles);
                              by_id.emplace_back(tl.cpu().next_command_id(), i);
                              tl.emit(with_handles(c, handle));
                            }},
                 s.item);
    } catch (const CommandFault&) {
      throw;  // about an earlier line, maybe: replay() names it
    } catch (const KernelError& e) {
      throw KernelError(where() + e.what() + line());
    }
  }
}

std::vector<std::pair<std::string, Kernel>> parse_stream(std::string text, const std::string& source) {
  auto st = std::make_shared<Stream>();
  st->source = source;
  st->text = std::move(text);
  cmdstream::parse(*st);
  std::vector<std::pair<std::string, Kernel>> out;
  out.reserve(st->sections.size());
  for (size_t i = 0; i < st->sections.size(); ++i) {
    out.emplace_back(st->sections[i].name, [st, i](Tl& tl) { replay(tl, *st, i); });
  }
  return out;
}

}  // namespace

std::vector<std::pair<std::string, Kernel>> parse_command_stream(const std::string& text,
                                                                 const std::string& source) {
  return parse_stream(text, source);
}

std::vector<std::pair<std::string, Kernel>> load_command_stream(const std::string& path) {
  std::string text;
  try {
    text = read_input_file(path, kMaxStreamFileBytes, "command stream");
  } catch (const InputFileError& e) {
    throw StreamError(e.what());
  }
  return parse_stream(std::move(text), path);
}

}  // namespace kb
