// PE configuration loader: one schema table (kSchema) drives loading,
// unknown-key detection, --set overrides, pe_config_keys() and the YAML dump.
#include "models/config/pe_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <variant>

namespace kb {
namespace {

// Value kinds: the range check and the wording of "expected ..." messages.
enum class Kind { kUint, kPositiveUint, kNonNegFloat, kPositiveFloat, kFraction, kBool };

struct KindInfo {
  const char* type;      // ConfigKeyInfo::type
  const char* expected;  // completes "expected ..."
  bool integer;
};

KindInfo info(Kind kind) {
  switch (kind) {
    case Kind::kUint: return {"uint", "a non-negative integer", true};
    case Kind::kPositiveUint: return {"positive uint", "a positive integer", true};
    case Kind::kNonNegFloat: return {"float >= 0", "a non-negative number", false};
    case Kind::kPositiveFloat: return {"positive float", "a positive number", false};
    case Kind::kFraction: return {"float in (0, 1]", "a number in (0, 1]", false};
    case Kind::kBool: return {"bool", "true or false", false};
  }
  return {"?", "?", false};
}

// Where a key's value lives inside a PeConfig. Integer kinds must point at a
// uint64_t and float kinds at a double; store() relies on it and the tests
// exercise every key, so a mismatch shows up as std::bad_variant_access.
using FieldRef = std::variant<uint64_t*, double*, bool*>;

struct Entry {
  const char* key;  // dotted path, YAML shape
  Kind kind;
  FieldRef (*field)(PeConfig&);
  const char* doc;  // one line, with units
};

#define KB_FIELD(member) [](PeConfig& c) -> FieldRef { return &c.member; }

// Order matters: dump_pe_config_yaml() emits keys in this order and opens a
// block when the prefix changes, so the keys of one block must be adjacent.
const Entry kSchema[] = {
    {"pe.attrs.clock_freq_ghz", Kind::kPositiveFloat, KB_FIELD(clock_freq_ghz),
     "PE clock, GHz"},
    // ADR-0064 D4: dispatch cost-model knobs (cycle domain).
    {"pe.attrs.data_mode", Kind::kBool, KB_FIELD(data_mode),
     "memories hold real values and engines compute them (slower; --data)"},
    {"pe.attrs.pe_cost_model.fixed_per_cmd_cycles", Kind::kUint,
     KB_FIELD(cost_model.fixed_per_cmd_cycles),
     "FIXED cost of a CompositeCmd, cycles (ADR-0064 D3)"},
    {"pe.attrs.pe_cost_model.fixed_per_single_op_cmd_cycles", Kind::kUint,
     KB_FIELD(cost_model.fixed_per_single_op_cmd_cycles),
     "FIXED cost of a single-op command, cycles (ADR-0064 D8)"},
    {"pe.attrs.pe_cost_model.byte_cycles_recip", Kind::kNonNegFloat,
     KB_FIELD(cost_model.byte_cycles_recip),
     "R, dispatch cycles per logical byte (ADR-0064 D3)"},
    // D7: the cap splits larger composites; zero would admit nothing.
    {"pe.attrs.pe_cost_model.max_composite_logical_bytes", Kind::kPositiveUint,
     KB_FIELD(cost_model.max_composite_logical_bytes),
     "cap on one CompositeCmd's logical bytes, bytes (ADR-0064 D7)"},
    {"pe.attrs.scheduler.queue_depth", Kind::kPositiveUint,
     KB_FIELD(scheduler.queue_depth),
     "accepted-but-incomplete descriptors, entries"},
    {"pe.attrs.tile.m", Kind::kPositiveUint, KB_FIELD(tile.m),
     "hardware tile M, elements"},
    {"pe.attrs.tile.n", Kind::kPositiveUint, KB_FIELD(tile.n),
     "hardware tile N, elements"},
    {"pe.attrs.tile.k", Kind::kPositiveUint, KB_FIELD(tile.k),
     "hardware tile K, elements"},
    {"pe.attrs.dma.setup_cycles", Kind::kUint, KB_FIELD(dma.setup_cycles),
     "descriptor fetch + address generation, cycles"},
    {"pe.attrs.hbm.pseudo_channels", Kind::kPositiveUint,
     KB_FIELD(hbm.pseudo_channels), "pseudo-channels in the PE's HBM share"},
    {"pe.attrs.hbm.channel_gbps", Kind::kPositiveFloat,
     KB_FIELD(hbm.channel_gbps), "peak bandwidth per pseudo-channel, GB/s"},
    {"pe.attrs.hbm.efficiency", Kind::kFraction, KB_FIELD(hbm.efficiency),
     "achieved fraction of peak bandwidth, (0, 1]"},
    {"pe.attrs.hbm.latency_cycles", Kind::kUint, KB_FIELD(hbm.latency_cycles),
     "first-byte latency of a read or write, cycles"},
    {"pe.attrs.gemm.array_rows", Kind::kPositiveUint,
     KB_FIELD(gemm.array_rows), "systolic array rows (R)"},
    {"pe.attrs.gemm.array_cols", Kind::kPositiveUint,
     KB_FIELD(gemm.array_cols), "systolic array columns (C)"},
    {"pe.attrs.math.lanes", Kind::kPositiveUint, KB_FIELD(math.lanes),
     "vector lanes, elements per issue"},
    {"pe.attrs.math.pipeline_latency_cycles", Kind::kUint,
     KB_FIELD(math.pipeline_latency_cycles), "pipeline latency, cycles"},
    {"pe.attrs.math.elementwise_cycles", Kind::kPositiveUint,
     KB_FIELD(math.elementwise_cycles),
     "add/sub/mul/max/copy/scale per lane group, cycles"},
    {"pe.attrs.math.transcendental_cycles", Kind::kPositiveUint,
     KB_FIELD(math.transcendental_cycles),
     "exp/div/recip per lane group, cycles"},
    {"pe.attrs.tcm.size_bytes", Kind::kPositiveUint, KB_FIELD(tcm.size_bytes),
     "TCM capacity, bytes"},
    {"pe.attrs.tcm.bytes_per_cycle", Kind::kPositiveFloat,
     KB_FIELD(tcm.bytes_per_cycle), "FETCH/STORE bandwidth, bytes per cycle"},
    {"pe.attrs.tcm.latency_cycles", Kind::kUint, KB_FIELD(tcm.latency_cycles),
     "access latency, cycles"},
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
    size_t d = edit_distance(name, c);
    if (d < best_d) best_d = d, best = &c;
  }
  return best ? " (did you mean '" + *best + "'?)" : "";
}

// ---- values --------------------------------------------------------------

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw ConfigError(source + ": " + what);
}

