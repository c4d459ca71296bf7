// The memory a run may use, and the refusal of a mesh that cannot fit
// (docs/cli.md, "Memory limits").
//
// The limit is --max-memory when given, else what the machine has: the
// least of MemAvailable (/proc/meminfo) and the room under the cgroup's
// memory.max. Independently, a soft RLIMIT_AS (`ulimit -v`, prlimit --as)
// bounds the address space. A mesh whose estimate (models/top/memory_estimate.h)
// passes either is refused before it is built; what is left under the limit
// caps data mode's storage (models/mem/sparse_memory.h).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "models/top/memory_estimate.h"

namespace kb {

// A run refused before it starts: it cannot fit in memory. The CLI's exit
// status 2, as bad input.
struct MemoryLimitError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct MemoryLimit {
  uint64_t bytes = 0;          // resident memory the run may add
  std::string source;          // "--max-memory", "MemAvailable", "the cgroup's memory.max"
  std::optional<uint64_t> address_space;  // room under RLIMIT_AS, when one is set
};

// max_memory_bytes: --max-memory (0: not given).
MemoryLimit memory_limit(uint64_t max_memory_bytes);

// Throws MemoryLimitError naming the estimate, the limit and its source.
void check_fits(const MemoryEstimate& e, const MemoryLimit& limit);

// "4GiB", "512MiB", "1536KiB" (no space) or bytes: with a unit B, KiB, MiB, GiB, TiB
// (K, M, G, T the same), at least 1 MiB. Throws std::invalid_argument saying
// why, without echoing the text.
uint64_t parse_memory_size(const std::string& text);

}  // namespace kb
