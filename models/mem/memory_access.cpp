#include "models/mem/memory_access.h"

#include <cstring>

namespace kb {

namespace {

void copy(tlm::tlm_generic_payload& p, SparseMemory& store) {
  const uint64_t a = p.get_address();
  const unsigned n = p.get_data_length();
  unsigned char* data = p.get_data_ptr();
  const unsigned char* be = p.get_byte_enable_ptr();
  const unsigned be_len = p.get_byte_enable_length();
  if (!be) {
    if (p.is_read()) store.read(a, data, n);
    else store.write(a, data, n);
    return;
  }
  // Byte enables: only enabled lanes move; the pattern repeats (IEEE 1666
  // 14.14). Contiguous enabled lanes move together.
  unsigned i = 0;
  while (i < n) {
    if (be[i % be_len] != TLM_BYTE_ENABLED) {
      ++i;
      continue;
    }
    unsigned j = i + 1;
    while (j < n && be[j % be_len] == TLM_BYTE_ENABLED) ++j;
    if (p.is_read()) store.read(a + i, data + i, j - i);
    else store.write(a + i, data + i, j - i);
    i = j;
  }
}

}  // namespace

tlm::tlm_response_status memory_access(tlm::tlm_generic_payload& p, const MemoryRange& range,
                                       SparseMemory* store) {
  tlm::tlm_response_status status = tlm::TLM_OK_RESPONSE;
  const tlm::tlm_command cmd = p.get_command();
  if (cmd != tlm::TLM_READ_COMMAND && cmd != tlm::TLM_WRITE_COMMAND && cmd != tlm::TLM_IGNORE_COMMAND) {
    status = tlm::TLM_COMMAND_ERROR_RESPONSE;
  } else if (!range.contains(p.get_address(), p.get_data_length())) {
    status = tlm::TLM_ADDRESS_ERROR_RESPONSE;
  } else if (p.get_streaming_width() < p.get_data_length()) {
    status = tlm::TLM_BURST_ERROR_RESPONSE;
  } else if (p.get_byte_enable_ptr() && p.get_byte_enable_length() == 0) {
    status = tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE;
  } else if (store && cmd != tlm::TLM_IGNORE_COMMAND) {
    copy(p, *store);
  }
  p.set_response_status(status);
  return status;
}

unsigned memory_debug(tlm::tlm_generic_payload& p, const MemoryRange& range, SparseMemory* store) {
  const unsigned n = p.get_data_length();
  if (n == 0 || !p.get_data_ptr() || !range.contains(p.get_address(), n)) return 0;
  if (!store) return 0;  // timing mode keeps no values: nothing to transfer
  if (p.is_read()) {
    store->read(p.get_address(), p.get_data_ptr(), n);
    return n;
  }
  if (p.is_write()) {
    store->write(p.get_address(), p.get_data_ptr(), n);
    return n;
  }
  return 0;
}

uint64_t enabled_bytes(const tlm::tlm_generic_payload& p) {
  const unsigned char* be = p.get_byte_enable_ptr();
  const uint64_t n = p.get_data_length();
  const uint64_t period = p.get_byte_enable_length();
  if (!be || period == 0) return n;
  const uint64_t tail = n % period;
  return n / period * count_enabled(be, period) + count_enabled(be, tail);
}

uint64_t count_enabled(const unsigned char* be, size_t n) {
  constexpr uint64_t kLow7 = 0x7f7f7f7f7f7f7f7full;
  uint64_t count = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, be + i, 8);
    if (w == ~uint64_t(0)) {
      count += 8;
      continue;
    }
    // x has a zero byte where be has 0xff; y has 0x80 in exactly those
    // bytes (no carry crosses a byte: (b & 0x7f) + 0x7f <= 0xfe).
    const uint64_t x = ~w;
    const uint64_t y = ~(((x & kLow7) + kLow7) | x | kLow7);
    count += uint64_t(__builtin_popcountll(y));
  }
  for (; i < n; ++i) count += be[i] == TLM_BYTE_ENABLED;
  return count;
}

}  // namespace kb
