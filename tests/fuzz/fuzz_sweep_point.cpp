// libFuzzer harness: `kernbench sweep --collect DIR --csv FILE`, the merge
// of a folder of point files under its sweep.json (kb::collect_sweep_points,
// tb/cli/sweep_jobs.h) into the sweep's table and CSV (kb::cli::print_sweep,
// tb/cli/sweep_table.h), as tb/cli/sweep.cpp's collect_sweep does.
// fuzz_cli_text parses one point file; this harness merges several.
//
// An input is a folder: each line `=== NAME` starts a file called NAME
// (no '/', 1 to 64 bytes, at most 16 files; another name drops its
// section), whose text runs to the next such line. Text before the first
// one is point-0.json. Then:
// - A `=== sweep.json` section is the folder's sweep.json, as written.
//   Without one, the harness writes the sweep.json --emit-jobs would have
//   written for the point files (point-INDEX.json, in index order) that
//   parse alone: the bench and axis keys of the first of them, each axis's
//   values in order of first appearance among those with the same axes, no
//   --config, --timeout or --set. A section named no-sweep.json (a file
//   collect ignores, like any other name) or no point file that parses
//   leaves the folder without sweep.json.
// - `@ID@` in any other file stands for the id of the folder's sweep.json
//   when it parses (parse_sweep_manifest), else for 16 zeros (also while
//   the points are read to make one): a seed's points stay of its sweep
//   while mutations change their values.
// The files are written to a private folder, which is then collected.
// BenchError is the expected answer to a folder that is not one whole
// sweep. Checked against a model of the promise (docs/cli.md, "Sweeps on
// many machines": the files must be points 0 to N-1 of the sweep in
// sweep.json, each once, each run with its own point of the grid), built
// from the names, parse_sweep_manifest of sweep.json alone and
// parse_sweep_point of each point file alone:
// - collect refuses the folder exactly when the model does: an index
//   beyond the largest sweep, a point twice (point-1.json, point-01.json),
//   none; no sweep.json, or one that does not parse (among others: its
//   sweep_id not the id of its fields, its points not the product of its
//   axes' value counts); a file that is not a point file, a file holding
//   another index than its name; a point of another sweep than sweep.json's
//   (id, size, bench, axis keys); a point whose values are not its index's
//   point of sweep.json's grid (first axis slowest, as --emit-jobs numbers
//   them); an unknown bench; an axis that is neither a configuration key
//   (pe.*, topology.*) nor a parameter of the bench; a point missing;
// - a sweep.json that parses holds the id of its fields and the product of
//   its value counts, and writes back (sweep_manifest_json) and parses to
//   the same fields;
// - a refusal is one line naming the folder or a file ("sweep --collect:
//   ..."), without control bytes as kernbench prints it (main.cpp passes
//   it through terminal_safe: a JSON parse error quotes the file's bytes),
//   and writes nothing: no table, no CSV;
// - a merge returns the points in index order, each as its file parses,
//   with its file's path; exit status 1 exactly when a point failed, one
//   stderr line per failed point, no control byte but line ends in the
//   table and none in stderr; the CSV holds one header and one row per
//   point, each row the point's values then, unless it failed, its cells
//   under their keys' columns.
// A sweep.json with an axis twice or a value twice on an axis does not
// parse (as build_grid refuses them); whether each value is one the bench
// or the configuration takes is not checked: collect runs nothing.
// A finding is a broken promise above, a crash, a sanitizer report,
// another exception, a hang (-timeout) or unbounded memory (-rss_limit_mb).
// KB_FUZZ_VERBOSE=1 prints each input's outcome (merged, or the model's
// reason and collect's refusal) on stderr.
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tb/benches/bench_registry.h"
#include "tb/cli/cli_util.h"
#include "tb/cli/sweep_grid.h"
#include "tb/cli/sweep_jobs.h"
#include "tb/cli/sweep_table.h"
#include "tb/run/output.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

