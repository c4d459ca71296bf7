// PE configuration loader: one schema table (kSchema) drives loading,
// unknown-key detection, --set overrides, pe_config_keys() and the YAML dump.
#include "models/config/pe_config.h"

#include "models/util/input_file.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <variant>

namespace kb {
namespace {

// Value kinds: integers and floats carry the key's documented bounds.
enum class Kind { kUint, kFloat, kBool };

// Inclusive bounds of a key: every key has a documented lower and upper
// bound, so that no value can overflow the arithmetic built on it.
struct Range {
  uint64_t umin = 0, umax = 0;  // kUint
  double fmin = 0, fmax = 0;    // kFloat
};
constexpr Range U(uint64_t lo, uint64_t hi) { return {lo, hi, 0, 0}; }
constexpr Range F(double lo, double hi) { return {0, 0, lo, hi}; }

// The bounds, with the arithmetic they keep in range:
// - a clock of [0.001, 1000] GHz: a period of 1 ps to 1 us, so every clock
//   edge has its own ps (models/util/clock.h);
// - per-operation cycle counts up to 10^6, and R up to 1000 cycles per byte:
//   one command's dispatch (at most 10^6 + (2^32 - 1) x 1000 cycles) stays
//   below 2^64 ps even at 1 MHz;
// - dimensions (tile, array, lanes) up to 65536, the queue up to 4096;
// - bandwidths of at least 0.001 (GB/s, bytes per cycle, efficiency), so a
//   transfer's cycles are at most 10^9 x its bytes (PE_DMA at 1000 GHz).
constexpr uint64_t kMaxCycles = 1000000;
constexpr uint64_t kMaxDim = 65536;
constexpr Range kCycles = U(0, kMaxCycles);
constexpr Range kPositiveCycles = U(1, kMaxCycles);
constexpr Range kDim = U(1, kMaxDim);

// Shortest fixed-point text of a bound: 0.001, 1000, 1000000.
std::string format_bound(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  return ec == std::errc() ? std::string(buf, end) : "?";
}

std::string range_text(Kind kind, const Range& r) {
  if (kind == Kind::kUint) {
    return "[" + std::to_string(r.umin) + ", " + std::to_string(r.umax) + "]";
  }
  return "[" + format_bound(r.fmin) + ", " + format_bound(r.fmax) + "]";
}

// ConfigKeyInfo::type, e.g. "uint in [1, 65536]".
std::string type_text(Kind kind, const Range& r) {
  if (kind == Kind::kBool) return "bool";
  return std::string(kind == Kind::kUint ? "uint in " : "float in ") + range_text(kind, r);
}

// Completes "expected ...".
std::string expected_text(Kind kind, const Range& r) {
  if (kind == Kind::kBool) return "true or false";
  return std::string(kind == Kind::kUint ? "an integer in " : "a number in ") + range_text(kind, r);
}

// Where a key's value lives inside a PeConfig. Integer kinds must point at a
// uint64_t and float kinds at a double; store() relies on it and the tests
// exercise every key, so a mismatch shows up as std::bad_variant_access.
using FieldRef = std::variant<uint64_t*, double*, bool*>;

struct Entry {
  const char* key;  // dotted path, YAML shape
  Kind kind;
  Range range;
  FieldRef (*field)(PeConfig&);
  const char* doc;  // one line, with units
};

#define KB_FIELD(member) [](PeConfig& c) -> FieldRef { return &c.member; }

// Order matters: dump_pe_config_yaml() emits keys in this order and opens a
// block when the prefix changes, so the keys of one block must be adjacent.
const Entry kSchema[] = {
    {"pe.attrs.clock_freq_ghz", Kind::kFloat, F(0.001, 1000), KB_FIELD(clock_freq_ghz),
     "PE clock, GHz"},
    {"pe.attrs.data_mode", Kind::kBool, {}, KB_FIELD(data_mode),
     "memories hold real values and engines compute them (slower; --data)"},
    // docs/cost-model.md D4: dispatch cost-model knobs (cycle domain).
    {"pe.attrs.pe_cost_model.fixed_per_cmd_cycles", Kind::kUint, kCycles,
     KB_FIELD(cost_model.fixed_per_cmd_cycles),
     "FIXED cost of a CompositeCmd, cycles (docs/cost-model.md D3)"},
    {"pe.attrs.pe_cost_model.fixed_per_single_op_cmd_cycles", Kind::kUint, kCycles,
     KB_FIELD(cost_model.fixed_per_single_op_cmd_cycles),
     "FIXED cost of a single-op command, cycles (docs/cost-model.md D8)"},
    {"pe.attrs.pe_cost_model.byte_cycles_recip", Kind::kFloat, F(0, 1000),
     KB_FIELD(cost_model.byte_cycles_recip),
     "R, dispatch cycles per logical byte (docs/cost-model.md D3)"},
    // D7: the cap splits larger composites; zero would admit nothing. A
    // command's logical bytes are a 32-bit count (docs/cost-model.md D2).
    {"pe.attrs.pe_cost_model.max_composite_logical_bytes", Kind::kUint, U(1, 4294967295u),
     KB_FIELD(cost_model.max_composite_logical_bytes),
     "cap on one CompositeCmd's logical bytes, bytes (docs/cost-model.md D7)"},
    {"pe.attrs.cpu.descriptor_extension", Kind::kBool, {}, KB_FIELD(cpu.descriptor_extension),
     "PE_CPU attaches the decoded command to each descriptor write (a fast path; the bytes are written either way)"},
    {"pe.attrs.scheduler.queue_depth", Kind::kUint, U(1, 4096),
     KB_FIELD(scheduler.queue_depth),
     "accepted-but-incomplete descriptors, entries"},
    {"pe.attrs.ipc.queue_depth", Kind::kUint, U(1, 4096), KB_FIELD(ipc.queue_depth),
     "PE_IPC receive queue per source PE: messages arrived and not yet taken by a recv"},
    {"pe.attrs.tile.m", Kind::kUint, kDim, KB_FIELD(tile.m),
     "hardware tile M, elements"},
    {"pe.attrs.tile.n", Kind::kUint, kDim, KB_FIELD(tile.n),
     "hardware tile N, elements"},
    {"pe.attrs.tile.k", Kind::kUint, kDim, KB_FIELD(tile.k),
     "hardware tile K, elements"},
    {"pe.attrs.dma.setup_cycles", Kind::kUint, kCycles, KB_FIELD(dma.setup_cycles),
     "descriptor fetch + address generation, cycles"},
    {"pe.attrs.hbm.pseudo_channels", Kind::kUint, U(1, 1024),
     KB_FIELD(hbm.pseudo_channels), "pseudo-channels of the HBM behind the PE (shared by the PEs of a top)"},
    {"pe.attrs.hbm.channel_gbps", Kind::kFloat, F(0.001, 1000000),
     KB_FIELD(hbm.channel_gbps), "peak bandwidth per pseudo-channel, GB/s"},
    {"pe.attrs.hbm.efficiency", Kind::kFloat, F(0.001, 1), KB_FIELD(hbm.efficiency),
     "achieved fraction of peak bandwidth"},
    {"pe.attrs.hbm.latency_cycles", Kind::kUint, kCycles, KB_FIELD(hbm.latency_cycles),
     "first-byte latency of a read or write, cycles"},
    {"pe.attrs.gemm.array_rows", Kind::kUint, kDim,
     KB_FIELD(gemm.array_rows), "systolic array rows (R)"},
    {"pe.attrs.gemm.array_cols", Kind::kUint, kDim,
     KB_FIELD(gemm.array_cols), "systolic array columns (C)"},
    {"pe.attrs.math.lanes", Kind::kUint, kDim, KB_FIELD(math.lanes),
     "vector lanes, elements per issue"},
    {"pe.attrs.math.pipeline_latency_cycles", Kind::kUint, kCycles,
     KB_FIELD(math.pipeline_latency_cycles), "pipeline latency, cycles"},
    {"pe.attrs.math.elementwise_cycles", Kind::kUint, kPositiveCycles,
     KB_FIELD(math.elementwise_cycles),
     "a math op of cost class elementwise (models/isa/math_ops.h) per lane group, cycles"},
    {"pe.attrs.math.transcendental_cycles", Kind::kUint, kPositiveCycles,
     KB_FIELD(math.transcendental_cycles),
     "a math op of cost class transcendental (models/isa/math_ops.h) per lane group, cycles"},
    // On-chip SRAM: 4 GiB is far beyond any; addresses stay 32-bit.
    {"pe.attrs.tcm.size_bytes", Kind::kUint, U(1, uint64_t(1) << 32), KB_FIELD(tcm.size_bytes),
     "TCM capacity, bytes"},
    {"pe.attrs.tcm.bytes_per_cycle", Kind::kFloat, F(0.001, 1000000),
     KB_FIELD(tcm.bytes_per_cycle), "FETCH/STORE bandwidth, bytes per cycle"},
    {"pe.attrs.tcm.latency_cycles", Kind::kUint, kCycles, KB_FIELD(tcm.latency_cycles),
     "access latency, cycles"},
    {"topology.mesh.h", Kind::kUint, U(1, 16), KB_FIELD(topology.mesh.h),
     "mesh rows of cubes (mesh runs; single-PE benches ignore topology)"},
    {"topology.mesh.w", Kind::kUint, U(1, 16), KB_FIELD(topology.mesh.w), "mesh columns of cubes"},
    {"topology.cube.pes", Kind::kUint, U(1, 64), KB_FIELD(topology.cube.pes),
     "PEs per cube, each with its own HBM slice (pe.attrs.hbm)"},
    {"topology.cube.interconnect_latency_cycles", Kind::kUint, kCycles,
     KB_FIELD(topology.cube.interconnect_latency_cycles),
     "added to an access leaving the PE's own slice, cycles"},
    {"topology.link.gbps", Kind::kFloat, F(0.001, 1000000), KB_FIELD(topology.link.gbps),
     "UCIe link bandwidth per direction, GB/s"},
    {"topology.link.latency_cycles", Kind::kUint, kCycles, KB_FIELD(topology.link.latency_cycles),
     "UCIe link latency per hop, cycles"},
};

#undef KB_FIELD

// ---- schema queries ------------------------------------------------------

std::string join_path(const std::string& path, const std::string& name) {
  return path.empty() ? name : path + "." + name;
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

const Entry* find_leaf(const std::string& key) {
  for (const Entry& e : kSchema) {
    if (key == e.key) return &e;
  }
  return nullptr;
}

// A block is a proper prefix of some key ("" is the document root).
bool is_block(const std::string& path) {
  if (path.empty()) return true;
  return std::any_of(std::begin(kSchema), std::end(kSchema),
                     [&](const Entry& e) { return starts_with(e.key, path + "."); });
}

// Names directly under block `path`, in schema order.
std::vector<std::string> children(const std::string& path) {
  const std::string prefix = path.empty() ? "" : path + ".";
  std::vector<std::string> names;
  for (const Entry& e : kSchema) {
    std::string key = e.key;
    if (!starts_with(key, prefix)) continue;
    std::string name = key.substr(prefix.size());
    name = name.substr(0, name.find('.'));
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      names.push_back(name);
    }
  }
  return names;
}

// Full leaf keys under block `path`.
std::vector<std::string> leaves(const std::string& path) {
  std::vector<std::string> keys;
  for (const Entry& e : kSchema) {
    if (path.empty() || starts_with(e.key, path + ".")) keys.push_back(e.key);
  }
  return keys;
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// " (did you mean 'X'?)" for a typo or a key missing its leading blocks
// (e.g. `tile.m` for `pe.attrs.tile.m`), else "".
std::string suggestion(const std::string& name,
                       const std::vector<std::string>& candidates) {
  for (const std::string& c : candidates) {
    if (c.size() > name.size() &&
        c.compare(c.size() - name.size() - 1, std::string::npos, "." + name) == 0) {
      return " (did you mean '" + c + "'?)";
    }
  }
  const std::string* best = nullptr;
  size_t best_d = std::max<size_t>(2, name.size() / 4) + 1;
  for (const std::string& c : candidates) {
    // The distance is at least the length difference: skip the quadratic
    // work for a long name (a 1 MiB key must not take seconds).
    if (std::max(name.size(), c.size()) - std::min(name.size(), c.size()) >= best_d) continue;
    size_t d = edit_distance(name, c);
    if (d < best_d) best_d = d, best = &c;
  }
  return best ? " (did you mean '" + *best + "'?)" : "";
}

// ---- values --------------------------------------------------------------

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw ConfigError(source + ": " + what);
}

// Length of the UTF-8 sequence starting at text[i] if it is well formed
// and complete, else 0.
size_t utf8_length(const std::string& text, size_t i) {
  const auto byte = [&](size_t j) { return static_cast<unsigned char>(text[j]); };
  const unsigned char b = byte(i);
  const size_t n = b >= 0xF0 && b <= 0xF4 ? 4 : b >= 0xE0 ? 3 : b >= 0xC2 && b <= 0xDF ? 2 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (size_t j = i + 1; j < i + n; ++j) {
    if ((byte(j) & 0xC0) != 0x80) return 0;
  }
  return n;
}

// Text from the input as it appears in a message: one line (control
// characters and bytes that are not UTF-8 escaped as \n, \t, \r, \xNN) of
// at most kShown input bytes (cut at a character boundary), so that a 1 MiB
// value is not echoed whole and a value cannot forge lines of its own.
constexpr size_t kShown = 60;
std::string cut(const std::string& text) {
  std::string out;
  size_t i = 0;
  while (i < text.size() && i < kShown) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F) {
      out += char(c);
      ++i;
    } else if (const size_t n = c >= 0x80 ? utf8_length(text, i) : 0) {
      if (i + n > kShown) break;  // not half a character
      out.append(text, i, n);
      i += n;
    } else {
      static const char kHex[] = "0123456789abcdef";
      out += c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r"
                                                        : std::string("\\x") + kHex[c >> 4] + kHex[c & 15];
      ++i;
    }
  }
  if (i < text.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

// At most kListed names, then how many more and where the whole list is.
constexpr size_t kListed = 10;
std::string join_some(const std::vector<std::string>& names) {
  if (names.size() <= kListed) return join(names);
  return join(std::vector<std::string>(names.begin(), names.begin() + kListed)) + ", ... (" +
         std::to_string(names.size() - kListed) + " more; see kernbench run --help)";
}

// Appends `node` in one-line flow style, stopping soon after `out` reaches
// `limit` characters (the work is bounded, whatever the node's size).
void render(const YAML::Node& node, std::string& out, size_t limit) {
  if (out.size() > limit) return;
  if (node.IsScalar()) {
    out.append(node.Scalar(), 0, limit + 1 - out.size());
  } else if (node.IsSequence() || node.IsMap()) {
    out += node.IsMap() ? '{' : '[';
    bool first = true;
    for (const auto& item : node) {
      if (out.size() > limit) return;
      if (!first) out += ", ";
      first = false;
      if (node.IsMap()) {
        render(item.first, out, limit);
        out += ": ";
        render(item.second, out, limit);
      } else {
        render(item, out, limit);
      }
    }
    out += node.IsMap() ? '}' : ']';
  } else {
    out += '~';
  }
}

// How a node reads in "got ...".
std::string describe(const YAML::Node& node) {
  if (node.IsScalar()) {
    // yaml-cpp tags quoted scalars "!": they are strings, never numbers.
    if (node.Tag() == "!") return "quoted string '" + cut(node.Scalar()) + "'";
    // An explicit tag (!!str 64) says what the value is: not a plain one.
    if (node.Tag() != "?" && !node.Tag().empty()) return "'" + cut(node.Scalar()) + "' tagged " + cut(node.Tag());
    return "'" + cut(node.Scalar()) + "'";
  }
  if (node.IsSequence() || node.IsMap()) {
    std::string text;
    render(node, text, kShown);
    if (text.size() > kShown) text = cut(text.substr(0, kShown - 3)) + "...";
    else text = cut(text);
    return std::string(node.IsMap() ? "a map " : "a sequence ") + text;
  }
  return "nothing (null)";
}

// Parses the plain scalar `text` as `e`'s kind into its field of `cfg`.
// Returns "" on success, else what was expected. Integers are plain decimal
// digits only (no sign, no exponent, no 0x) so that `-1` and `1.5` are
// rejected; floats must be finite; both must lie within the key's bounds.
std::string store(const std::string& text, const Entry& e, PeConfig& cfg) {
  const char* first = text.data();
  const char* last = first + text.size();
  const std::string expected = expected_text(e.kind, e.range);
  const FieldRef field = e.field(cfg);
  if (e.kind == Kind::kBool) {  // YAML 1.2 core schema booleans only
    if (text != "true" && text != "false") return expected;
    *std::get<bool*>(field) = text == "true";
    return "";
  }
  if (e.kind == Kind::kUint) {
    uint64_t v = 0;
    auto [end, ec] = std::from_chars(first, last, v);  // out of range: an error too
    if (ec != std::errc() || end != last || text.empty()) return expected;
    if (v < e.range.umin || v > e.range.umax) return expected;
    *std::get<uint64_t*>(field) = v;
    return "";
  }
  if (first != last && *first == '+') {  // from_chars rejects '+'; YAML allows it
    if (++first != last && *first == '-') return expected;
  }
  double v = 0;
  auto [end, ec] = std::from_chars(first, last, v);
  if (ec != std::errc() || end != last || first == last || !std::isfinite(v)) {
    return expected;
  }
  v += 0.0;  // -0 -> +0, so `-0` dumps as 0.0
  if (!(v >= e.range.fmin && v <= e.range.fmax)) return expected;
  *std::get<double*>(field) = v;
  return "";
}

void store_node(PeConfig& cfg, const Entry& e, const YAML::Node& node,
                const std::string& source) {
  const std::string head = std::string("key '") + e.key + "': expected ";
  // A quoted or explicitly tagged scalar is not a plain value (plain: "?").
  if (!node.IsScalar() || (node.Tag() != "?" && !node.Tag().empty())) {
    fail(source, head + expected_text(e.kind, e.range) + ", got " + describe(node));
  }
  std::string expected = store(node.Scalar(), e, cfg);
  if (!expected.empty()) fail(source, head + expected + ", got " + describe(node));
}

// Shortest text that parses back to exactly `v`; always looks like a float.
std::string format_double(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string s = ec == std::errc() ? std::string(buf, end) : "nan";
  if (s.find_first_not_of("-0123456789") == std::string::npos) s += ".0";
  return s;
}

std::string format(FieldRef field) {
  if (auto* u = std::get_if<uint64_t*>(&field)) return std::to_string(**u);
  if (auto* b = std::get_if<bool*>(&field)) return **b ? "true" : "false";
  return format_double(*std::get<double*>(field));
}

// ---- bounded parsing of untrusted YAML --------------------------------------
//
// yaml-cpp 0.7 is given only text it handles in bounded time and memory.
// A full configuration is about 60 nodes, 4 maps deep, with
// flow collections of a few dozen bytes; the limits below are far above that.
constexpr int kMaxDepth = 16;             // nested collections
constexpr size_t kMaxNodes = 10000;       // YAML::Node costs ~500 bytes each
constexpr size_t kMaxFlowBytes = 16384;   // one flow collection, [...] or {...}

// Input refused before or while yaml-cpp parses it: `line` (1-based) and what.
struct Rejected {
  size_t line;
  std::string what;
};

std::string nesting_text() {
  return "YAML nested deeper than " + std::to_string(kMaxDepth) +
         " levels (a configuration is 4 deep)";
}

bool is_blank(char c) { return c == ' ' || c == '\t'; }
bool is_space(char c) { return is_blank(c) || c == '\n' || c == '\r'; }
bool is_one_of(char c, const char* set) { return c != '\0' && std::strchr(set, c) != nullptr; }

// yaml-cpp 0.7 keeps every token of a flow collection that might be a mapping
// key (one at the top level, or first on a line) until its closing bracket,
// ~300 bytes a token: a 1 MiB `[[[[...` or `[1,1,1,...]` takes 250 MB before
// the first event. So flow collections are measured on the text first: no
// more than kMaxDepth deep, no longer than kMaxFlowBytes. A light lexer is
// enough: comments, quoted scalars and block-context plain scalars (which may
// contain brackets) are skipped. A block scalar (`|`, `>`) is a string, never
// a valid value, and is refused here rather than lexed.
void check_flow_collections(const std::string& s) {
  size_t line = 1;
  int depth = 0;
  size_t open_pos = 0, open_line = 0;  // the outermost open collection
  bool plain = false;                  // in a block-context plain scalar
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '\n') {
      ++line;
      plain = false;
      continue;
    }
    if (depth > 0 && i - open_pos >= kMaxFlowBytes) {
      throw Rejected{open_line, "flow collection ([...] or {...}) longer than " +
                                    std::to_string(kMaxFlowBytes) + " bytes"};
    }
    const char prev = i == 0 ? '\n' : s[i - 1];
    const bool token_start = is_space(prev) || (depth > 0 && is_one_of(prev, "[]{},:"));
    if (plain) {  // ends at ": " or a comment
      if (c == ':' && (i + 1 == s.size() || is_space(s[i + 1]))) plain = false;
      if (c == '#' && is_blank(prev)) --i, plain = false;  // lexed as a comment next
      continue;
    }
    if (depth > 0 && is_one_of(c, "[{]}")) {  // indicators anywhere in a flow
      if (c == '[' || c == '{') {
        if (++depth > kMaxDepth) throw Rejected{line, nesting_text()};
      } else {
        --depth;
      }
      continue;
    }
    if (!token_start) continue;
    if (prev == '\n' && (s.compare(i, 3, "---") == 0 || s.compare(i, 3, "...") == 0) &&
        (i + 3 == s.size() || is_space(s[i + 3]))) {
      i += 2;  // a document marker, not a plain scalar: "--- [" opens a collection
    } else if (c == '#') {
      while (i + 1 < s.size() && s[i + 1] != '\n') ++i;
    } else if (c == '\'' || c == '"') {
      size_t j = i + 1;
      for (; j < s.size(); ++j) {
        if (s[j] == '\n') ++line;
        if (c == '"' && s[j] == '\\') {
          if (j + 1 < s.size() && s[j + 1] == '\n') ++line;
          ++j;
        } else if (s[j] == c) {
          if (c == '\'' && j + 1 < s.size() && s[j + 1] == '\'') ++j;  // '' is a quote
          else break;
        }
      }
      i = j;
    } else if (depth == 0 && (c == '[' || c == '{')) {
      open_pos = i, open_line = line;
      depth = 1;
    } else if (depth == 0 && (c == '|' || c == '>')) {
      throw Rejected{line, "block scalar ('|' or '>'): a configuration value is a number or "
                           "true/false"};
    } else if (depth == 0 && !is_one_of(c, "-?:,[]{}#&*!|>'\"%@`") ) {
      plain = true;
    } else if (depth == 0 && is_one_of(c, "-?:") && i + 1 < s.size() && !is_space(s[i + 1])) {
      plain = true;  // "-1", ":x": a plain scalar, not an indicator
    }
  }
}

