#include "tb/cli/sweep_jobs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>

#include "tb/benches/bench_registry.h"

namespace kb {

namespace {

// A path or value in a message: on one line (control bytes as \xNN).
std::string printable(const std::string& s) {
  std::string out;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c != 0x7f) {
      out += ch;
    } else {
      static const char kHex[] = "0123456789abcdef";
      out += std::string("\\x") + kHex[c >> 4] + kHex[c & 15];
    }
  }
  return out;
}

[[noreturn]] void bad(const std::string& path, const std::string& problem) {
  throw BenchError("sweep --collect: " + printable(path) + ": " + problem);
}

// Deepest nesting of arrays and objects in JSON text, strings skipped: the
// parser and the value's destructor recurse, so depth is bounded first.
int json_depth(const std::string& text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

// "point-INDEX.json" -> INDEX; nullopt for any other name.
std::optional<uint64_t> point_file_index(const std::string& name, bool& overflow) {
  static const std::string kPrefix = "point-", kSuffix = ".json";
  overflow = false;
  if (name.size() <= kPrefix.size() + kSuffix.size() || name.compare(0, kPrefix.size(), kPrefix) != 0 ||
      name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0) {
    return std::nullopt;
  }
  const char* first = name.data() + kPrefix.size();
  const char* last = name.data() + name.size() - kSuffix.size();
  if (!std::all_of(first, last, [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(first, last, v);
  if (ec != std::errc() || end != last) {
    overflow = true;
    return uint64_t(0);
  }
  return v;
}

// A regular file's text, at most `limit` bytes; never blocks on a FIFO.
std::string read_point_file(const std::string& path, uint64_t limit) {
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) bad(path, std::string("cannot open: ") + std::strerror(errno));
  struct FdCloser {
    int fd;
    ~FdCloser() { close(fd); }
  } closer{fd};
  struct stat st {};
  if (fstat(fd, &st) != 0) bad(path, std::string("cannot stat: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) bad(path, "not a regular file");
  if (uint64_t(st.st_size) > limit) {
    bad(path, std::to_string(st.st_size) + " bytes; a point file has at most " + std::to_string(limit));
  }
  std::string text(size_t(st.st_size), '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) bad(path, std::string("cannot read: ") + std::strerror(errno));
    if (n == 0) break;
    got += size_t(n);
  }
  text.resize(got);
  return text;
}

std::vector<std::string> string_array(const nlohmann::json& j, const char* key, const std::string& path) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_array()) bad(path, std::string("expected '") + key + "' an array of strings");
  std::vector<std::string> out;
  for (const auto& v : *it) {
    if (!v.is_string()) bad(path, std::string("expected '") + key + "' an array of strings");
    out.push_back(v.get<std::string>());
  }
  return out;
}

uint64_t whole_number(const nlohmann::json& j, const char* key, const std::string& path) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number_unsigned()) bad(path, std::string("expected '") + key + "' a whole number");
  return it->get<uint64_t>();
}

std::string text_field(const nlohmann::json& j, const char* key, const std::string& path) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_string()) bad(path, std::string("expected '") + key + "' a string");
  return it->get<std::string>();
}

}  // namespace

