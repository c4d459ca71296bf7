// A test initiator for the PE's `regs` socket: a VP's CPU in
// miniature. Its thread runs `body`; accesses are b_transport from it.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "models/isa/register_map.h"

namespace kb::test {

class RegsInitiator : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<RegsInitiator> socket;

  RegsInitiator(sc_core::sc_module_name name, std::function<void(RegsInitiator&)> body)
      : sc_module(name), socket("socket"), body_(std::move(body)) {
    SC_HAS_PROCESS(RegsInitiator);
    SC_THREAD(run);
  }

  // One access, as given; returns its response status.
  tlm::tlm_response_status access(tlm::tlm_command cmd, uint64_t address, unsigned char* data, unsigned length,
                                  unsigned streaming_width = 0, unsigned char* byte_enable = nullptr,
                                  unsigned byte_enable_length = 0) {
    tlm::tlm_generic_payload p;
    p.set_command(cmd);
    p.set_address(address);
    p.set_data_ptr(data);
    p.set_data_length(length);
    p.set_streaming_width(streaming_width ? streaming_width : length);
    p.set_byte_enable_ptr(byte_enable);
    p.set_byte_enable_length(byte_enable_length);
    p.set_dmi_allowed(false);
    p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    socket->b_transport(p, delay);
    return p.get_response_status();
  }

  // A register read or write that must succeed (little-endian values).
  uint64_t read(uint64_t address, unsigned width = 4) {
    unsigned char b[8] = {};
    expect_ok(access(tlm::TLM_READ_COMMAND, address, b, width), "read", address);
    uint64_t v = 0;
    for (unsigned i = 0; i < width; ++i) v |= uint64_t(b[i]) << (8 * i);
    return v;
  }
  tlm::tlm_response_status write_status(uint64_t address, uint64_t value, unsigned width = 4) {
    unsigned char b[8] = {};
    for (unsigned i = 0; i < width; ++i) b[i] = static_cast<unsigned char>(value >> (8 * i));
    return access(tlm::TLM_WRITE_COMMAND, address, b, width);
  }
  void write(uint64_t address, uint64_t value, unsigned width = 4) {
    expect_ok(write_status(address, value, width), "write", address);
  }
  tlm::tlm_response_status write_bytes(uint64_t address, std::vector<uint8_t> bytes) {
    return access(tlm::TLM_WRITE_COMMAND, address, bytes.data(), unsigned(bytes.size()));
  }

  // Debug transport: the byte count, and the value read.
  unsigned dbg(tlm::tlm_command cmd, uint64_t address, unsigned char* data, unsigned length) {
    tlm::tlm_generic_payload p;
    p.set_command(cmd);
    p.set_address(address);
    p.set_data_ptr(data);
    p.set_data_length(length);
    p.set_streaming_width(length);
    return socket->transport_dbg(p);
  }
  uint64_t dbg_read(uint64_t address, unsigned width = 4) {
    unsigned char b[8] = {};
    if (dbg(tlm::TLM_READ_COMMAND, address, b, width) != width) {
      throw std::runtime_error("transport_dbg read failed at " + std::to_string(address));
    }
    uint64_t v = 0;
    for (unsigned i = 0; i < width; ++i) v |= uint64_t(b[i]) << (8 * i);
    return v;
  }

  static uint64_t now_ps() { return uint64_t(sc_core::sc_time_stamp().value()); }  // 1 ps resolution

 private:
  void run() { body_(*this); }
  static void expect_ok(tlm::tlm_response_status s, const char* what, uint64_t address) {
    if (s != tlm::TLM_OK_RESPONSE) {
      throw std::runtime_error(std::string(what) + " at " + std::to_string(address) + ": response " +
                               std::to_string(int(s)));
    }
  }
  std::function<void(RegsInitiator&)> body_;
};

// Records the irq line's changes: (time in ps, level).
class IrqProbe : public sc_core::sc_module {
 public:
  std::vector<std::pair<uint64_t, bool>> changes;
  IrqProbe(sc_core::sc_module_name name, const sc_core::sc_signal<bool>& line) : sc_module(name), line_(line) {
    SC_HAS_PROCESS(IrqProbe);
    SC_METHOD(sample);
    sensitive << line_.value_changed_event();
    dont_initialize();
  }

 private:
  void sample() { changes.emplace_back(uint64_t(sc_core::sc_time_stamp().value()), line_.read()); }
  const sc_core::sc_signal<bool>& line_;
};

}  // namespace kb::test
