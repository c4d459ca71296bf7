// The PE's tensor descriptor table. A Handle is an 8-byte reference into it
// (docs/cost-model.md D2: "address only - shape/dtype assumed in descriptor
// table"); the descriptor holds the memory space, byte address, shape,
// strides and dtype. Views (row/column slices) get their own descriptor over
// the same bytes, so the hazard scoreboard compares address ranges, not
// handles.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "models/mem/address_map.h"
#include "models/isa/commands.h"
#include "models/isa/register_map.h"

namespace kb {

enum class MemSpace : uint8_t { kHbm, kTcm };
const char* to_string(MemSpace s);

enum class Dtype : uint8_t { kFp32, kBf16, kFp16, kInt8 };
const char* to_string(Dtype d);
bool dtype_from_string(const std::string& name, Dtype* d);
// Inline: hazard ranges and dispatch checks ask for it on every command.
inline uint32_t dtype_bytes(Dtype d) {
  switch (d) {
    case Dtype::kFp32: return 4;
    case Dtype::kBf16: return 2;
    case Dtype::kFp16: return 2;
    case Dtype::kInt8: return 1;
  }
  return 4;
}

// A kernel-author mistake (bad shape, unknown handle, out of TCM, ...).
struct KernelError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// TensorTable::view() writes a reused ring slot field by field through a
// structured binding: a new field must be set there (it fails to compile
// until it is).
struct TensorDesc {
  Handle handle = 0;
  std::string name;
  MemSpace space = MemSpace::kHbm;
  Dtype dtype = Dtype::kFp32;
  int64_t rows = 0, cols = 0;  // every tensor is 2-D: [rows, cols]
  int64_t row_stride = 0;      // elements between rows (>= cols for views)
  uint64_t address = 0;        // byte address of element [0, 0]
  // A view made by view() without a name: its base and offset, so its name
  // is formatted only when a message needs it (views are made per tile).
  Handle base = 0;
  int64_t row0 = 0, col0 = 0;

  // Unsigned arithmetic: the table validated every descriptor (positive
  // shape, span of at most 2^63 - 1 elements that does not wrap), so these
  // never overflow.
  uint64_t elements() const { return uint64_t(rows) * uint64_t(cols); }
  uint64_t bytes() const { return elements() * dtype_bytes(dtype); }
  // Elements from [0, 0] to one past the last: (rows - 1) x row_stride + cols.
  uint64_t span_elements() const { return uint64_t(rows - 1) * uint64_t(row_stride) + uint64_t(cols); }
  // [begin, end) byte range covered, for hazards (conservative for strided
  // views: the bounding range).
  uint64_t span_begin() const { return address; }
  uint64_t span_end() const { return address + span_elements() * dtype_bytes(dtype); }
  std::string shape_string() const;  // "[rows, cols] dtype space"
};

// Views get handles of their own kind, kept in a ring of kViewCapacity
// entries: a kernel walking a long context makes a few views per tile, and
// the table must not grow with the context. A view older than the last
// kViewCapacity views is gone; using its handle is an error that says so.
constexpr Handle kViewHandleBit = Handle(1) << 62;
constexpr uint64_t kViewCapacity = 1 << 16;

// The handle scheme. A handle is one of:
// - a table handle, written by a VP's driver: the offset of an entry of the
//   tensor table, regs::kTensorTable + kTensorDescBytes x i (register_map.h);
// - a declared handle (tl.declare, replay): kDeclaredHandleBit | n, n = 1, 2, ...;
// - a view handle: kViewHandleBit | sequence number.
// The tag bits keep the kinds disjoint: no declared or view handle falls in
// the table window [kTensorTable, kTensorTableEnd), whatever their count.
constexpr Handle kDeclaredHandleBit = Handle(1) << 61;
inline bool is_table_handle(Handle h) {
  return h >= regs::kTensorTable && h < regs::kTensorTableEnd && (h - regs::kTensorTable) % regs::kTensorDescBytes == 0;
}

// HBM and TCM are disjoint ranges of one address map (models/mem/address_map.h).

class TensorTable {
 public:
  // New HBM tensors are allocated from `hbm_alloc` (the PE's, address_map.h).
  explicit TensorTable(uint64_t tcm_size_bytes, uint64_t hbm_alloc = kHbmBase)
      : tcm_size_(tcm_size_bytes), hbm_next_(hbm_alloc), own_slice_(hbm_slice_of(hbm_alloc)) {}
  // The view ring (about 7 MB): its pages are all touched when it is made,
  // so peak memory does not grow with the number of views a run makes; a
  // slot is constructed when its first view is made, so making the ring
  // costs its page faults and no more. Only a table whose PE launches a
  // kernel, or that makes a view, has one: made at reserve_views() (PE_CPU's
  // launch, before the simulation for a launch made then) or else at the
  // first view. A mesh PE that runs no kernel holds none (64 rings cost
  // seconds to build and free on a virtual machine).
  void reserve_views();
  bool has_view_ring() const { return views_ != nullptr; }
  // A PE among several (a cube or mesh): its own tensors must fit its slice.
  void bound_to_slice() { slice_bounded_ = true; }