std::string sh_quote(const std::string& arg, const std::string& what) {
  if (arg.find('\n') != std::string::npos) {
    throw BenchError("--emit-jobs: " + what + " holds a line break; a job is one line of the jobs file");
  }
  const bool bare = !arg.empty() && std::all_of(arg.begin(), arg.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::strchr("_@%+=:,./-", c) != nullptr;
  });
  if (bare) return arg;
  std::string q = "'";
  for (const char c : arg) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string sweep_id(const std::vector<std::string>& fields) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a 64 offset basis
  auto mix = [&h](const std::string& s) {
    for (const char c : s) {
      h ^= static_cast<unsigned char>(c);
      h *= 1099511628211ull;  // FNV-1a 64 prime
    }
  };
  for (const std::string& f : fields) {
    mix(std::to_string(f.size()) + ":");
    mix(f);
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

bool is_sweep_id(const std::string& s) {
  return s.size() == 16 &&
         std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

uint64_t SweepManifest::points() const {
  uint64_t n = 1;
  for (const auto& a : axes) n *= a.second.size();  // bounded by parse_sweep_manifest
  return n;
}

std::vector<std::string> SweepManifest::values_at(uint64_t index) const {
  std::vector<std::string> v(axes.size());
  for (size_t a = axes.size(); a-- > 0;) {
    v[a] = axes[a].second[index % axes[a].second.size()];
    index /= axes[a].second.size();
  }
  return v;
}

std::string SweepManifest::id() const {
  std::vector<std::string> fields = {kSweepPointFormat, bench, config, timeout, std::to_string(sets.size())};
  fields.insert(fields.end(), sets.begin(), sets.end());
  for (const auto& [key, values] : axes) {
    fields.push_back(key);
    fields.push_back(std::to_string(values.size()));
    fields.insert(fields.end(), values.begin(), values.end());
  }
  return sweep_id(fields);
}

nlohmann::json sweep_manifest_json(const SweepManifest& m) {
  nlohmann::json j;
  j["format"] = kSweepManifestFormat;
  j["sweep_id"] = m.id();
  j["bench"] = m.bench;
  j["config"] = m.config;
  j["timeout"] = m.timeout;
  j["sets"] = m.sets;
  j["axes"] = nlohmann::json::array();
  for (const auto& [key, values] : m.axes) j["axes"].push_back({{"key", key}, {"values", values}});
  j["points"] = m.points();
  return j;
}

nlohmann::json sweep_point_json(const SweepPoint& p) {
  nlohmann::json j;
  j["format"] = kSweepPointFormat;
  j["sweep_id"] = p.sweep_id;
  j["bench"] = p.bench;
  j["index"] = p.index;
  j["points"] = p.points;
  j["axes"] = p.axes;
  j["values"] = p.values;
  if (!p.error.empty()) {
    j["error"] = p.error;
  } else {
    nlohmann::json cells = nlohmann::json::array();
    for (const auto& [k, v] : p.cells) cells.push_back({k, v});
    j["cells"] = cells;
  }
  return j;
}

namespace {

// Text that goes into the CSV and onto the terminal unquoted (column
// keys, axes, values): no control byte, no ',' or '"' (a damaged or
// hostile point file must not add rows or columns).
void check_csv_text(const std::string& path, const char* what, const std::string& t) {
  for (unsigned char c : t) {
    if (c < 0x20 || c == 0x7f || c == ',' || c == '"') {
      bad(path, std::string("a ") + what + " '" + printable(t) + "' with a control byte, ',' or '\"'");
    }
  }
}

// A CSV cell exactly as the local sweep writes one: bare when it holds no
// ',', '"', CR or LF, else quoted with inner quotes doubled; no other
// control byte.
void check_cell(const std::string& path, const std::string& cell) {
  bool ok = true;
  for (unsigned char c : cell) ok = ok && ((c >= 0x20 && c != 0x7f) || c == '\r' || c == '\n');
  if (ok && cell.find_first_of(",\"\r\n") != std::string::npos) {
    ok = cell.size() >= 2 && cell.front() == '"' && cell.back() == '"';
    std::string inner;
    for (size_t i = 1; ok && i + 1 < cell.size(); ++i) {
      if (cell[i] == '"') {
        ok = i + 2 < cell.size() && cell[i + 1] == '"';
        ++i;
      }
      inner += cell[i];
    }
    ok = ok && inner.find_first_of(",\"\r\n") != std::string::npos;  // else it would be bare
  }
  if (!ok) bad(path, "a cell '" + printable(cell) + "' that is not a CSV cell as a sweep writes it");
}

// One of --collect's JSON files: nested at most `max_depth` (checked before
// parsing: the parser and the value's destructor recurse), an object whose
// "format" is `format` and whose keys are all in `keys`.
nlohmann::json checked_object(const std::string& text, const std::string& path, int max_depth, const char* what,
                              const char* kind, const char* format, std::initializer_list<const char*> keys) {
  if (json_depth(text) > max_depth) bad(path, std::string("nested deeper than ") + what + "; not " + what);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    bad(path, std::string("not valid JSON: ") + printable(e.what()));
  }
  if (!j.is_object()) bad(path, "expected a JSON object");
  if (j.value("format", nlohmann::json()) != format) {
    bad(path, std::string("not a kernbench ") + kind + " (expected \"format\": \"" + format + "\")");
  }
  for (const auto& item : j.items()) {
    const std::string& k = item.key();  // not a structured binding: C++17 lambdas cannot capture one (clang)
    if (std::find_if(keys.begin(), keys.end(), [&](const char* key) { return k == key; }) == keys.end()) {
      bad(path, "unknown key '" + printable(k) + "'");
    }
  }
  return j;
}

}  // namespace

SweepPoint parse_sweep_point(const std::string& text, const std::string& path, uint64_t max_points) {
  // A point file nests three deep (object, cells, pair).
  const nlohmann::json j = checked_object(text, path, 3, "a point file", "sweep point", kSweepPointFormat,
                                          {"format", "sweep_id", "bench", "index", "points", "axes", "values",
                                           "cells", "error"});
  SweepPoint p;
  p.sweep_id = text_field(j, "sweep_id", path);
  if (!is_sweep_id(p.sweep_id)) bad(path, "expected 'sweep_id' 16 hex digits");
  p.bench = text_field(j, "bench", path);
  p.points = whole_number(j, "points", path);
  if (p.points < 1 || p.points > max_points) {
    bad(path, "'points' is " + std::to_string(p.points) + "; a sweep has 1 to " + std::to_string(max_points));
  }
  p.index = whole_number(j, "index", path);
  if (p.index >= p.points) {
    bad(path, "'index' is " + std::to_string(p.index) + " in a sweep of " + std::to_string(p.points) +
                  " points (0 to " + std::to_string(p.points - 1) + ")");
  }
  p.axes = string_array(j, "axes", path);
  p.values = string_array(j, "values", path);
  if (p.axes.empty() || p.axes.size() != p.values.size()) {
    bad(path, "expected as many 'values' as 'axes', at least one");
  }
  const bool has_error = j.contains("error"), has_cells = j.contains("cells");
  if (has_error == has_cells) bad(path, "expected either 'cells' or 'error'");
  if (has_error) {
    p.error = text_field(j, "error", path);
    if (p.error.empty()) bad(path, "expected 'error' not empty");
  } else {
    const nlohmann::json& cells = j["cells"];
    if (!cells.is_array()) bad(path, "expected 'cells' an array of [key, cell] pairs");
    for (const auto& c : cells) {
      if (!c.is_array() || c.size() != 2 || !c[0].is_string() || !c[1].is_string()) {
        bad(path, "expected 'cells' an array of [key, cell] pairs");
      }
      p.cells.emplace_back(c[0].get<std::string>(), c[1].get<std::string>());
      check_csv_text(path, "cell key", p.cells.back().first);
      check_cell(path, p.cells.back().second);
    }
  }
  for (const std::string& a : p.axes) check_csv_text(path, "axis", a);
  for (const std::string& v : p.values) check_csv_text(path, "value", v);
  return p;
}

SweepManifest parse_sweep_manifest(const std::string& text, const std::string& path, uint64_t max_points) {
  // A manifest nests four deep (object, axes, axis, values).
  const nlohmann::json j = checked_object(text, path, 4, "a sweep.json", "sweep", kSweepManifestFormat,
                                          {"format", "sweep_id", "bench", "config", "timeout", "sets", "axes",
                                           "points"});
  SweepManifest m;
  const std::string id = text_field(j, "sweep_id", path);
  m.bench = text_field(j, "bench", path);
  m.config = text_field(j, "config", path);
  m.timeout = text_field(j, "timeout", path);
  m.sets = string_array(j, "sets", path);
  const auto axes = j.find("axes");
  if (axes == j.end() || !axes->is_array() || axes->empty()) bad(path, "expected 'axes' an array of {key, values}");
  uint64_t points = 1;
  for (const auto& a : *axes) {
    if (!a.is_object() || a.size() != 2 || !a.contains("key") || !a.contains("values")) {
      bad(path, "expected 'axes' an array of {key, values}");
    }
    std::pair<std::string, std::vector<std::string>> axis{text_field(a, "key", path), string_array(a, "values", path)};
    check_csv_text(path, "axis", axis.first);
    for (const std::string& v : axis.second) check_csv_text(path, "value", v);
    // As build_grid: each key once, each value once on its axis.
    for (const auto& before : m.axes) {
      if (before.first == axis.first) bad(path, "axis '" + printable(axis.first) + "' twice");
    }
    if (std::set<std::string>(axis.second.begin(), axis.second.end()).size() != axis.second.size()) {
      bad(path, "a value twice on axis '" + printable(axis.first) + "'");
    }
    if (axis.second.empty() || axis.second.size() > max_points || points > max_points / axis.second.size()) {
      bad(path, "a grid of more than " + std::to_string(max_points) + " points, or an axis without values");
    }
    points *= axis.second.size();
    m.axes.push_back(std::move(axis));
  }
  if (whole_number(j, "points", path) != points) {
    bad(path, "'points' is not the product of the axes' value counts (" + std::to_string(points) + ")");
  }
  if (id != m.id()) bad(path, "'sweep_id' " + printable(id) + " is not the id of its fields (" + m.id() + "): edited");
  return m;
}

std::vector<SweepPoint> collect_sweep_points(const std::string& dir, uint64_t max_points) {
  DIR* d = opendir(dir.c_str());
  if (!d) bad(dir, std::string("cannot read the folder: ") + std::strerror(errno));
  // Only the names are kept while listing: at most max_points of them.
  std::map<uint64_t, std::string> names;
  try {
    errno = 0;
    while (const dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      bool overflow = false;
      const auto index = point_file_index(name, overflow);
      if (!index) continue;
      const std::string path = dir + (dir.back() == '/' ? "" : "/") + name;
      if (overflow || *index >= max_points) {
        bad(path, "index beyond the largest sweep (" + std::to_string(max_points) + " points)");
      }
      const auto [it, fresh] = names.emplace(*index, path);
      if (!fresh) bad(path, "point " + std::to_string(*index) + " again, also in " + printable(it->second));
      errno = 0;
    }
    if (errno != 0) bad(dir, std::string("cannot read the folder: ") + std::strerror(errno));
  } catch (...) {
    closedir(d);
    throw;
  }
  closedir(d);
  if (names.empty()) bad(dir, "holds no point file (point-INDEX.json)");
  const std::string manifest_path = dir + (dir.back() == '/' ? "" : "/") + kSweepManifestName;
  if (access(manifest_path.c_str(), F_OK) != 0) {
    bad(dir, std::string("holds no ") + kSweepManifestName + " (--emit-jobs writes it beside the point files: "
             "the grid each point is checked against)");
  }
  const SweepManifest manifest =
      parse_sweep_manifest(read_point_file(manifest_path, kMaxCollectBytes), manifest_path, max_points);
  const std::string manifest_id = manifest.id();

  std::vector<SweepPoint> points;
  uint64_t total = 0;
  for (const auto& [index, path] : names) {
    const std::string text = read_point_file(path, kMaxPointFileBytes);
    total += text.size();
    if (total > kMaxCollectBytes) {
      bad(dir, "point files of more than " + std::to_string(kMaxCollectBytes >> 20) + " MiB in all");
    }
    SweepPoint p = parse_sweep_point(text, path, max_points);
    if (p.index != index) bad(path, "holds point " + std::to_string(p.index) + "; expected point " + std::to_string(index));
    std::vector<std::string> keys;
    for (const auto& a : manifest.axes) keys.push_back(a.first);
    if (p.sweep_id != manifest_id || p.points != manifest.points() || p.bench != manifest.bench || p.axes != keys) {
      bad(path, std::string("a point of another sweep than ") + kSweepManifestName + " (sweep " + p.sweep_id + " of " +
                    std::to_string(p.points) + " points of '" + printable(p.bench) + "', against sweep " +
                    manifest_id + " of " + std::to_string(manifest.points()) + " points of '" +
                    printable(manifest.bench) + "')");
    }
    const std::vector<std::string> expected = manifest.values_at(p.index);
    if (p.values != expected) {
      auto assignments = [&keys](const std::vector<std::string>& v) {
        std::string t;
        for (size_t a = 0; a < v.size(); ++a) t += (a ? " " : "") + keys[a] + "=" + v[a];
        return printable(t);
      };
      bad(path, "was run with " + assignments(p.values) + ", not with point " + std::to_string(p.index) +
                    " of the sweep's grid (" + assignments(expected) + ")");
    }
    p.path = path;
    points.push_back(std::move(p));
  }
  const Bench* bench = nullptr;
  try {
    bench = &BenchRegistry::instance().get(points.front().bench);
  } catch (const BenchError& e) {
    bad(dir, std::string("points of ") + e.what());
  }
  // Each axis one a sweep of this bench can have: a configuration key or a
  // parameter of the bench.
  for (const auto& axis : manifest.axes) {
    const std::string& key = axis.first;  // not a structured binding: a lambda captures it (clang, C++17)
    if (key.rfind("pe.", 0) == 0 || key.rfind("topology.", 0) == 0) continue;
    if (std::none_of(bench->params.begin(), bench->params.end(), [&key](const BenchParam& bp) { return bp.name == key; })) {
      bad(manifest_path, "axis '" + printable(key) + "' is not a parameter of bench '" + printable(bench->name) + "'");
    }
  }
  if (points.size() != points.front().points) {
    std::string missing;
    uint64_t count = 0;
    for (uint64_t i = 0; i < points.front().points; ++i) {
      if (names.count(i)) continue;
      if (++count <= 5) missing += (missing.empty() ? "" : ", ") + ("point-" + std::to_string(i) + ".json");
    }
    bad(dir, std::to_string(count) + " of " + std::to_string(points.front().points) + " points missing: " + missing +
                 (count > 5 ? ", ..." : ""));
  }
  return points;
}

}  // namespace kb
