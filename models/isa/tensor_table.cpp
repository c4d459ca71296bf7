#include "models/isa/tensor_table.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>

#if __has_include(<sys/mman.h>)
#include <sys/mman.h>
#endif

#include "models/util/checked.h"
#include "models/util/hex.h"

namespace kb {

const char* to_string(MemSpace s) { return s == MemSpace::kHbm ? "hbm" : "tcm"; }

namespace {
struct DtypeInfo {
  Dtype d;
  const char* name;
};
constexpr DtypeInfo kDtypes[] = {
    {Dtype::kFp32, "fp32"}, {Dtype::kBf16, "bf16"}, {Dtype::kFp16, "fp16"}, {Dtype::kInt8, "int8"}};
constexpr uint64_t kAlign = 64;
// Saturates at the top of the address space: the next declaration there
// then fails validation instead of wrapping to address 0.
uint64_t align_up(uint64_t x) {
  const std::optional<uint64_t> up = checked_add(x, kAlign - 1);
  return up ? *up / kAlign * kAlign : std::numeric_limits<uint64_t>::max();
}

// "a + n" of a range's end, without overflowing for a careless argument.
std::string end_text(int64_t a, int64_t n) {
  int64_t e;
  if (__builtin_add_overflow(a, n, &e)) return std::to_string(a) + " + " + std::to_string(n);
  return std::to_string(e);
}

[[noreturn]] void bad_shape(const std::string& name, int64_t rows, int64_t cols) {
  throw KernelError("tensor '" + name + "': shape [" + std::to_string(rows) + ", " +
                    std::to_string(cols) + "] must be positive");
}
}  // namespace

const char* to_string(Dtype d) { return kDtypes[int(d)].name; }
bool dtype_from_string(const std::string& name, Dtype* d) {
  for (const DtypeInfo& i : kDtypes) {
    if (name == i.name) {
      *d = i.d;
      return true;
    }
  }
  return false;
}

std::string TensorDesc::shape_string() const {
  return "[" + std::to_string(rows) + ", " + std::to_string(cols) + "] " +
         to_string(dtype) + " " + to_string(space);
}

Handle TensorTable::add(TensorDesc d) {
  d.handle = kDeclaredHandleBit | (descs_.size() + 1);  // 0 is never a valid handle
  descs_.push_back(std::move(d));
  return descs_.back().handle;
}

Handle TensorTable::declare(const std::string& name, MemSpace space,
                            int64_t rows, int64_t cols, Dtype dtype) {
  if (rows <= 0 || cols <= 0) bad_shape(name, rows, cols);
  const uint64_t address = space == MemSpace::kTcm ? tcm_next_ : hbm_next_;
  if (space == MemSpace::kTcm) {
    const std::optional<uint64_t> bytes =
        checked_product({uint64_t(rows), uint64_t(cols), dtype_bytes(dtype)});
    const std::optional<uint64_t> end = bytes ? checked_add(address, *bytes) : std::nullopt;
    if (!end || *end > tcm_end()) {
      throw KernelError("tensor '" + name + "' (" +
                        (bytes ? std::to_string(*bytes)
                               : std::to_string(rows) + " x " + std::to_string(cols) + " x " +
                                     std::to_string(dtype_bytes(dtype))) +
                        " bytes) does not fit in TCM: " + std::to_string(tcm_used()) + " of " +
                        std::to_string(tcm_size_) + " bytes used (pe.attrs.tcm.size_bytes)");
    }
  }
  if (address == std::numeric_limits<uint64_t>::max()) {  // align_up saturated
    throw KernelError("tensor '" + name + "' " + "does not fit in HBM: earlier tensors use its addresses "
                      "up to the end of the 64-bit address space");
  }
  if (space == MemSpace::kHbm && slice_bounded_) {
    // In a top of several PEs a PE's tensors stay in its own HBM slice
    // (address_map.h): past it they would be another PE's memory. (A PE
    // alone has the whole HBM range.)
    const uint64_t slice_end = hbm_alloc_base(uint32_t(own_slice_)) + kHbmSliceBytes;
    const std::optional<uint64_t> bytes = checked_product({uint64_t(rows), uint64_t(cols), dtype_bytes(dtype)});
    if (address < slice_end && (!bytes || *bytes > slice_end - address)) {
      throw KernelError("tensor '" + name + "' (" + std::to_string(rows) + " x " + std::to_string(cols) + " " +
                        to_string(dtype) + ") does not fit in PE " + std::to_string(own_slice_) +
                        "'s HBM slice (" + std::to_string(kHbmSliceBytes) + " bytes, " +
                        std::to_string(address - hbm_alloc_base(uint32_t(own_slice_))) + " used)");
    }
  }
  // declare_at validates the rest (size, span, HBM address space) and moves
  // the bump allocator past the tensor.
  return declare_at(name, space, rows, cols, dtype, address, cols);
}

uint64_t& TensorTable::slice_next(uint64_t slice) {
  for (auto& [s, next] : slice_next_)
    if (s == slice) return next;
  slice_next_.emplace_back(slice, hbm_alloc_base(uint32_t(slice)));
  return slice_next_.back().second;
}

Handle TensorTable::declare_in_slice(uint32_t slice, const std::string& name, int64_t rows, int64_t cols,
                                     Dtype dtype) {
  if (slice == own_slice_) return declare(name, MemSpace::kHbm, rows, cols, dtype);
  if (rows <= 0 || cols <= 0) bad_shape(name, rows, cols);
  const uint64_t address = slice_next(slice);
  const uint64_t end = hbm_alloc_base(slice) + kHbmSliceBytes;
  const std::optional<uint64_t> bytes = checked_product({uint64_t(rows), uint64_t(cols), dtype_bytes(dtype)});
  if (address >= end || !bytes || *bytes > end - address) {
    throw KernelError("tensor '" + name + "' [" + std::to_string(rows) + ", " + std::to_string(cols) +
                      "] does not fit in PE " + std::to_string(slice) + "'s HBM slice [" +
                      hex(hbm_alloc_base(slice)) + ", " + hex(end) + ")");
  }
  TensorDesc d;
  d.name = name;
  d.space = MemSpace::kHbm;
  d.dtype = dtype;
  d.rows = rows;
  d.cols = cols;
  d.row_stride = cols;
  d.address = address;
  validate_tensor(d);
  slice_next(slice) = align_up(d.span_end());  // this slice's allocator only
  return add(std::move(d));
}

uint64_t TensorTable::tcm_end() const {
  // TCM lies below HBM in the one address map.
  const std::optional<uint64_t> end = checked_add(kTcmBase, tcm_size_);
  return end && *end < kHbmBase ? *end : kHbmBase;
}

void TensorTable::validate_tensor(const TensorDesc& d) const {
  if (d.rows <= 0 || d.cols <= 0) bad_shape(d.name, d.rows, d.cols);
  const auto fail = [&](const std::string& what) {
    throw KernelError("tensor '" + d.name + "' " + d.shape_string() + " at " + hex(d.address) +
                      ": " + what);
  };
  if (d.row_stride < d.cols) {
    fail("row stride " + std::to_string(d.row_stride) + " must be at least its " +
         std::to_string(d.cols) + " columns");
  }
  const uint64_t size = dtype_bytes(d.dtype);
  if (d.address % size != 0) {
    fail(std::string("address must be a multiple of ") + std::to_string(size) + " bytes (" +
         to_string(d.dtype) + " alignment)");
  }
  // (rows - 1) x row_stride + cols elements, checked (int64 code downstream
  // indexes elements, so at most 2^63 - 1 of them).
  const std::optional<uint64_t> last_row = checked_mul(uint64_t(d.rows - 1), uint64_t(d.row_stride));
  const std::optional<uint64_t> span = last_row ? checked_add(*last_row, uint64_t(d.cols)) : std::nullopt;
  if (!span || *span > uint64_t(std::numeric_limits<int64_t>::max())) {
    fail("spans more than 2^63 - 1 elements ((rows - 1) x row stride " + std::to_string(d.row_stride) +
         " + cols)");
  }
  const std::optional<uint64_t> bytes = checked_mul(*span, size);
  if (!bytes) {
    fail("its span of " + std::to_string(*span) + " elements x " + std::to_string(size) +
         " bytes exceeds the 64-bit address space");
  }
  const std::optional<uint64_t> end = checked_add(d.address, *bytes);
  if (!end) fail("its " + std::to_string(*bytes) + " bytes run past the end of the 64-bit address space");
  if (d.space == MemSpace::kTcm) {
    if (d.address < kTcmBase || *end > tcm_end()) {
      fail("bytes [" + hex(d.address) + ", " + hex(*end) + ") must lie inside TCM [" + hex(kTcmBase) +
           ", " + hex(tcm_end()) + ") (pe.attrs.tcm.size_bytes = " + std::to_string(tcm_size_) + ")");
    }
  } else if (d.address < kHbmBase) {
    fail("an HBM address must be at least " + hex(kHbmBase) + " (below it is TCM)");
  }
}

Handle TensorTable::declare_at(const std::string& name, MemSpace space,
                               int64_t rows, int64_t cols, Dtype dtype,
                               uint64_t address, int64_t row_stride) {
  TensorDesc d;
  d.name = name;
  d.space = space;
  d.dtype = dtype;
  d.rows = rows;
  d.cols = cols;
  d.row_stride = row_stride;
  d.address = address;
  validate_tensor(d);
  // Keep the bump allocators past anything declared explicitly (replay), as
  // a single PE always did; a tensor in another slice also moves that
  // slice's allocator if tl.hbm_on has used it.
  uint64_t& next = space == MemSpace::kTcm ? tcm_next_ : hbm_next_;
  next = std::max(next, align_up(d.span_end()));
  if (space == MemSpace::kHbm) {
    const uint64_t slice = hbm_slice_of(d.address);
    for (auto& [s, n] : slice_next_)
      if (s == slice) n = std::max(n, align_up(d.span_end()));
  }
  return add(std::move(d));
}

void TensorTable::reserve_views() {
  if (views_) return;
  constexpr size_t kBytes = kViewCapacity * sizeof(TensorDesc);
  // 2 MiB-aligned and advised into huge pages where the kernel offers them
  // (transparent huge pages in "madvise" mode): touching the ring's 6.5 MiB
  // then takes about 130 page faults instead of about 1660.
  constexpr size_t kHugePage = size_t(2) << 20;
  void* memory = std::aligned_alloc(kHugePage, (kBytes + kHugePage - 1) / kHugePage * kHugePage);
  if (!memory) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  madvise(memory, kBytes / kHugePage * kHugePage, MADV_HUGEPAGE);  // advice: ignored if refused
#endif
  // Every page resident now (flat peak memory); the slots are raw bytes
  // until view() constructs them.
  auto* bytes = static_cast<volatile unsigned char*>(memory);
  for (size_t at = 0; at < kBytes; at += 4096) bytes[at] = 0;
  views_.get_deleter().constructed = 0;  // none yet (a moved-from table may hold a count)
  views_.reset(static_cast<TensorDesc*>(memory));
}

void TensorTable::ViewRingDelete::operator()(TensorDesc* ring) const {
  std::destroy_n(ring, constructed);
  std::free(ring);
}

Handle TensorTable::view(Handle base, int64_t row0, int64_t nrows,
                         int64_t col0, int64_t ncols, std::string_view name) {
  const TensorDesc& b = at(base);
  // Compared without forming row0 + nrows, which may overflow.
  if (row0 < 0 || col0 < 0 || nrows <= 0 || ncols <= 0 || row0 >= b.rows ||
      col0 >= b.cols || nrows > b.rows - row0 || ncols > b.cols - col0) {
    throw KernelError("view rows [" + std::to_string(row0) + ", " + end_text(row0, nrows) +
                      ") x cols [" + std::to_string(col0) + ", " + end_text(col0, ncols) +
                      ") is out of bounds of '" + name_of(b) + "' " + b.shape_string());
  }
  // b's fields are read before the slot is written (the slot may hold `b`
  // itself, the oldest live view). The slot is written field by field, with
  // no TensorDesc or string built and copied (kernels make views per tile);
  // the binding names every field, so a new one fails to compile here until
  // it is set.
  const MemSpace b_space = b.space;
  const Dtype b_dtype = b.dtype;
  const int64_t b_stride = b.row_stride;
  const uint64_t b_address =
      b.address + (uint64_t(row0) * uint64_t(b_stride) + uint64_t(col0)) * dtype_bytes(b_dtype);
  if (!views_) reserve_views();  // `b` is no view: there is none yet
  uint64_t& constructed = views_.get_deleter().constructed;
  if (next_view_ == constructed && constructed < kViewCapacity) {  // the slot's first view
    new (&views_[next_view_]) TensorDesc();
    ++constructed;
  }
  TensorDesc& d = views_[next_view_ % kViewCapacity];
  auto& [handle, slot_name, space, dtype, rows, cols, row_stride, address, view_base, view_row0, view_col0] = d;
  slot_name.assign(name);  // may throw: the first field written, and a failed assign changes nothing
  handle = kViewHandleBit | next_view_;
  space = b_space;
  dtype = b_dtype;
  rows = nrows;
  cols = ncols;
  row_stride = b_stride;
  address = b_address;
  view_base = name.empty() ? base : 0;
  view_row0 = row0;
  view_col0 = col0;
  return kViewHandleBit | next_view_++;
}

std::string TensorTable::name_of(const TensorDesc& d) const {
  if (!d.name.empty() || d.base == 0) return d.name;
  if (!contains(d.base)) return "view";
  return name_of(at(d.base)) + "[" + std::to_string(d.row0) + ":" + std::to_string(d.row0 + d.rows) +
         "," + std::to_string(d.col0) + ":" + std::to_string(d.col0 + d.cols) + "]";
}

void TensorTable::install(Handle h, TensorDesc d) {
  if (!is_table_handle(h)) {
    throw KernelError("handle " + hex(h) + " is no entry of the tensor table: [" + hex(regs::kTensorTable) + ", " +
                      hex(regs::kTensorTableEnd) + "), a multiple of " + std::to_string(regs::kTensorDescBytes) +
                      " bytes from its start");
  }
  validate_tensor(d);
  d.handle = h;
  d.base = 0, d.row0 = 0, d.col0 = 0;
  installed_[(h - regs::kTensorTable) / regs::kTensorDescBytes] = std::move(d);
}

std::string TensorTable::why_unknown(Handle h) const {
  if ((h & kViewHandleBit) && (h & ~kViewHandleBit) < next_view_) {
    return "view handle " + std::to_string(h & ~kViewHandleBit) + " is stale: " +
           std::to_string(kViewCapacity) +
           " newer views have reused its slot (make views when you use them)";
  }
  if (is_table_handle(h)) {
    return "tensor table entry " + std::to_string((h - regs::kTensorTable) / regs::kTensorDescBytes) + " (handle " +
           hex(h) + ") is empty: no tensor descriptor was written there";
  }
  if (h >= regs::kTensorTable && h < regs::kTensorTableEnd) {
    return "handle " + hex(h) + " is not at the start of a tensor table entry (a multiple of " +
           std::to_string(regs::kTensorDescBytes) + " bytes from " + hex(regs::kTensorTable) + ")";
  }
  if ((h & kDeclaredHandleBit) && !(h & kViewHandleBit)) {
    return "unknown declared tensor handle " + std::to_string(h & ~kDeclaredHandleBit);
  }
  return "handle " + hex(h) + " is outside the tensor table [" + hex(regs::kTensorTable) + ", " +
         hex(regs::kTensorTableEnd) + ") and names no declared tensor or view";
}


}  // namespace kb