  // Allocates a new tensor (64-byte aligned). Throws KernelError when TCM is
  // full or the shape is not positive.
  Handle declare(const std::string& name, MemSpace space, int64_t rows,
                 int64_t cols, Dtype dtype);
  // A new HBM tensor in global PE `slice`'s HBM slice (tl.hbm_on): one bump
  // allocator per slice, from hbm_alloc_base(slice); the table's own slice is
  // declare()'s. Throws KernelError when the tensor does not fit in the slice.
  Handle declare_in_slice(uint32_t slice, const std::string& name, int64_t rows, int64_t cols, Dtype dtype);
  // Declares a tensor at a given address, as a recorded stream does. The
  // descriptor is validated first (validate_tensor).
  Handle declare_at(const std::string& name, MemSpace space, int64_t rows,
                    int64_t cols, Dtype dtype, uint64_t address,
                    int64_t row_stride);
  // The one check every descriptor passes before it enters the table, from
  // a live kernel (declare) or a replayed stream (declare_at) alike:
  // positive shape, row stride >= cols, an address aligned to the
  // dtype, a span of at most 2^63 - 1 elements whose bytes are computed
  // without overflow and do not wrap past 2^64, and the whole span inside
  // its memory space (TCM: [0, pe.attrs.tcm.size_bytes); HBM: from
  // 0x10000000000). Throws KernelError naming the tensor and what was
  // expected.
  void validate_tensor(const TensorDesc& d) const;
  uint64_t tcm_size() const { return tcm_size_; }
  // rows [row0, row0+nrows) x cols [col0, col0+ncols) of `base`.
  // Kernels make views per tile: a string_view, so an unnamed view builds
  // no string.
  Handle view(Handle base, int64_t row0, int64_t nrows, int64_t col0,
              int64_t ncols, std::string_view name = {});

  // The driver's part of the table: puts `d` in the entry
  // of table handle `h` (is_table_handle), replacing what was there. `d` is
  // validated first (validate_tensor); KernelError for a bad handle or
  // tensor, and the entry is left as it was.
  void install(Handle h, TensorDesc d);

  // Null if unknown (a table entry never installed, a handle of no kind).
  // Inline: every dispatch check calls it.
  const TensorDesc* find(Handle h) const {
    if (h & kViewHandleBit) {
      const uint64_t seq = h & ~kViewHandleBit;
      if (seq < next_view_ && next_view_ - seq <= kViewCapacity) return &views_[seq % kViewCapacity];
    } else if (h & kDeclaredHandleBit) {
      const uint64_t n = h & ~kDeclaredHandleBit;
      if (n >= 1 && n <= descs_.size()) return &descs_[n - 1];
    } else if (is_table_handle(h)) {
      const TensorDesc& d = installed_[(h - regs::kTensorTable) / regs::kTensorDescBytes];
      if (d.handle != 0) return &d;
    }
    return nullptr;
  }
  // Throws KernelError if unknown.
  const TensorDesc& at(Handle h) const {
    if (const TensorDesc* d = find(h)) return *d;
    throw KernelError(why_unknown(h));
  }
  // The tensor's name; an unnamed view's is "base[r0:r1,c0:c1]".
  std::string name_of(const TensorDesc& d) const;
  bool contains(Handle h) const { return find(h) != nullptr; }
  // Why `h` is not a valid handle (unknown, or a view that went stale).
  std::string why_unknown(Handle h) const;
  uint64_t tcm_used() const { return tcm_next_ - kTcmBase; }
  // Frees every TCM allocation made after tcm_used() returned `mark`; their
  // descriptors stay (handles remain unique) but must not be used again.
  void release_tcm(uint64_t mark) { tcm_next_ = kTcmBase + mark; }

 private:
  Handle add(TensorDesc d);
  uint64_t tcm_end() const;  // one past TCM's last byte
  uint64_t tcm_size_;
  uint64_t tcm_next_ = kTcmBase;
  uint64_t hbm_next_;  // the own slice's allocator
  bool slice_bounded_ = false;  // tl.hbm tensors must fit the own slice
  const uint64_t own_slice_;
  // Other slices' allocators (tl.hbm_on), few per PE.
  std::vector<std::pair<uint64_t, uint64_t>> slice_next_;
  uint64_t& slice_next(uint64_t slice);
  std::vector<TensorDesc> descs_;  // declared: handle kDeclaredHandleBit | n is descs_[n - 1]
  // The tensor table's entries; handle 0 marks an empty one.
  std::vector<TensorDesc> installed_ = std::vector<TensorDesc>(regs::kTensorTableEntries);
  // Destroys the slots constructed so far (the first `constructed`, as
  // views are made in order) and frees the ring's memory.
  struct ViewRingDelete {
    ViewRingDelete() noexcept {}  // user-provided: a nested class's initialisers are not seen yet here
    uint64_t constructed = 0;
    void operator()(TensorDesc* ring) const;
  };
  // View seq s is views_[s % kViewCapacity]; null until reserve_views().
  // find() reads it only for a seq below next_view_: a constructed slot.
  std::unique_ptr<TensorDesc[], ViewRingDelete> views_;
  uint64_t next_view_ = 0;
};

}  // namespace kb
