// A value as "0x" and lowercase hex digits, for messages (addresses,
// handles, register and descriptor words).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace kb {

inline std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace kb