// How a node reads in "got ...".
std::string describe(const YAML::Node& node) {
  if (node.IsScalar()) {
    // yaml-cpp tags quoted scalars "!": they are strings, never numbers.
    return (node.Tag() == "!" ? "quoted string '" : "'") + node.Scalar() + "'";
  }
  if (node.IsSequence() || node.IsMap()) {
    YAML::Emitter flow;  // one line, whatever style the file used
    flow.SetSeqFormat(YAML::Flow);
    flow.SetMapFormat(YAML::Flow);
    flow << node;
    std::string text = flow.c_str();
    if (text.size() > 60) text = text.substr(0, 57) + "...";
    return std::string(node.IsMap() ? "a map " : "a sequence ") + text;
  }
  return "nothing (null)";
}

// Parses the plain scalar `text` as `kind` into `field`. Returns "" on
// success, else what was expected. Integers are plain decimal digits only
// (no sign, no exponent, no 0x) so that `-1` and `1.5` are rejected.
std::string store(const std::string& text, Kind kind, FieldRef field) {
  const char* first = text.data();
  const char* last = first + text.size();
  const std::string expected = info(kind).expected;
  if (kind == Kind::kBool) {  // YAML 1.2 core schema booleans only
    if (text != "true" && text != "false") return expected;
    *std::get<bool*>(field) = text == "true";
    return "";
  }
  if (info(kind).integer) {
    uint64_t v = 0;
    auto [end, ec] = std::from_chars(first, last, v);
    if (ec == std::errc::result_out_of_range && end == last) {
      return expected + " that fits in 64 bits (at most 18446744073709551615)";
    }
    if (ec != std::errc() || end != last || text.empty()) return expected;
    if (kind == Kind::kPositiveUint && v == 0) return expected;
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
  const bool ok = kind == Kind::kNonNegFloat    ? v >= 0
                  : kind == Kind::kPositiveFloat ? v > 0
                                                 : v > 0 && v <= 1;
  if (!ok) return expected;
  *std::get<double*>(field) = v;
  return "";
}

void store_node(PeConfig& cfg, const Entry& e, const YAML::Node& node,
                const std::string& source) {
  const std::string head = std::string("key '") + e.key + "': expected ";
  if (!node.IsScalar() || node.Tag() == "!") {
    fail(source, head + info(e.kind).expected + ", got " + describe(node));
  }
  std::string expected = store(node.Scalar(), e.kind, e.field(cfg));
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
        fail(at(key), "duplicate key '" + full + "'");
      }
      if (const Entry* e = find_leaf(full)) {
        // A missing value's mark is where the parser stopped (often the
        // next line), so point at the key instead.
        store_node(cfg_, *e, kv.second,
                   kv.second.IsNull() ? at(key) : at(kv.second, key));
      } else if (is_block(full)) {
        walk(kv.second, full);
      } else {
        const auto valid = children(path);
        fail(at(key), "unknown key '" + full + "'" +
                          suggestion(key.Scalar(), valid) + "; valid keys " +
                          (path.empty() ? "at top level" : "under '" + path + "'") +
                          ": " + join(valid));
      }
    }
  }

  // "FILE:LINE" of `node`, or of `fallback` when `node` has no position.
  std::string at(const YAML::Node& node, const YAML::Node& fallback = {}) const {
    YAML::Mark mark = node.Mark();
    if (mark.is_null() && fallback.IsDefined()) mark = fallback.Mark();
    return file_ + ":" + (mark.is_null() ? "?" : std::to_string(mark.line + 1));
  }

 private:
  const std::string& file_;
  PeConfig& cfg_;
};