constexpr size_t kMaxFiles = 16;
constexpr size_t kMaxName = 64;
constexpr uint64_t kMaxPoints = kb::cli::kMaxSweepPoints;
const std::string kManifest = kb::kSweepManifestName;
const std::string kNoManifest = "no-sweep.json";  // the input asks for no sweep.json
const std::string kIdMark = "@ID@";               // the id of the folder's sweep.json
const std::string kNoId(16, '0');

std::string g_dir;  // the point folder, emptied per input
int g_csv_fd = -1;  // a memfd: the CSV, written as /dev/fd/N (no temporary file, no fsync)
std::string g_csv_path;
bool g_verbose = false;  // KB_FUZZ_VERBOSE=1

using Files = std::map<std::string, std::string>;  // name -> text

Files files_of(const std::string& text) {
  static const std::string kMark = "=== ";
  Files files;
  std::string name = "point-0.json", body;
  bool named = true;  // the text before the first mark
  auto close = [&] {
    if (named && (files.size() < kMaxFiles || files.count(name))) files[name] = body;
    body.clear();
  };
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t eol = text.find('\n', pos);
    const size_t end = eol == std::string::npos ? text.size() : eol + 1;
    if (text.compare(pos, kMark.size(), kMark) == 0) {
      if (pos > 0) close();  // the text before the first mark, if any
      name = text.substr(pos + kMark.size(), end - pos - kMark.size());
      if (!name.empty() && name.back() == '\n') name.pop_back();
      named = !name.empty() && name.size() <= kMaxName && name != "." && name != ".." &&
              name.find_first_of(std::string("/\0", 2)) == std::string::npos;
    } else {
      body.append(text, pos, end - pos);
    }
    if (end == text.size()) break;
    pos = end;
  }
  close();
  return files;
}

void write_file(const std::string& path, const std::string& text) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) kb::fuzz::finding("cannot create " + path);  // a harness problem, not passed over
  size_t off = 0;
  while (off < text.size()) {
    const ssize_t n = write(fd, text.data() + off, text.size() - off);
    if (n <= 0) kb::fuzz::finding("cannot write " + path);
    off += size_t(n);
  }
  close(fd);
}

