#include "models/pe/engines/data_port.h"

#include <string>

#include "models/pe/engines/dtype_codec.h"
#include "models/util/hex.h"

namespace kb {

namespace {
// splitmix64: a small, portable, well-mixed generator.
uint64_t next(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

void DataPort::transfer(tlm::tlm_command cmd, uint64_t address, unsigned char* data, uint64_t n) {
  if (n == 0) return;
  if (n > UINT32_MAX) throw KernelError("data access of " + std::to_string(n) + " bytes in one transaction");
  tlm::tlm_generic_payload& p = payload_;
  p.set_command(cmd);
  p.set_address(address);
  p.set_data_ptr(data);
  p.set_data_length(unsigned(n));
  p.set_streaming_width(unsigned(n));
  p.set_byte_enable_ptr(nullptr);
  p.set_byte_enable_length(0);
  p.set_dmi_allowed(false);
  p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  const char* what = cmd == tlm::TLM_READ_COMMAND ? "read" : "write";
  if (debug_) {
    if (socket_->transport_dbg(p) != n) {
      throw KernelError(std::string("host ") + what + " of " + std::to_string(n) + " bytes at " +
                        hex(address) + " failed (debug transport)");
    }
    return;
  }
  if (!tcm_.contains(address, n)) {  // HBM is PE_DMA's alone (header)
    throw KernelError(std::string("data mode: an engine's ") + what + " of " + std::to_string(n) +
                      " bytes at " + hex(address) + " is outside TCM");
  }
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  p.acquire();
  const tlm::tlm_sync_enum s = socket_->nb_transport_fw(p, phase, delay);
  p.release();
  if (s != tlm::TLM_COMPLETED || !p.is_response_ok()) {
    throw KernelError(std::string("data mode: TCM ") + what + " of " + std::to_string(n) +
                      " bytes at " + hex(address) + " failed: " +
                      (s != tlm::TLM_COMPLETED ? "not completed at once" : p.get_response_string()));
  }
}

void DataPort::read(uint64_t address, void* out, uint64_t n) {
  transfer(tlm::TLM_READ_COMMAND, address, static_cast<unsigned char*>(out), n);
}

void DataPort::write(uint64_t address, const void* in, uint64_t n) {
  // The target only reads a write's data; the payload's pointer is not const.
  transfer(tlm::TLM_WRITE_COMMAND, address, static_cast<unsigned char*>(const_cast<void*>(in)), n);
}

std::vector<float> DataPort::read_block(const TensorDesc& t, int64_t r0, int64_t nr, int64_t c0,
                                        int64_t nc) {
  const uint64_t el = dtype_bytes(t.dtype);
  std::vector<float> v;
  v.reserve(size_t(nr * nc));
  row_.resize(size_t(uint64_t(nc) * el));
  for (int64_t r = r0; r < r0 + nr; ++r) {
    read(element_address(t, r, c0), row_.data(), row_.size());
    for (int64_t c = 0; c < nc; ++c) v.push_back(decode_element(&row_[size_t(uint64_t(c) * el)], t.dtype));
  }
  return v;
}

void DataPort::write_block(const TensorDesc& t, int64_t r0, int64_t nr, int64_t c0, int64_t nc,
                           const std::vector<float>& values) {
  const uint64_t el = dtype_bytes(t.dtype);
  row_.resize(size_t(uint64_t(nc) * el));
  size_t i = 0;
  for (int64_t r = r0; r < r0 + nr; ++r) {
    for (int64_t c = 0; c < nc; ++c) encode_element(values[i++], t.dtype, &row_[size_t(uint64_t(c) * el)]);
    write(element_address(t, r, c0), row_.data(), row_.size());
  }
}

void host_fill_random(DataPort& port, const TensorDesc& t, uint64_t seed, double lo, double hi) {
  uint64_t state = seed;
  std::vector<float> row(size_t(t.cols));
  for (int64_t r = 0; r < t.rows; ++r) {  // a row at a time: bounded memory
    for (int64_t c = 0; c < t.cols; ++c) {
      const double u = double(next(state) >> 11) * (1.0 / 9007199254740992.0);  // [0, 1)
      row[size_t(c)] = float(lo + (hi - lo) * u);
    }
    port.write_block(t, r, 1, 0, t.cols, row);
  }
}

void host_write(DataPort& port, const TensorDesc& t, const std::vector<float>& values) {
  if (values.size() != size_t(t.elements())) {
    throw KernelError("host write of " + std::to_string(values.size()) + " values to '" + t.name +
                      "' " + t.shape_string() + " (" + std::to_string(t.elements()) + " elements)");
  }
  port.write_block(t, 0, t.rows, 0, t.cols, values);
}

std::vector<float> host_read(DataPort& port, const TensorDesc& t) {
  return port.read_block(t, 0, t.rows, 0, t.cols);
}

}  // namespace kb
