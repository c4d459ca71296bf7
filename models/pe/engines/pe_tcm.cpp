#include "models/pe/engines/pe_tcm.h"

#include "models/mem/address_map.h"
#include "models/pe/engines/dtype_codec.h"
#include "models/pe/engines/engine_timing.h"

namespace kb {

uint64_t tcm_cycles(const PeConfig& cfg, uint64_t bytes) {
  return cycles_add(cfg.tcm.latency_cycles, ceil_div_real(bytes, cfg.tcm.bytes_per_cycle), "TCM access");
}

void PeTcm::compute(const Stage& s, CommandData& d, DataContext& ctx) {
  if (s.kind != RecordKind::kStore || s.op_index < 0) return;  // FETCH moves no values
  const TypedOp* composite_op = d.op(s.op_index);  // only composites have STORE stages
  if (!composite_op) return;
  const TypedOp& op = *composite_op;
  auto it = d.accumulators.find({s.m0, s.n0});
  const TensorDesc& out = ctx.table.at(op.out);
  if (s.role == 'w') {  // the output lives in HBM: staged for the DMA_WRITE
    const uint64_t el = dtype_bytes(out.dtype);
    std::vector<uint8_t>& bytes = d.staging[{'w', s.tile}];
    bytes.resize(it->second.size() * el);
    for (size_t i = 0; i < it->second.size(); ++i) encode_element(it->second[i], out.dtype, &bytes[i * el]);
  } else {
    ctx.port.write_block(out, s.m0, s.m, s.n0, s.n, it->second);
  }
  d.accumulators.erase(it);
}

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
