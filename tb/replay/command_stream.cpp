#include "tb/replay/command_stream.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <set>
#include <string_view>
#include <unordered_map>

#include "models/tl/tl.h"
#include "models/util/input_file.h"

namespace kb {

namespace {

constexpr const char* kHeader = "# kernbench command stream v1";

template <class... Ts>
struct overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
overloaded(Ts...) -> overloaded<Ts...>;

// --- names: %XX escapes so that a name is always exactly one field

bool needs_escape(unsigned char c, bool extra_name) {
  return c <= 0x20 || c == 0x7f || c == '%' || c == '=' || c == '"' || (extra_name && c == ':');
}

std::string encode(const std::string& s, bool extra_name = false) {
  if (s.empty()) return "\"\"";
  std::string out;
  for (unsigned char c : s) {
    if (needs_escape(c, extra_name)) {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  return out;
}

// `out` and `extra` are field keys of an `op` line, so an operand with that
// name has its first byte escaped (the loader compares keys before decoding).
std::string encode_operand(const std::string& s) {
  std::string e = encode(s);
  if (s == "out" || s == "extra") {
    char buf[4];
    std::snprintf(buf, sizeof buf, "%%%02X", (unsigned char)s[0]);
    e = buf + s.substr(1);
  }
  return e;
}

bool decode(const std::string& s, std::string* out) {
  out->clear();
  if (s == "\"\"") return true;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out->push_back(s[i]);
      continue;
    }
    unsigned v = 0;
    if (i + 2 >= s.size()) return false;
    const auto r = std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16);
    if (r.ec != std::errc() || r.ptr != s.data() + i + 3) return false;
    out->push_back(char(v));
    i += 2;
  }
  return true;
}

std::string float_text(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest exact form
  return std::string(buf, r.ptr);
}

std::string extra_text(const Extra& e) {
  std::string s = "extra=" + encode(e.name, true) + ":";
  std::visit(overloaded{[&](bool b) { s += b ? "bool:1" : "bool:0"; },
                        [&](int64_t i) { s += "int:" + std::to_string(i); },
                        [&](double d) { s += "float:" + float_text(d); },
                        [&](const std::vector<int64_t>& v) {
                          s += "ints:";
                          for (size_t i = 0; i < v.size(); ++i)
                            s += (i ? "," : "") + std::to_string(v[i]);
                        },
                        [&](const std::string& str) { s += "str:" + encode(str); }},
             e.value);
  return s;
}

std::string extras_text(const Extras& extras) {
  std::string s;
  for (const Extra& e : extras) s += " " + extra_text(e);
  return s;
}

}  // namespace

// --- recorder

StreamRecorder::StreamRecorder(const std::string& path) : file_(path, "command stream") {
  out_ << kHeader << "\n";
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
          [&](const DmaReadCmd& c) { out_ << "dma_read dst=" << id(c.dst) << " src=" << id(c.src) << "\n"; },
          [&](const DmaWriteCmd& c) {
            out_ << "dma_write dst=" << id(c.dst) << " src=" << id(c.src) << "\n";
          },
          [&](const CopyCmd& c) { out_ << "copy dst=" << id(c.dst) << " src=" << id(c.src) << "\n"; },
          [&](const GemmCmd& c) {
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
          [&](const SendCmd& c) { out_ << "send src=" << id(c.src) << " dst_pe=" << c.dst << "\n"; },
          [&](const RecvCmd& c) { out_ << "recv dst=" << id(c.dst) << " src_pe=" << c.src << "\n"; }},
      cmd);
}

void StreamRecorder::on_wait() { out_ << "wait\n"; }

void StreamRecorder::on_host_fill(Handle h, uint64_t seed, double lo, double hi) {
  out_ << "host_random " << id(h) << " seed=" << seed << " lo=" << float_text(lo)
       << " hi=" << float_text(hi) << "\n";
}

void StreamRecorder::close() { file_.commit(); }

// --- loader

