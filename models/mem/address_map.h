// The global address map (DESIGN.md "The boundary"). Every address a PE's
// `mem` socket carries is global; targets see it unchanged.
//
//   [0, tcm.size_bytes)                PE-local TCM: every PE addresses its own
//                                      TCM here; it never leaves the PE.
//   kTcmWindowBase + p x kTcmWindowStride
//                                      PE p's TCM as seen from outside the PE
//                                      (reserved for remote TCM access; not
//                                      routed yet).
//   [kHbmBase, 2^64)                   HBM. PE p allocates its tensors from
//                                      hbm_alloc_base(p); PE 0's are where a
//                                      single PE always put them, so replay
//                                      streams and op logs keep their addresses.
#pragma once

#include <cstdint>

namespace kb {

constexpr uint64_t kTcmBase = 0x0;
constexpr uint64_t kTcmWindowBase = uint64_t(1) << 36;
constexpr uint64_t kTcmWindowStride = uint64_t(1) << 32;  // tcm.size_bytes <= 2^32
constexpr uint64_t kHbmBase = uint64_t(1) << 40;
constexpr uint64_t kHbmAllocStride = uint64_t(1) << 44;  // per PE, for 2^20 PEs

inline uint64_t tcm_window(uint32_t pe) { return kTcmWindowBase + uint64_t(pe) * kTcmWindowStride; }
inline uint64_t hbm_alloc_base(uint32_t pe) { return kHbmBase + uint64_t(pe) * kHbmAllocStride; }

}  // namespace kb
