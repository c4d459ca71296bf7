#include "models/pe/pe_tcm.h"

#include "models/mem/address_map.h"

namespace kb {

PeTcm::PeTcm(sc_core::sc_module_name name, const PeConfig& cfg)
    : StageEngine(name, cfg),
      sram("sram"),
      range_{kTcmBase, kTcmBase + cfg.tcm.size_bytes},
      storage_(cfg.data_mode ? &store_ : nullptr) {
  sram.register_b_transport(this, &PeTcm::b_transport);
  sram.register_nb_transport_fw(this, &PeTcm::nb_transport_fw);
  sram.register_transport_dbg(this, &PeTcm::transport_dbg);
}

void PeTcm::b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  (void)delay;
  memory_access(p, range_, storage_);
}

tlm::tlm_sync_enum PeTcm::nb_transport_fw(tlm::tlm_generic_payload& p, tlm::tlm_phase& phase,
                                          sc_core::sc_time& delay) {
  (void)delay;
  if (phase != tlm::BEGIN_REQ) {
    SC_REPORT_ERROR(name(), "nb_transport_fw: phase other than BEGIN_REQ");
    return tlm::TLM_COMPLETED;
  }
  memory_access(p, range_, storage_);
  return tlm::TLM_COMPLETED;
}

unsigned PeTcm::transport_dbg(tlm::tlm_generic_payload& p) { return memory_debug(p, range_, storage_); }

}  // namespace kb