namespace {

struct TensorLine {
  Handle id = 0;
  std::string name;
  MemSpace space = MemSpace::kHbm;
  Dtype dtype = Dtype::kFp32;
  int64_t rows = 0, cols = 0, row_stride = 0;
  uint64_t address = 0;
};

struct HostRandomLine {
  Handle id = 0;
  uint64_t seed = 0;
  double lo = -1.0, hi = 1.0;  // tl.host_random's defaults
};

struct WaitLine {};

// One replay step; commands hold stream IDs until the kernel runs. The
// line's text is not copied: messages cut it from the stream's text.
struct Step {
  std::variant<Command, TensorLine, HostRandomLine, WaitLine> item;
  int line = 0;
  uint32_t text_len = 0;
  size_t text_begin = 0;
};

// A `kernel` section: steps [begin, end) of the stream.
struct Section {
  std::string name;
  size_t begin = 0, end = 0;
};

// The file's ID -> live handle map, shared by its kernels (IDs are
// file-wide, like handles in the run's descriptor table).
using IdMap = std::unordered_map<Handle, Handle>;

// A parsed stream, shared by the kernels made from it. Memory is linear in
// the file: its text once, one Step per item line, one Section per kernel.
struct Stream {
  std::string source;
  std::string text;
  std::vector<Step> steps;
  std::vector<Section> sections;
  IdMap ids;
  std::string_view line_text(const Step& s) const {
    return std::string_view(text).substr(s.text_begin, s.text_len);
  }
};

// Long values are cut short in messages (a 10 MB token is not echoed whole).
std::string shorten(std::string_view s, size_t max = 200) {
  if (s.size() <= max) return std::string(s);
  return std::string(s.substr(0, max)) + "... (" + std::to_string(s.size()) + " bytes)";
}

struct Field {
  std::string key, value, token;  // key empty: a bare flag in `value`
};

class Parser {
 public:
  explicit Parser(Stream& stream) : stream_(stream), source_(stream.source) {}

  void parse() {
    const std::string& text = stream_.text;
    bool header = false;
    for (size_t pos = 0; pos < text.size();) {
      const size_t nl = std::min(text.find('\n', pos), text.size());
      std::string_view line(text.data() + pos, nl - pos);
      const size_t line_begin = pos;
      pos = nl + 1;
      ++line_no_;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      const size_t b = line.find_first_not_of(" \t");
      text_begin_ = line_begin + (b == std::string_view::npos ? 0 : b);
      text_ = trim(line);
      if (text_.find('\0') != std::string_view::npos) {
        fail_at(line_no_, {}, "NUL byte in command stream (expected text)");  // the line is not echoed
      }
      if (line_no_ == 1) {
        if (text_ != kHeader) {
          fail(text_.rfind("# kernbench command stream", 0) == 0
                   ? "unsupported command stream version, expected '" + std::string(kHeader) + "'"
                   : "missing header '" + std::string(kHeader) + "'");
        }
        header = true;
        continue;
      }
      if (text_.empty() || text_[0] == '#') continue;
      parse_line(split(text_));
    }
    if (!header) {
      line_no_ = 1;
      text_ = {};
      fail("missing header '" + std::string(kHeader) + "'");
    }
    if (composite_) unclosed("end of file");
    if (!stream_.sections.empty()) stream_.sections.back().end = stream_.steps.size();
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { fail_at(line_no_, text_, what); }
  [[noreturn]] void fail_at(int line, std::string_view text, const std::string& what) const {
    throw StreamError(source_ + ":" + std::to_string(line) + ": " + shorten(what, 400) +
                      (text.empty() ? "" : " (" + shorten(text) + ")"));
  }
  [[noreturn]] void unclosed(const std::string& before) const {
    fail_at(composite_->line, stream_.line_text(*composite_), "composite has no 'end' before " + before);
  }

  static std::string_view trim(std::string_view s) {
    const size_t b = s.find_first_not_of(" \t");
    if (b == std::string_view::npos) return {};
    return s.substr(b, s.find_last_not_of(" \t") - b + 1);
  }

  static std::vector<std::string> split(std::string_view s) {
    std::vector<std::string> out;
    size_t i = 0;
    while (i < s.size()) {
      const size_t b = s.find_first_not_of(" \t", i);
      if (b == std::string_view::npos) break;
      const size_t e = std::min(s.find_first_of(" \t", b), s.size());
      out.emplace_back(s.substr(b, e - b));
      i = e;
    }
    return out;
  }

  // A step at the current line.
  Step step() const {
    Step s;
    s.line = line_no_;
    s.text_begin = text_begin_;
    // A line is shorter than the file limit (1 GiB); clamped for text given
    // to parse_command_stream directly (messages then show its start).
    s.text_len = uint32_t(std::min<size_t>(text_.size(), std::numeric_limits<uint32_t>::max()));
    return s;
  }
  template <class Item>
  void add(Item item) {
    Step s = step();
    s.item = std::move(item);
    stream_.steps.push_back(std::move(s));
  }

  std::string name(const std::string& token) const {
    std::string s;
    if (!decode(token, &s)) fail("bad %XX escape in name '" + shorten(token) + "'");
    return s;
  }

  template <class T>
  T number(const std::string& s, const std::string& what, int base = 10) const {
    T v{};
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v, base);
    if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size())
      fail("bad number '" + shorten(s) + "' for " + shorten(what));
    return v;
  }