void empty_dir() {
  DIR* d = opendir(g_dir.c_str());
  if (!d) kb::fuzz::finding("cannot list " + g_dir);
  std::vector<std::string> names;
  while (const dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  closedir(d);
  for (const std::string& n : names) unlink((g_dir + "/" + n).c_str());
}

// The name's index as collect_sweep_points reads it: point-DIGITS.json.
std::optional<uint64_t> name_index(const std::string& name, bool& overflow) {
  overflow = false;
  const std::string pre = "point-", suf = ".json";
  if (name.size() <= pre.size() + suf.size() || name.rfind(pre, 0) != 0 ||
      name.compare(name.size() - suf.size(), suf.size(), suf) != 0)
    return std::nullopt;
  const std::string digits = name.substr(pre.size(), name.size() - pre.size() - suf.size());
  if (digits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || end != digits.data() + digits.size()) overflow = true;
  return v;
}

// The folder's point files by index, as collect_sweep_points lists them
// (a name twice keeps the first; collect refuses it).
std::map<uint64_t, std::string> point_names(const Files& files) {
  std::map<uint64_t, std::string> names;
  for (const auto& [name, text] : files) {
    bool overflow = false;
    const auto i = name_index(name, overflow);
    if (i && !overflow && *i < kMaxPoints) names.emplace(*i, name);
  }
  return names;
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
}

// The sweep.json --emit-jobs would have written for the point files that
// parse alone (`@ID@` as 16 zeros), or none when none does.
std::optional<kb::SweepManifest> made_manifest(const Files& files) {
  std::optional<kb::SweepManifest> m;
  std::vector<std::string> keys;
  for (const auto& [index, name] : point_names(files)) {
    std::string text = files.at(name);
    replace_all(text, kIdMark, kNoId);
    kb::SweepPoint p;
    try {
      p = kb::parse_sweep_point(text, name, kMaxPoints);
    } catch (const kb::BenchError&) {
      continue;
    }
    if (!m) {
      m.emplace();
      m->bench = p.bench;
      keys = p.axes;
      for (const std::string& k : keys) m->axes.emplace_back(k, std::vector<std::string>{});
    }
    if (p.axes != keys) continue;
    for (size_t a = 0; a < keys.size(); ++a) {
      std::vector<std::string>& v = m->axes[a].second;
      if (std::find(v.begin(), v.end(), p.values[a]) == v.end()) v.push_back(p.values[a]);
    }
  }
  return m;
}

// The folder an input stands for (the header's rules): its files, with
// sweep.json given, made or left out, and `@ID@` replaced.
Files folder_of(const std::string& input) {
  Files files = files_of(input);
  std::string id = kNoId;
  if (const auto it = files.find(kManifest); it != files.end()) {
    try {
      id = kb::parse_sweep_manifest(it->second, kManifest, kMaxPoints).id();
    } catch (const kb::BenchError&) {
    }
  } else if (!files.count(kNoManifest)) {
    if (const auto m = made_manifest(files)) {
      files[kManifest] = kb::sweep_manifest_json(*m).dump(1) + "\n";
      try {
        id = kb::parse_sweep_manifest(files[kManifest], kManifest, kMaxPoints).id();
      } catch (const kb::BenchError&) {  // a grid beyond the largest sweep
      }
    }
  }
  for (auto& [name, text] : files)
    if (name != kManifest) replace_all(text, kIdMark, id);
  return files;
}

// Point `index` of the grid, first axis slowest: axis a's value number is
// the index over the product of the later axes' value counts, modulo its
// own count.
std::vector<std::string> grid_point(const kb::SweepManifest& m, uint64_t index) {
  std::vector<std::string> v;
  for (size_t a = 0; a < m.axes.size(); ++a) {
    uint64_t stride = 1;
    for (size_t b = a + 1; b < m.axes.size(); ++b) stride *= m.axes[b].second.size();
    v.push_back(m.axes[a].second[(index / stride) % m.axes[a].second.size()]);
  }
  return v;
}

uint64_t grid_size(const kb::SweepManifest& m) {
  uint64_t n = 1;
  for (const auto& a : m.axes) n *= a.second.size();  // parse_sweep_manifest bounds it
  return n;
}

// A sweep.json that parsed: the id and size its text holds are those of its
// fields, and it writes back to the same fields.
void check_manifest(const std::string& text, const kb::SweepManifest& m) {
  const nlohmann::json j = nlohmann::json::parse(text);
  if (j.at("sweep_id") != m.id() || j.at("points") != grid_size(m))
    kb::fuzz::finding("parse_sweep_manifest took a sweep.json whose sweep_id or points are not its fields'\n--- " +
                      kManifest + ":\n" + text);
  kb::SweepManifest back;
  try {
    back = kb::parse_sweep_manifest(kb::sweep_manifest_json(m).dump(), kManifest, kMaxPoints);
  } catch (const kb::BenchError& e) {
    kb::fuzz::finding(std::string("a sweep.json written back does not parse: ") + e.what() + "\n--- " + kManifest +
                      ":\n" + text);
  }
  if (back.bench != m.bench || back.config != m.config || back.timeout != m.timeout || back.sets != m.sets ||
      back.axes != m.axes)
    kb::fuzz::finding("a sweep.json written back parses to other fields\n--- " + kManifest + ":\n" + text);
}

// The model: the points the folder is, or why not.
struct Expected {
  bool ok = false;
  std::string why;
  std::vector<kb::SweepPoint> points;
};

Expected model(const Files& files) {
  Expected x;
  std::map<uint64_t, std::string> names;
  for (const auto& [name, text] : files) {
    bool overflow = false;
    const auto i = name_index(name, overflow);
    if (!i) continue;
    if (overflow || *i >= kMaxPoints) return x.why = name + ": index beyond the largest sweep", x;
    if (!names.emplace(*i, name).second) return x.why = name + ": point " + std::to_string(*i) + " twice", x;
  }
  if (names.empty()) return x.why = "no point file", x;
  const auto mf = files.find(kManifest);
  if (mf == files.end()) return x.why = "no " + kManifest, x;
  kb::SweepManifest m;
  try {
    m = kb::parse_sweep_manifest(mf->second, kManifest, kMaxPoints);
  } catch (const kb::BenchError& e) {
    return x.why = kManifest + ": not one: " + e.what(), x;
  }
  check_manifest(mf->second, m);
  const std::string id = m.id();
  const uint64_t size = grid_size(m);
  std::vector<std::string> keys;
  for (const auto& a : m.axes) keys.push_back(a.first);
  for (const auto& [index, name] : names) {
    kb::SweepPoint p;
    try {
      p = kb::parse_sweep_point(files.at(name), name, kMaxPoints);
    } catch (const kb::BenchError& e) {
      return x.why = name + ": not a point file: " + e.what(), x;
    }
    if (p.index != index) return x.why = name + ": holds point " + std::to_string(p.index), x;
    if (p.sweep_id != id || p.points != size || p.bench != m.bench || p.axes != keys)
      return x.why = name + ": a point of another sweep than " + kManifest + "'s", x;
    if (p.values != grid_point(m, index)) return x.why = name + ": not run with its point of the grid", x;
    p.path = g_dir + "/" + name;
    x.points.push_back(std::move(p));
  }
  const kb::Bench* bench = nullptr;
  try {
    bench = &kb::BenchRegistry::instance().get(m.bench);
  } catch (const kb::BenchError&) {
    return x.why = "unknown bench", x;
  }
  // Each axis a configuration key or a parameter of the bench.
  for (const auto& a : m.axes) {
    if (a.first.rfind("pe.", 0) == 0 || a.first.rfind("topology.", 0) == 0) continue;
    bool known = false;
    for (const kb::BenchParam& bp : bench->params) known = known || bp.name == a.first;
    if (!known) return x.why = "axis '" + a.first + "' not a parameter of the bench", x;
  }
  if (x.points.size() != size) return x.why = "points missing", x;
  x.ok = true;
  return x;
}

bool same(const kb::SweepPoint& a, const kb::SweepPoint& b) {
  return a.sweep_id == b.sweep_id && a.bench == b.bench && a.index == b.index && a.points == b.points &&
         a.axes == b.axes && a.values == b.values && a.cells == b.cells && a.error == b.error && a.path == b.path;
}

// The first control byte of `s` that `allowed` does not list, or -1.
int control_byte(const std::string& s, const std::string& allowed) {
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 || c == 0x7f) && allowed.find(ch) == std::string::npos) return c;
  }
  return -1;
}