void load_file(const std::string& path, PeConfig& cfg) {
  // An ifstream opens a directory fine and then reads nothing, which would
  // silently give defaults.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw ConfigError("cannot open config file '" + path + "': is a directory");
  }
  std::ifstream in(path);
  if (!in) {
    throw ConfigError("cannot open config file '" + path + "': " +
                      std::strerror(errno));
  }
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(in);
  } catch (const YAML::Exception& e) {
    fail(path + ":" + (e.mark.is_null() ? "?" : std::to_string(e.mark.line + 1)),
         "malformed YAML: " + e.msg);
  }
  FileLoader loader(path, cfg);
  if (docs.size() > 1) {
    fail(loader.at(docs[1]), "expected one YAML document, found " +
                                 std::to_string(docs.size()));
  }
  if (!docs.empty()) loader.walk(docs[0], "");
}

// One `KEY=VALUE` of --set.
void apply_set(const std::string& set, PeConfig& cfg) {
  const std::string source = "--set " + set;
  const size_t eq = set.find('=');
  if (eq == std::string::npos) fail(source, "expected KEY=VALUE (no '=')");
  const std::string key = set.substr(0, eq);
  const Entry* e = find_leaf(key);
  if (!e && !key.empty() && is_block(key)) {
    fail(source, "key '" + key + "' is a block, not a value; set one of: " +
                     join(leaves(key)));
  }
  if (!e) {
    // List the keys under the deepest block the typo still matches.
    std::string block = key;
    while (!block.empty() && !is_block(block)) {
      size_t dot = block.rfind('.');
      block = dot == std::string::npos ? "" : block.substr(0, dot);
    }
    fail(source, "unknown key '" + key + "'" + suggestion(key, leaves("")) +
                     "; valid keys: " + join(leaves(block)));
  }
  YAML::Node value;
  try {
    value = YAML::Load(set.substr(eq + 1));
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
      out.push_back({e.key, info(e.kind).type, format(e.field(defaults)), e.doc});
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
