#include "models/pe/pe_dma.h"

#include "models/pe/engine_timing.h"

namespace kb {

PeDma::PeDma(sc_core::sc_module_name name, const PeConfig& cfg)
    : StageEngine(name, cfg), mem("mem") {}

sc_core::sc_time PeDma::execute(const Stage& s) {
  if (s.tcm_only) return StageEngine::execute(s);  // TCM -> TCM copy never leaves the PE
  // Loosely timed: HBM annotates its access time onto the setup time.
  sc_core::sc_time delay = clock_.cycles(cfg_.dma.setup_cycles);
  burst_.set_command(s.kind == RecordKind::kDmaWrite ? tlm::TLM_WRITE_COMMAND
                                                     : tlm::TLM_READ_COMMAND);
  burst_.set_address(0);
  burst_.set_data_ptr(nullptr);  // timing mode moves no data
  burst_.set_data_length(static_cast<unsigned>(s.bytes));
  burst_.set_streaming_width(static_cast<unsigned>(s.bytes));
  burst_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  mem->b_transport(burst_, delay);
  if (burst_.is_response_error()) {
    SC_REPORT_ERROR(name(), burst_.get_response_string().c_str());
  }
  return delay;
}

}  // namespace kb