// RFC 4180 records: fields, a quoted one with "" for a quote.
std::vector<std::vector<std::string>> csv_records(const std::string& csv) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, in_quotes = false;
  for (size_t i = 0; i < csv.size(); ++i) {
    const char c = csv[i];
    if (in_quotes) {
      if (c == '"' && i + 1 < csv.size() && csv[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        in_quotes = false;
      } else {
        field += c;
      }
    } else if (c == '"' && field.empty() && !quoted) {
      in_quotes = quoted = true;
    } else if (c == ',') {
      row.push_back(field);
      field.clear();
      quoted = false;
    } else if (c == '\n') {
      row.push_back(field);
      rows.push_back(row);
      row.clear();
      field.clear();
      quoted = false;
    } else {
      if (quoted) kb::fuzz::finding("CSV: text after a quoted field\n--- csv:\n" + csv);
      field += c;
    }
  }
  if (in_quotes || !field.empty() || !row.empty()) kb::fuzz::finding("CSV: the last record is cut\n--- csv:\n" + csv);
  return rows;
}

// A cell as a point file holds it (sweep_table.cpp's cell()): its text.
std::string unquoted(const std::string& cell) {
  if (cell.size() < 2 || cell.front() != '"') return cell;
  std::string t;
  for (size_t i = 1; i + 1 < cell.size(); ++i) {
    t += cell[i];
    if (cell[i] == '"') ++i;
  }
  return t;
}

