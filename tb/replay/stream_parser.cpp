#include "tb/replay/stream_parser.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <memory>
#include <set>
#include <type_traits>
#include <variant>

#include "tb/replay/command_stream.h"  // StreamError
#include "tb/replay/stream_text.h"

namespace kb::cmdstream {

namespace {

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

  // A command of fixed fields (command_fields.h): its keyword, then each
  // field as key=value (a flag as its bare key), in any order.
  template <class T>
  bool fixed_fields_of(const std::vector<std::string>& t) {
    if (t[0] != T::kKeyword) return false;
    std::set<std::string> keys, flags;
    for_each_field<T>([&](const auto& fd) {
      (std::is_same_v<field_member_t<decltype(fd)>, bool> ? flags : keys).insert(fd.key);
    });
    const auto f = keyed(fields(t, 1), keys, flags);
    T c;
    for_each_field<T>([&](const auto& fd) {
      using M = field_member_t<decltype(fd)>;
      M& v = c.*(fd.member);
      if constexpr (std::is_same_v<M, Handle>) v = ref_field(f, fd.key);
      else if constexpr (std::is_same_v<M, bool>) v = f.count(fd.key) > 0;
      else v = number<M>(required(f, fd.key), fd.key);
    });
    add(Command(std::move(c)));
    return true;
  }
  template <class... Ts>
  bool fixed_fields(const std::vector<std::string>& t, std::variant<Ts...>*) {
    const auto one = [&](auto* type) {
      using T = std::remove_pointer_t<decltype(type)>;
      if constexpr (has_fields_v<T>) return fixed_fields_of<T>(t);
      else return false;
    };
    return (one(static_cast<Ts*>(nullptr)) || ...);
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
    if (fixed_fields(t, static_cast<Command*>(nullptr))) return;
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

}  // namespace

void parse(Stream& st) { Parser(st).parse(); }

}  // namespace kb::cmdstream
