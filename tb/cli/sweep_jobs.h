// Sweeps beyond one machine: the pieces of
// `kernbench sweep --emit-jobs` and `--collect` that are not the CLI.
//
// --emit-jobs writes one POSIX sh command per point; each runs the point
// alone (`kernbench sweep ... --point-json FILE`) and writes a point file:
// the point's place in its sweep and its CSV cells, exactly the text the
// local sweep would put in the table and the CSV. --collect reads a folder
// of point files back, checks they are one whole sweep and rebuilds the
// table. Point files are untrusted input: bounded in size, count and depth,
// every field checked, and every problem a BenchError naming the file.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace kb {

// The format tag of a point file; another tag is refused.
inline constexpr char kSweepPointFormat[] = "kernbench-sweep-point-1";
// Bounds of --collect: one point file, and all of them together.
inline constexpr uint64_t kMaxPointFileBytes = uint64_t(1) << 20;
inline constexpr uint64_t kMaxCollectBytes = uint64_t(256) << 20;

// One point of a sweep as its point file holds it.
struct SweepPoint {
  std::string sweep_id;  // the same in every point of one sweep
  std::string bench;
  uint64_t index = 0;    // from 0, first axis slowest (the local sweep's row order)
  uint64_t points = 0;   // points in the sweep
  std::vector<std::string> axes, values;  // axis keys and this point's values
  std::vector<std::pair<std::string, std::string>> cells;  // figure key, CSV cell
  std::string error;     // not empty: the run failed (no cells)
  std::string path;      // the file it was read from (collect_sweep_points)
};

// The sweep an --emit-jobs wrote, as DIR/sweep.json beside its point files:
// what its id is made of (bench, --config, --timeout, --set, the grid).
// --collect checks the id against these fields and every point's values
// against its place in the grid (docs/cli.md, Sweeps on many machines).
inline constexpr char kSweepManifestFormat[] = "kernbench-sweep-1";
inline constexpr char kSweepManifestName[] = "sweep.json";
struct SweepManifest {
  std::string bench, config, timeout;  // config: absolute path or ""; timeout: seconds or ""
  std::vector<std::string> sets;
  std::vector<std::pair<std::string, std::vector<std::string>>> axes;  // key, values
  uint64_t points() const;  // the product of the axes' value counts
  std::vector<std::string> values_at(uint64_t index) const;  // first axis slowest
  std::string id() const;  // sweep_id of the fields above
};
nlohmann::json sweep_manifest_json(const SweepManifest& m);
SweepManifest parse_sweep_manifest(const std::string& text, const std::string& path, uint64_t max_points);

// `arg` quoted for POSIX sh: left bare when it is only [A-Za-z0-9_@%+=:,./-],
// else in single quotes. Throws BenchError on a line break (`what` names
// the argument): a job is one line.
std::string sh_quote(const std::string& arg, const std::string& what);

// A sweep's identity: FNV-1a 64 of its fields, each length-prefixed, as 16
// hex digits. The same on every machine.
std::string sweep_id(const std::vector<std::string>& fields);
bool is_sweep_id(const std::string& s);

nlohmann::json sweep_point_json(const SweepPoint& p);
// Parses and checks one point file's text; `path` names it in errors.
SweepPoint parse_sweep_point(const std::string& text, const std::string& path, uint64_t max_points);

// Every point-INDEX.json in `dir` (other names are ignored), checked to be
// points 0 to N-1 of the sweep in dir/sweep.json, of a bench this kernbench
// knows, each once and each with its grid point's values; in index order.
// Throws BenchError.
std::vector<SweepPoint> collect_sweep_points(const std::string& dir, uint64_t max_points);

}  // namespace kb