std::string describe(const Files& files) {
  std::string s;
  for (const auto& [name, text] : files) s += "=== " + name + "\n" + text + (text.empty() || text.back() != '\n' ? "\n" : "");
  return s;
}

// The CSV a merge wrote, against its points.
void check_csv(const std::vector<kb::SweepPoint>& pts, const std::string& csv) {
  const auto rows = csv_records(csv);
  if (rows.size() != pts.size() + 1)
    kb::fuzz::finding("the CSV has " + std::to_string(rows.size()) + " records for " + std::to_string(pts.size()) +
                      " points\n--- csv:\n" + csv);
  const std::vector<std::string>& header = rows[0];
  const size_t axes = pts.front().axes.size();
  std::vector<std::string> want(pts.front().axes);
  for (const kb::SweepPoint& p : pts)
    for (const auto& kv : p.cells)
      if (std::find(want.begin() + long(axes), want.end(), kv.first) == want.end()) want.push_back(kv.first);
  if (header != want) kb::fuzz::finding("the CSV's header is not the axes then the cell keys\n--- csv:\n" + csv);
  for (size_t i = 0; i < pts.size(); ++i) {
    const std::vector<std::string>& r = rows[i + 1];
    const kb::SweepPoint& p = pts[i];
    if (r.size() != (p.error.empty() ? header.size() : axes) ||
        !std::equal(p.values.begin(), p.values.end(), r.begin()))
      kb::fuzz::finding("CSV row " + std::to_string(i + 1) + " is not point " + std::to_string(i) + "'s values" +
                        (p.error.empty() ? " and cells" : "") + "\n--- csv:\n" + csv);
    if (!p.error.empty()) continue;
    std::map<std::string, std::string> cells;
    for (const auto& [k, v] : p.cells) cells[k] = v;
    for (size_t c = axes; c < header.size(); ++c) {
      const auto it = cells.find(header[c]);
      if (r[c] != (it == cells.end() ? "" : unquoted(it->second)))
        kb::fuzz::finding("CSV row " + std::to_string(i + 1) + ", column " + header[c] + ": '" + r[c] +
                          "', not the point's cell\n--- csv:\n" + csv);
    }
  }
}

std::string read_csv() {
  struct stat st {};
  if (fstat(g_csv_fd, &st) != 0) kb::fuzz::finding("fstat of the CSV failed");
  std::string s(size_t(st.st_size), '\0');
  if (!s.empty() && pread(g_csv_fd, s.data(), s.size(), 0) != ssize_t(s.size()))
    kb::fuzz::finding("pread of the CSV failed");
  return s;
}

