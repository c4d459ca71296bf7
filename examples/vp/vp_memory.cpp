#include "vp_memory.h"

VpMemory::VpMemory(sc_core::sc_module_name name, sc_core::sc_time latency)
    : sc_module(name), in("in"), latency_(latency) {
  in.register_b_transport(this, &VpMemory::b_transport);
  in.register_nb_transport_fw(this, &VpMemory::nb_transport_fw);
  in.register_transport_dbg(this, &VpMemory::transport_dbg);
}

uint8_t* VpMemory::byte(uint64_t address) {
  auto [it, fresh] = pages_.try_emplace(address / kPage);
  if (fresh) it->second.fill(0);
  return &it->second[address % kPage];
}

bool VpMemory::access(tlm::tlm_generic_payload& p) {
  const uint64_t n = p.get_data_length();
  if (!p.get_data_ptr() || p.get_streaming_width() < n) {
    p.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return false;
  }
  if (!p.is_read() && !p.is_write()) {
    p.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    return false;
  }
  const unsigned char* be = p.get_byte_enable_ptr();
  const uint64_t be_len = p.get_byte_enable_length();
  for (uint64_t i = 0; i < n; ++i) {
    if (be && be_len && be[i % be_len] != TLM_BYTE_ENABLED) continue;
    uint8_t* b = byte(p.get_address() + i);
    if (p.is_read()) p.get_data_ptr()[i] = *b;
    else *b = p.get_data_ptr()[i];
  }
  p.set_response_status(tlm::TLM_OK_RESPONSE);
  return true;
}

void VpMemory::b_transport(int, tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  if (access(p)) delay += latency_;
}

tlm::tlm_sync_enum VpMemory::nb_transport_fw(int, tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                             sc_core::sc_time& delay) {
  if (phase != tlm::BEGIN_REQ) {  // every request completes at once: no other phase reaches here
    p.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return tlm::TLM_COMPLETED;
  }
  if (access(p)) delay += latency_;
  return tlm::TLM_COMPLETED;
}

unsigned VpMemory::transport_dbg(int, tlm::tlm_generic_payload& p) {
  return access(p) ? p.get_data_length() : 0;
}