  double real(const std::string& s, const std::string& what) const {
    double v = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size())
      fail("bad number '" + shorten(s) + "' for " + shorten(what));
    return v;
  }

  Handle ref(const std::string& s, const std::string& what) const {
    const Handle h = number<Handle>(s, what);
    if (!declared_.count(h)) fail("unknown tensor ID " + shorten(s) + " in '" + shorten(what) + "'");
    return h;
  }

  std::vector<Field> fields(const std::vector<std::string>& toks, size_t from) const {
    std::vector<Field> out;
    for (size_t i = from; i < toks.size(); ++i) {
      const size_t eq = toks[i].find('=');
      if (eq == std::string::npos) out.push_back({"", toks[i], toks[i]});
      else out.push_back({toks[i].substr(0, eq), toks[i].substr(eq + 1), toks[i]});
    }
    return out;
  }

  // Fields of a fixed-layout line: each key at most once, nothing unknown.
  std::unordered_map<std::string, std::string> keyed(
      const std::vector<Field>& fs, const std::set<std::string>& keys,
      const std::set<std::string>& flags = {}) const {
    std::unordered_map<std::string, std::string> out;
    for (const Field& f : fs) {
      const std::string k = f.key.empty() ? f.value : f.key;
      if (f.key.empty() ? !flags.count(k) : !keys.count(k)) fail("unknown field '" + shorten(f.token) + "'");
      if (!out.emplace(k, f.value).second) fail("duplicate field '" + shorten(f.token) + "'");
    }
    return out;
  }

  std::string required(const std::unordered_map<std::string, std::string>& m,
                       const std::string& key) const {
    const auto it = m.find(key);
    if (it == m.end()) fail("missing field '" + key + "='");
    return it->second;
  }

  Handle ref_field(const std::unordered_map<std::string, std::string>& m,
                   const std::string& key) const {
    const std::string v = required(m, key);
    return ref(v, key + "=" + v);
  }

  Extra extra(const Field& f) const {
    const size_t c1 = f.value.find(':');
    const size_t c2 = c1 == std::string::npos ? c1 : f.value.find(':', c1 + 1);
    if (c2 == std::string::npos) fail("extra '" + shorten(f.token) + "' must be extra=NAME:TYPE:VALUE");
    const std::string type = f.value.substr(c1 + 1, c2 - c1 - 1);
    const std::string v = f.value.substr(c2 + 1);
    Extra e;
    e.name = name(f.value.substr(0, c1));
    if (type == "bool") {
      if (v != "0" && v != "1") fail("bad bool '" + shorten(v) + "' in '" + shorten(f.token) + "' (0 or 1)");
      e.value = v == "1";
    } else if (type == "int") {
      e.value = number<int64_t>(v, f.token);
    } else if (type == "float") {
      e.value = real(v, f.token);
    } else if (type == "ints") {
      std::vector<int64_t> list;
      for (size_t b = 0; !v.empty() && b <= v.size();) {
        const size_t comma = std::min(v.find(',', b), v.size());
        list.push_back(number<int64_t>(v.substr(b, comma - b), f.token));
        b = comma + 1;
      }
      e.value = list;
    } else if (type == "str") {
      e.value = name(v);
    } else {
      fail("unknown extra type '" + shorten(type) + "' in '" + shorten(f.token) + "' (bool, int, float, ints, str)");
    }
    return e;
  }

  void expect_args(const std::vector<std::string>& t, size_t n, const char* usage) const {
    if (t.size() < n) fail(std::string("missing field, expected '") + usage + "'");
  }

  void parse_line(const std::vector<std::string>& t) {
    const std::string& kw = t[0];
    if (composite_ && kw != "op" && kw != "end") {
      if (kw == "kernel") unclosed("'kernel' on line " + std::to_string(line_no_));
      fail("expected 'op' or 'end' inside composite '" + shorten(open_composite().name) + "'");
    }
    if (kw == "kernel") {
      if (t.size() != 2) fail("expected 'kernel NAME'");
      if (!stream_.sections.empty()) stream_.sections.back().end = stream_.steps.size();
      stream_.sections.push_back({name(t[1]), stream_.steps.size(), stream_.steps.size()});
      return;
    }
    if (stream_.sections.empty()) fail("'" + shorten(kw) + "' before the first 'kernel' line");
    if (kw == "tensor") return tensor(t);
    if (kw == "dma_read" || kw == "dma_write" || kw == "copy") {
      const auto f = keyed(fields(t, 1), {"dst", "src"});
      const Handle dst = ref_field(f, "dst");
      const Handle src = ref_field(f, "src");
      if (kw == "dma_read") add(Command(DmaReadCmd{dst, src}));
      else if (kw == "dma_write") add(Command(DmaWriteCmd{dst, src}));
      else add(Command(CopyCmd{dst, src}));
      return;
    }
    if (kw == "send") {
      const auto f = keyed(fields(t, 1), {"src", "dst_pe"});
      add(Command(SendCmd{ref_field(f, "src"), number<uint32_t>(required(f, "dst_pe"), "dst_pe")}));
      return;
    }
    if (kw == "recv") {
      const auto f = keyed(fields(t, 1), {"dst", "src_pe"});
      add(Command(RecvCmd{ref_field(f, "dst"), number<uint32_t>(required(f, "src_pe"), "src_pe")}));
      return;
    }
    if (kw == "gemm") {
      const auto f = keyed(fields(t, 1), {"out", "a", "b", "m", "n", "k"},
                           {"transpose_b", "accumulate"});
      GemmCmd c;
      c.out = ref_field(f, "out");
      c.a = ref_field(f, "a");
      c.b = ref_field(f, "b");
      c.m = number<int64_t>(required(f, "m"), "m");
      c.n = number<int64_t>(required(f, "n"), "n");
      c.k = number<int64_t>(required(f, "k"), "k");
      c.transpose_b = f.count("transpose_b") > 0;
      c.accumulate = f.count("accumulate") > 0;
      add(Command(std::move(c)));
      return;
    }
    if (kw == "math") {
      expect_args(t, 2, "math OP out=ID ...");
      MathCmd c;
      if (!math_op_from_string(t[1], &c.op)) fail("unknown math op '" + shorten(t[1]) + "'");
      std::vector<Field> plain;
      for (const Field& f : fields(t, 2)) {
        if (f.key == "extra") c.extra.push_back(extra(f));
        else plain.push_back(f);
      }
      const auto f = keyed(plain, {"out", "src_a", "src_b"});
      c.out = ref_field(f, "out");
      if (f.count("src_b") && !f.count("src_a")) fail("'src_b=' needs 'src_a='");
      for (const char* k : {"src_a", "src_b"})
        if (f.count(k)) c.operands.push_back(ref_field(f, k));
      add(Command(std::move(c)));
      return;
    }
    if (kw == "composite") {
      expect_args(t, 2, "composite NAME [rw=ID,...]");
      CompositeCmd c;
      c.name = name(t[1]);
      const auto f = keyed(fields(t, 2), {"rw"});
      if (f.count("rw")) {
        const std::string& v = f.at("rw");
        for (size_t b = 0; !v.empty() && b <= v.size();) {
          const size_t comma = std::min(v.find(',', b), v.size());
          c.rw_handles.push_back(ref(v.substr(b, comma - b), "rw=" + v));
          b = comma + 1;
        }
      }
      // Kept aside until `end`, then added as one step at its own line.
      composite_ = std::make_unique<Step>(step());
      composite_->item = Command(std::move(c));
      return;
    }
    if (kw == "op") {
      if (!composite_) fail("'op' outside a composite");
      expect_args(t, 3, "op KIND SCOPE ...");
      OpSpec op;
      MathOp m;
      if (t[1] != "gemm" && !math_op_from_string(t[1], &m)) fail("unknown op kind '" + shorten(t[1]) + "'");
      op.kind = t[1];
      if (!op_scope_from_string(t[2], &op.scope)) fail("unknown scope '" + shorten(t[2]) + "' (prologue, tile, epilogue)");
      for (const Field& f : fields(t, 3)) {
        if (f.key.empty()) fail("unknown field '" + shorten(f.token) + "'");
        if (f.key == "extra") {
          op.extra.push_back(extra(f));
        } else if (f.key == "out") {
          if (op.has_out) fail("duplicate field '" + shorten(f.token) + "'");
          op.has_out = true;
          op.out = ref(f.value, f.token);
        } else {
          op.operands.push_back({name(f.key), ref(f.value, f.token)});
        }
      }
      open_composite().ops.push_back(std::move(op));
      return;
    }
    if (kw == "end") {
      if (!composite_) fail("'end' without 'composite'");
      if (t.size() != 1) fail("expected 'end'");
      stream_.steps.push_back(std::move(*composite_));
      composite_.reset();
      return;
    }
    if (kw == "cycles") {
      if (t.size() != 2) fail("expected 'cycles N'");
      add(Command(CpuOverheadCmd{number<uint64_t>(t[1], "cycles")}));
      return;
    }
    if (kw == "wait") {
      if (t.size() != 1) fail("expected 'wait'");
      add(WaitLine{});
      return;
    }
    if (kw == "host_random") {
      expect_args(t, 2, "host_random ID seed=SEED [lo=LO] [hi=HI]");
      HostRandomLine h;
      h.id = ref(t[1], "host_random " + t[1]);
      const auto f = keyed(fields(t, 2), {"seed", "lo", "hi"});
      h.seed = number<uint64_t>(required(f, "seed"), "seed");
      if (f.count("lo")) h.lo = real(f.at("lo"), "lo");
      if (f.count("hi")) h.hi = real(f.at("hi"), "hi");
      add(h);
      return;
    }
    fail("unknown keyword '" + shorten(kw) + "'");
  }

  void tensor(const std::vector<std::string>& t) {
    const char* usage = "tensor ID NAME SPACE DTYPE ROWSxCOLS @ADDRESS [stride=ROW_STRIDE]";
    if (t.size() < 7 || t.size() > 8) fail(std::string("expected '") + usage + "'");
    TensorLine d;
    d.id = number<Handle>(t[1], "tensor ID");
    if (declared_.count(d.id)) fail("tensor ID " + shorten(t[1]) + " is already declared");
    d.name = name(t[2]);
    if (t[3] == "hbm") d.space = MemSpace::kHbm;
    else if (t[3] == "tcm") d.space = MemSpace::kTcm;
    else fail("unknown space '" + shorten(t[3]) + "' (hbm, tcm)");
    if (!dtype_from_string(t[4], &d.dtype)) fail("unknown dtype '" + shorten(t[4]) + "' (fp32, bf16, fp16, int8)");
    const size_t x = t[5].find('x');
    if (x == std::string::npos) fail("bad shape '" + shorten(t[5]) + "', expected ROWSxCOLS");
    d.rows = number<int64_t>(t[5].substr(0, x), "rows in '" + t[5] + "'");
    d.cols = number<int64_t>(t[5].substr(x + 1), "cols in '" + t[5] + "'");
    if (t[6].rfind("@0x", 0) != 0) fail("bad address '" + shorten(t[6]) + "', expected @0x<hex>");
    d.address = number<uint64_t>(t[6].substr(3), "address", 16);
    d.row_stride = d.cols;
    if (t.size() == 8) {
      const auto f = keyed(fields(t, 7), {"stride"});
      d.row_stride = number<int64_t>(f.at("stride"), "stride");
    }
    declared_.insert(d.id);
    add(std::move(d));
  }

  CompositeCmd& open_composite() const {
    return std::get<CompositeCmd>(std::get<Command>(composite_->item));
  }

  Stream& stream_;
  const std::string& source_;
  int line_no_ = 0;
  std::string_view text_;  // the current line, trimmed
  size_t text_begin_ = 0;  // its offset in the stream's text
  std::set<Handle> declared_;
  std::unique_ptr<Step> composite_;  // the open composite, until `end`
};

