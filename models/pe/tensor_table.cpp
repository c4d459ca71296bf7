#include "models/pe/tensor_table.h"

#include <algorithm>

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
uint64_t align_up(uint64_t x) { return (x + kAlign - 1) / kAlign * kAlign; }
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
  d.handle = descs_.size() + 1;  // 0 is never a valid handle
  descs_.push_back(std::move(d));
  return descs_.back().handle;
}

Handle TensorTable::declare(const std::string& name, MemSpace space,
                            int64_t rows, int64_t cols, Dtype dtype) {
  if (rows <= 0 || cols <= 0) {
    throw KernelError("tensor '" + name + "': shape [" + std::to_string(rows) +
                      ", " + std::to_string(cols) + "] must be positive");
  }
  const uint64_t bytes = uint64_t(rows * cols) * dtype_bytes(dtype);
  uint64_t& next = space == MemSpace::kTcm ? tcm_next_ : hbm_next_;
  const uint64_t address = next;
  if (space == MemSpace::kTcm && address + bytes > kTcmBase + tcm_size_) {
    throw KernelError("tensor '" + name + "' (" + std::to_string(bytes) +
                      " bytes) does not fit in TCM: " +
                      std::to_string(tcm_used()) + " of " +
                      std::to_string(tcm_size_) +
                      " bytes used (pe.attrs.tcm.size_bytes)");
  }
  next = align_up(address + bytes);
  return declare_at(name, space, rows, cols, dtype, address, cols);
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
  // Keep the bump allocators past anything declared explicitly (replay).
  uint64_t& next = space == MemSpace::kTcm ? tcm_next_ : hbm_next_;
  if (rows > 0 && cols > 0) next = std::max(next, align_up(d.span_end()));
  return add(std::move(d));
}

Handle TensorTable::view(Handle base, int64_t row0, int64_t nrows,
                         int64_t col0, int64_t ncols, const std::string& name) {
  const TensorDesc& b = at(base);
  if (row0 < 0 || col0 < 0 || nrows <= 0 || ncols <= 0 ||
      row0 + nrows > b.rows || col0 + ncols > b.cols) {
    throw KernelError("view rows [" + std::to_string(row0) + ", " +
                      std::to_string(row0 + nrows) + ") x cols [" +
                      std::to_string(col0) + ", " +
                      std::to_string(col0 + ncols) + ") is out of bounds of '" +
                      name_of(b) + "' " + b.shape_string());
  }
  // Built before the slot is written (the slot may hold `b` itself, the
  // oldest live view), and without copying b's name string.
  const TensorDesc fields{kViewHandleBit | next_view_, {}, b.space, b.dtype, nrows, ncols,
                          b.row_stride,
                          b.address + uint64_t(row0 * b.row_stride + col0) * dtype_bytes(b.dtype),
                          name.empty() ? base : 0, row0, col0};
  std::string view_name = name;  // may throw: before any slot changes
  TensorDesc& d = views_[next_view_ % kViewCapacity];
  d = fields;
  d.name.swap(view_name);
  return kViewHandleBit | next_view_++;
}

std::string TensorTable::name_of(const TensorDesc& d) const {
  if (!d.name.empty() || d.base == 0) return d.name;
  if (!contains(d.base)) return "view";
  return name_of(at(d.base)) + "[" + std::to_string(d.row0) + ":" + std::to_string(d.row0 + d.rows) +
         "," + std::to_string(d.col0) + ":" + std::to_string(d.col0 + d.cols) + "]";
}

std::string TensorTable::why_unknown(Handle h) const {
  if ((h & kViewHandleBit) && (h & ~kViewHandleBit) < next_view_) {
    return "view handle " + std::to_string(h & ~kViewHandleBit) + " is stale: " +
           std::to_string(kViewCapacity) +
           " newer views have reused its slot (make views when you use them)";
  }
  return "unknown tensor handle " + std::to_string(h);
}


}  // namespace kb