// Counts documents, nodes and depth from yaml-cpp's events, before any
// YAML::Node is built.
class EventCheck : public YAML::EventHandler {
 public:
  explicit EventCheck(const std::string& text) : text_(text) {}

  void OnDocumentStart(const YAML::Mark& mark) override {
    // yaml-cpp 0.7 scans ',' outside a flow collection as a flow-entry token
    // that no rule consumes: a document starting there ends at once without
    // consuming it, so YAML::LoadAll makes empty documents forever (a yaml-cpp
    // bug, fixed upstream). YAML allows no ',' there.
    const bool comma = mark.pos >= 0 && size_t(mark.pos) < text_.size() &&
                       text_[size_t(mark.pos)] == ',';
    if (comma || (docs_ == 1 && mark.pos == first_pos_)) {
      throw Rejected{line(mark), "unexpected ',' outside a flow collection ([...] or {...})"};
    }
    if (++docs_ > 1) throw Rejected{line(mark), "expected one YAML document, found a second"};
    first_pos_ = mark.pos;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { node(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
    // A shared node is printed once per use: `*a` in a message could expand
    // exponentially. A configuration has no use for them.
    throw Rejected{line(mark), "aliases (*name) are not supported in a configuration"};
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    node(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    open(mark);
  }
  void OnSequenceEnd() override { --depth_; }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    open(mark);
  }
  void OnMapEnd() override { --depth_; }

 private:
  static size_t line(const YAML::Mark& mark) { return mark.line < 0 ? 0 : size_t(mark.line) + 1; }
  void node(const YAML::Mark& mark) {
    if (++nodes_ > kMaxNodes) {
      throw Rejected{line(mark), "more than " + std::to_string(kMaxNodes) +
                                     " YAML nodes (a full configuration has about 60)"};
    }
  }
  void open(const YAML::Mark& mark) {
    node(mark);
    if (++depth_ > kMaxDepth) throw Rejected{line(mark), nesting_text()};
  }

  const std::string& text_;
  int docs_ = 0;
  int first_pos_ = -1;
  int depth_ = 0;
  size_t nodes_ = 0;
};

// The one YAML document of `text` (a null node if there is none). Throws
// Rejected, or YAML::Exception for malformed YAML.
YAML::Node parse_yaml(const std::string& input) {
  // yaml-cpp skips a leading UTF-8 byte order mark and counts its marks'
  // positions after it.
  const std::string text = input.compare(0, 3, "\xEF\xBB\xBF") == 0 ? input.substr(3) : input;
  check_flow_collections(text);
  {
    std::istringstream in(text);
    YAML::Parser parser(in);
    EventCheck check(text);
    // EventCheck throws at a second document: two rounds at most, whatever
    // the text.
    for (int round = 0; round < 2 && parser.HandleNextDocument(check); ++round) {
    }
  }
  return YAML::Load(text);  // the first document only; checked above
}

// "FILE:LINE" of a yaml-cpp mark.
std::string at_mark(const std::string& file, const YAML::Mark& mark) {
  return file + ":" + (mark.is_null() ? "?" : std::to_string(mark.line + 1));
}

// ---- the file ------------------------------------------------------------

class FileLoader {
 public:
  FileLoader(const std::string& file, PeConfig& cfg) : file_(file), cfg_(cfg) {}

  // Checks map `node` (block `path`) against the schema, storing leaves.
  void walk(const YAML::Node& node, const std::string& path) {
    if (node.IsNull()) return;  // empty block: all defaults
    if (!node.IsMap()) {
      fail(at(node), (path.empty() ? std::string("top level")
                                   : "key '" + path + "'") +
                         ": expected a map, got " + describe(node));
    }
    std::set<std::string> seen;
    for (const auto& kv : node) {
      const YAML::Node& key = kv.first;
      if (!key.IsScalar()) {
        fail(at(key), "expected a key name, got " + describe(key));
      }
      const std::string full = join_path(path, key.Scalar());
      if (!seen.insert(key.Scalar()).second) {
        fail(at(key), "duplicate key '" + cut(full) + "'");
      }
      if (const Entry* e = find_leaf(full)) {
        // One key in two spellings (nested and dotted, or two dotted
        // prefixes) is a duplicate too: the later would win silently.
        const auto [first, added] = stored_.emplace(full, at(key));
        if (!added) fail(at(key), "duplicate key '" + cut(full) + "' (first given at " + first->second + ")");
        // A missing value's mark is where the parser stopped (often the
        // next line), so point at the key instead.
        store_node(cfg_, *e, kv.second,
                   kv.second.IsNull() ? at(key) : at(kv.second, key));
      } else if (is_block(full)) {
        walk(kv.second, full);
      } else {
        const auto valid = children(path);
        fail(at(key), "unknown key '" + cut(full) + "'" +
                          suggestion(key.Scalar(), valid) + "; valid keys " +
                          (path.empty() ? "at top level" : "under '" + path + "'") +
                          ": " + join_some(valid));
      }
    }
  }

  // "FILE:LINE" of `node`, or of `fallback` when `node` has no position.
  std::string at(const YAML::Node& node, const YAML::Node& fallback = {}) const {
    YAML::Mark mark = node.Mark();
    if (mark.is_null() && fallback.IsDefined()) mark = fallback.Mark();
    return at_mark(file_, mark);
  }

 private:
  const std::string& file_;
  PeConfig& cfg_;
  std::map<std::string, std::string> stored_;  // each leaf's full key: where it was given
};

void load_file(const std::string& path, PeConfig& cfg) {
  std::string text;
  try {
    // A regular file of at most 1 MiB without NUL bytes: never a device,
    // a FIFO or an endless stream.
    text = read_input_file(path, kMaxConfigFileBytes, "config file");
  } catch (const InputFileError& e) {
    throw ConfigError(e.what());
  }
  YAML::Node doc;
  try {
    doc = parse_yaml(text);
  } catch (const Rejected& r) {
    fail(path + ":" + std::to_string(r.line), r.what);
  } catch (const YAML::Exception& e) {
    fail(at_mark(path, e.mark), "malformed YAML: " + e.msg);
  }
  FileLoader(path, cfg).walk(doc, "");
}

// Keys longer than any real one are reported without suggestions (whose
// search is quadratic in the key's length).
constexpr size_t kMaxKeyChars = 200;

// One `KEY=VALUE` of --set.
void apply_set(const std::string& set, PeConfig& cfg) {
  const size_t eq = set.find('=');
  if (eq == std::string::npos) fail("--set " + cut(set), "expected KEY=VALUE (no '=')");
  const std::string source = "--set " + cut(set.substr(0, eq)) + "=" + cut(set.substr(eq + 1));
  const std::string key = set.substr(0, eq);
  const Entry* e = find_leaf(key);
  if (!e && key.size() > kMaxKeyChars) fail(source, "unknown key '" + cut(key) + "'");
  if (!e && !key.empty() && is_block(key)) {
    fail(source, "key '" + key + "' is a block, not a value; set one of: " +
                     join_some(leaves(key)));
  }
  if (!e) {
    // List the keys under the deepest block the typo still matches.
    std::string block = key;
    while (!block.empty() && !is_block(block)) {
      size_t dot = block.rfind('.');
      block = dot == std::string::npos ? "" : block.substr(0, dot);
    }
    fail(source, "unknown key '" + cut(key) + "'" + suggestion(key, leaves("")) +
                     "; valid keys: " + join_some(leaves(block)));
  }
  YAML::Node value;
  try {
    value = parse_yaml(set.substr(eq + 1));  // the same guards as a file
  } catch (const Rejected& r) {
    fail(source, "key '" + key + "': " + r.what);
  } catch (const YAML::Exception& ex) {
    fail(source, "key '" + key + "': value is not valid YAML: " + ex.msg);
  }
  store_node(cfg, *e, value, source);
}

}  // namespace

const std::vector<ConfigKeyInfo>& pe_config_keys() {
  static const std::vector<ConfigKeyInfo> keys = [] {
    PeConfig defaults;
    std::vector<ConfigKeyInfo> out;
    for (const Entry& e : kSchema) {
      out.push_back({e.key, type_text(e.kind, e.range), format(e.field(defaults)), e.doc});
    }
    return out;
  }();
  return keys;
}

PeConfig load_pe_config(const std::string& path,
                        const std::vector<std::string>& sets) {
  PeConfig cfg;
  if (!path.empty()) load_file(path, cfg);
  for (const std::string& set : sets) apply_set(set, cfg);
  // The one rule across keys: the mesh's PE count.
  if (cfg.topology.pes() > kMaxMeshPes) {
    throw ConfigError((path.empty() ? std::string("--set") : path) + ": topology.mesh.h x topology.mesh.w x " +
                      "topology.cube.pes = " + std::to_string(cfg.topology.mesh.h) + " x " +
                      std::to_string(cfg.topology.mesh.w) + " x " + std::to_string(cfg.topology.cube.pes) + " = " +
                      std::to_string(cfg.topology.pes()) + " PEs; expected at most " + std::to_string(kMaxMeshPes));
  }
  return cfg;
}

std::string dump_pe_config_yaml(const PeConfig& cfg) {
  PeConfig copy = cfg;  // the accessors take a mutable PeConfig
  std::ostringstream out;
  std::vector<std::string> open;  // blocks of the previous key
  for (const Entry& e : kSchema) {
    std::vector<std::string> segs;
    std::istringstream parts(e.key);
    for (std::string s; std::getline(parts, s, '.');) segs.push_back(s);
    const size_t depth = segs.size() - 1;
    size_t same = 0;
    while (same < open.size() && same < depth && open[same] == segs[same]) ++same;
    for (size_t i = same; i < depth; ++i) {
      out << std::string(2 * i, ' ') << segs[i] << ":\n";
    }
    open.assign(segs.begin(), segs.end() - 1);
    std::string line = std::string(2 * depth, ' ') + segs.back() + ": " +
                       format(e.field(copy));
    line.resize(std::max<size_t>(line.size() + 2, 44), ' ');  // align comments
    out << line << "# " << e.doc << "\n";
  }
  return out.str();
}

}  // namespace kb
