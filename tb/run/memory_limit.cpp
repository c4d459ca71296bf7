#include "tb/run/memory_limit.h"

#include <sys/resource.h>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

namespace kb {

namespace {

std::string mib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f MiB", double(bytes) / double(1 << 20));
  return buf;
}

// A "Key:   N kB" line of a /proc status-style file, bytes.
std::optional<uint64_t> proc_kb(const char* path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size() + 1, key + ":") != 0) continue;
    std::istringstream fields(line.substr(key.size() + 1));
    uint64_t kb = 0;
    if (fields >> kb) return kb * 1024;
  }
  return std::nullopt;
}

std::optional<uint64_t> file_number(const std::string& path) {
  std::ifstream in(path);
  uint64_t n = 0;
  if (in >> n) return n;
  return std::nullopt;  // missing, or "max"
}

}  // namespace

MemoryLimit memory_limit(uint64_t max_memory_bytes) {
  MemoryLimit l;
  if (max_memory_bytes > 0) {
    l.bytes = max_memory_bytes;
    l.source = "--max-memory";
  } else {
    l.bytes = std::numeric_limits<uint64_t>::max();
    l.source = "no limit known";
    if (auto avail = proc_kb("/proc/meminfo", "MemAvailable")) {
      l.bytes = *avail;
      l.source = "MemAvailable of /proc/meminfo";
    }
    // cgroup v2: this process's own cgroup ("0::/PATH" in /proc/self/cgroup)
    // and each one above it; the least room under a memory.max counts.
    std::string path;
    {
      std::ifstream in("/proc/self/cgroup");
      for (std::string line; std::getline(in, line);)
        if (line.rfind("0::", 0) == 0) path = line.substr(3);
    }
    for (;;) {
      const std::string dir = "/sys/fs/cgroup" + (path == "/" ? std::string() : path);
      const auto max = file_number(dir + "/memory.max");
      const auto current = file_number(dir + "/memory.current");
      if (max && current) {
        const uint64_t room = *max > *current ? *max - *current : 0;
        if (room < l.bytes) {
          l.bytes = room;
          l.source = "room under the cgroup's memory.max (" + dir + ")";
        }
      }
      const size_t slash = path.find_last_of('/');
      if (path.empty() || path == "/" || slash == std::string::npos) break;
      path = slash == 0 ? "/" : path.substr(0, slash);
    }
  }
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    const uint64_t used = proc_kb("/proc/self/status", "VmSize").value_or(0);
    l.address_space = as.rlim_cur > used ? as.rlim_cur - used : 0;
  }
  return l;
}

void check_fits(const MemoryEstimate& e, const MemoryLimit& limit) {
  if (e.resident_bytes > limit.bytes) {
    throw MemoryLimitError("the mesh would need about " + e.text() + ", more than the " + mib(limit.bytes) +
                           " allowed (" + limit.source +
                           "; docs/cli.md, \"Memory limits\"): use a smaller topology, or a larger --max-memory "
                           "on a machine that has it");
  }
  if (limit.address_space && e.address_space_bytes > *limit.address_space) {
    throw MemoryLimitError("the mesh would need about " + mib(e.address_space_bytes) + " of address space for " +
                           std::to_string(e.pes) + " PEs, more than the " + mib(*limit.address_space) +
                           " left under this process's RLIMIT_AS (ulimit -v; docs/cli.md, \"Memory limits\"): use "
                           "a smaller topology or raise the limit");
  }
}

uint64_t parse_memory_size(const std::string& text) {
  const auto bad = [](const std::string& why) {
    return std::invalid_argument(why + "; expected a whole number with a unit B, KiB, MiB, GiB or TiB, e.g. 4GiB");
  };
  size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i == 0) throw bad("no number");
  if (i > 15) throw bad("too many digits");
  const uint64_t n = std::stoull(text.substr(0, i));
  std::string unit = text.substr(i);
  if (unit.size() == 3 && unit[1] == 'i' && unit[2] == 'B') unit = unit.substr(0, 1);
  int shift = -1;
  if (unit == "B") shift = 0;
  else if (unit == "K") shift = 10;
  else if (unit == "M") shift = 20;
  else if (unit == "G") shift = 30;
  else if (unit == "T") shift = 40;
  if (shift < 0) throw bad(unit.empty() ? "no unit" : "unknown unit");
  if (n > (std::numeric_limits<uint64_t>::max() >> shift)) throw bad("too large");
  const uint64_t bytes = n << shift;
  if (bytes < (uint64_t(1) << 20)) throw bad("less than 1 MiB");
  return bytes;
}

}  // namespace kb
