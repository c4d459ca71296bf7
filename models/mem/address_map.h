// The global address map (docs/architecture.md "The boundary"). Every address
// a PE's `mem` socket carries is global; targets see it unchanged.
//
//   [0, tcm.size_bytes)                PE-local TCM: every PE addresses its own
//                                      TCM here; it never leaves the PE.
//   kTcmWindowBase + p x kTcmWindowStride
//                                      PE p's TCM as seen from outside the PE
//                                      (reserved for remote TCM access; not
//                                      routed yet).
//   kIpcWindowBase + g x kIpcWindowStride
//                                      PE g's IPC receive queue (PE_IPC), g the
//                                      global PE number.
//   [kHbmBase, 2^64)                   HBM. PE p allocates its tensors from
//                                      hbm_alloc_base(p); PE 0's are where a
//                                      single PE always put them, so replay
//                                      streams and op logs keep their addresses.
#pragma once

#include <cstdint>

namespace kb {

constexpr uint64_t kTcmBase = 0x0;
constexpr uint64_t kIpcWindowBase = uint64_t(1) << 32;
constexpr uint64_t kIpcWindowStride = uint64_t(1) << 16;  // [2^32, 2^36): room for 2^20 - 2^16 windows
constexpr uint64_t kTcmWindowBase = uint64_t(1) << 36;
constexpr uint64_t kTcmWindowStride = uint64_t(1) << 32;  // tcm.size_bytes <= 2^32
constexpr uint64_t kHbmBase = uint64_t(1) << 40;
constexpr uint64_t kHbmAllocStride = uint64_t(1) << 44;  // per PE, for 2^20 PEs

inline uint64_t tcm_window(uint32_t pe) { return kTcmWindowBase + uint64_t(pe) * kTcmWindowStride; }
inline uint64_t hbm_alloc_base(uint32_t pe) { return kHbmBase + uint64_t(pe) * kHbmAllocStride; }
inline uint64_t ipc_window(uint32_t pe) { return kIpcWindowBase + uint64_t(pe) * kIpcWindowStride; }

// In a cube or mesh, global PE g owns the HBM slice
// [hbm_alloc_base(g), hbm_alloc_base(g) + kHbmAllocStride): its allocations
// are where the slice is, so an address names the PE whose slice holds it.
constexpr uint64_t kHbmSliceBytes = kHbmAllocStride;
// The global PE whose slice holds HBM address `a` (a >= kHbmBase).
inline uint64_t hbm_slice_of(uint64_t a) { return (a - kHbmBase) / kHbmSliceBytes; }
// The global PE whose IPC window holds `a` (a in [kIpcWindowBase, kTcmWindowBase)).
inline uint64_t ipc_window_of(uint64_t a) { return (a - kIpcWindowBase) / kIpcWindowStride; }

}  // namespace kb