// Replaces every stream ID in a command by its live handle.
Command with_handles(Command cmd, const std::function<Handle(Handle)>& h) {
  std::visit(overloaded{[&](DmaReadCmd& c) { c.dst = h(c.dst), c.src = h(c.src); },
                        [&](DmaWriteCmd& c) { c.dst = h(c.dst), c.src = h(c.src); },
                        [&](CopyCmd& c) { c.dst = h(c.dst), c.src = h(c.src); },
                        [&](GemmCmd& c) { c.a = h(c.a), c.b = h(c.b), c.out = h(c.out); },
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
                        [&](SendCmd& c) { c.src = h(c.src); },
                        [&](RecvCmd& c) { c.dst = h(c.dst); }},
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
      std::visit(overloaded{[&](const TensorLine& d) {
                              in_kernel([&] {
                                st.ids[d.id] = tl.cpu().declare_at(d.name, d.space, d.rows, d.cols,
                                                                   d.dtype, d.address, d.row_stride);
                              });
                            },
                            [&](const WaitLine&) { tl.wait(); },
                            [&](const HostRandomLine& h) {
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

}  // namespace

namespace {

std::vector<std::pair<std::string, Kernel>> parse_stream(std::string text, const std::string& source) {
  auto st = std::make_shared<Stream>();
  st->source = source;
  st->text = std::move(text);
  Parser(*st).parse();
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