// std::cout and std::cerr into strings while alive.
struct Capture {
  std::ostringstream out, err;
  std::streambuf* old_out = std::cout.rdbuf(out.rdbuf());
  std::streambuf* old_err = std::cerr.rdbuf(err.rdbuf());
  ~Capture() {
    std::cout.rdbuf(old_out);
    std::cerr.rdbuf(old_err);
  }
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kb::register_builtin_benches();  // as kernbench's main does
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/kernbench_fuzz_points_XXXXXX";
  if (!mkdtemp(dir.data())) kb::fuzz::finding("mkdtemp failed");
  g_dir = dir;
  g_csv_fd = memfd_create("kernbench_fuzz_csv", MFD_CLOEXEC);
  if (g_csv_fd < 0) kb::fuzz::finding("memfd_create failed");
  g_csv_path = "/dev/fd/" + std::to_string(g_csv_fd);
  const char* verbose = std::getenv("KB_FUZZ_VERBOSE");
  g_verbose = verbose && std::string(verbose) != "0" && *verbose;
  std::atexit([] {
    empty_dir();
    rmdir(g_dir.c_str());
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const Files files = folder_of(text);
  empty_dir();
  for (const auto& [name, body] : files) write_file(g_dir + "/" + name, body);
  if (ftruncate(g_csv_fd, 0) != 0 || lseek(g_csv_fd, 0, SEEK_SET) != 0) kb::fuzz::finding("cannot reset the CSV");
  const Expected want = model(files);

  // tb/cli/sweep.cpp's collect_sweep, with its CSV.
  std::vector<kb::SweepPoint> got;
  std::string refused;
  int status = -1;
  std::string out, err;
  {
    Capture cap;
    try {
      got = kb::collect_sweep_points(g_dir, kMaxPoints);
      const kb::Bench& bench = kb::BenchRegistry::instance().get(got.front().bench);
      std::vector<std::vector<std::string>> values;
      std::vector<std::vector<std::pair<std::string, std::string>>> cells;
      std::vector<std::string> errors;
      for (const kb::SweepPoint& p : got) {
        values.push_back(p.values);
        cells.push_back(p.cells);
        errors.push_back(p.error);
      }
      const auto csv_out = kb::open_output(g_csv_path, "sweep CSV");
      status = kb::cli::print_sweep(bench, got.front().axes, values, cells, errors, csv_out.get(), g_csv_path);
    } catch (const kb::BenchError& e) {
      refused = e.what();
      if (refused.empty()) refused = "(an empty message)";
    }
    out = cap.out.str();
    err = cap.err.str();
  }
  const std::string csv = read_csv();
  const std::string input = describe(files);

  if (g_verbose) {
    std::fprintf(stderr, "kernbench fuzz: %s\n",
                 (want.ok ? "merged " + std::to_string(want.points.size()) + " points"
                          : "refused (" + want.why + "): " + refused).c_str());
  }
  if (!refused.empty()) {
    if (want.ok) kb::fuzz::finding("--collect refused a whole sweep: " + refused + "\n--- input:\n" + input);
    if (refused.rfind("sweep --collect: " + g_dir, 0) != 0)
      kb::fuzz::finding("a refusal that does not start 'sweep --collect: <the folder or its file>': " + refused);
    // One line; kernbench prints it through terminal_safe (main.cpp), which
    // escapes what else it may hold (JSON parse errors quote the input).
    if (refused.find_first_of("\r\n") != std::string::npos)
      kb::fuzz::finding("a refusal of more than one line: " + kb::cli::terminal_safe(refused) + "\n--- input:\n" +
                        input);
    if (const int c = control_byte(kb::cli::terminal_safe(refused), ""); c >= 0)
      kb::fuzz::finding("a refusal as kernbench prints it holds the control byte " + std::to_string(c) + ": " +
                        refused + "\n--- input:\n" + input);
    if (!out.empty() || !err.empty() || !csv.empty())
      kb::fuzz::finding("a refused folder printed or wrote something\n--- stdout:\n" + out + "--- stderr:\n" + err +
                        "--- csv:\n" + csv);
    return 0;
  }
  if (!want.ok)
    kb::fuzz::finding("--collect merged a folder that is not one whole sweep (" + want.why + ")\n--- input:\n" + input);
  if (got.size() != want.points.size())
    kb::fuzz::finding("--collect returned " + std::to_string(got.size()) + " points, not " +
                      std::to_string(want.points.size()));
  size_t failed = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!same(got[i], want.points[i]) || got[i].index != i)
      kb::fuzz::finding("--collect's point " + std::to_string(i) + " is not its file's\n--- input:\n" + input);
    failed += !got[i].error.empty();
  }
  if (status != (failed ? 1 : 0))
    kb::fuzz::finding("exit status " + std::to_string(status) + " with " + std::to_string(failed) + " failed points");
  if (const int c = control_byte(out, "\r\n"); c >= 0)
    kb::fuzz::finding("the table holds the control byte " + std::to_string(c) + "\n--- stdout:\n" + out);
  if (const int c = control_byte(err, "\n"); c >= 0)
    kb::fuzz::finding("stderr holds the control byte " + std::to_string(c) + "\n--- stderr:\n" + err);
  if (size_t(std::count(err.begin(), err.end(), '\n')) != failed)
    kb::fuzz::finding("stderr has not one line per failed point\n--- stderr:\n" + err);
  check_csv(got, csv);
  return 0;
}

// libsystemc.so references sc_main; nothing here elaborates a simulation.
extern "C" int sc_main(int, char**) { return 0; }
