// PE_DMA: moves tensors between HBM and TCM (DMA_READ / DMA_WRITE) and
// within TCM (COPY). A transfer takes the DMA setup time, then one burst
// over the `mem` socket to HBM: dma_cycles() in total.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>

#include "models/pe/stage_engine.h"

namespace kb {

class PeDma : public StageEngine {
 public:
  tlm_utils::simple_initiator_socket<PeDma> mem;  // to HBM

  PeDma(sc_core::sc_module_name name, const PeConfig& cfg);

 protected:
  sc_core::sc_time execute(const Stage& s) override;

 private:
  tlm::tlm_generic_payload burst_;  // reused: one transfer at a time
};

}  // namespace kb
