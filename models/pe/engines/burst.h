// One burst on an engine's `mem` socket (TLM-2.0 base protocol, nb form,
// from a method): BurstInitiator's send (models/pe/engines/burst_initiator.h).
#pragma once

#include <systemc>
#include <tlm>

namespace kb {

// Sends `p` (acquired here; the caller releases it when the burst is done).
// True when it was answered at once, TLM_COMPLETED or BEGIN_RESP on the
// return path (then ended with END_RESP): `delay` holds its end. False: the
// response comes later on the backward path.
template <class Socket>
bool send_burst(Socket& mem, tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  p.acquire();
  const tlm::tlm_sync_enum r = mem->nb_transport_fw(p, phase, delay);
  if (r == tlm::TLM_COMPLETED) return true;
  if (r == tlm::TLM_UPDATED && phase == tlm::BEGIN_RESP) {
    tlm::tlm_phase end = tlm::END_RESP;
    sc_core::sc_time zero = sc_core::SC_ZERO_TIME;
    mem->nb_transport_fw(p, end, zero);
    return true;
  }
  return false;
}

}  // namespace kb
