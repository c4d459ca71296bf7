// The host CPU's driver for one PE, as a VP's firmware would be: it writes
// input data to DRAM, tensor descriptors into the PE's descriptor table and
// binary command descriptors into its queue, all through plain TLM writes
// (models/isa/register_map.h, models/isa/descriptor.h). PE_CPU is bypassed:
// the only cost is the driver's own, kAccessTime per access.
//
// It runs two jobs on the PE, each checked against a reference computed
// here: a 64 x 64 x 64 GEMM and one GQA decode tile (Q K^T scaled, the
// softmax_merge recipe, O / l), then reads STATUS and COMPLETED.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include <kernbench/models/isa/commands.h>
#include <kernbench/models/isa/tensor_table.h>
#include <kernbench/kernels/recipes/softmax_merge.h>

class HostDriver : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<HostDriver> regs;  // to the PE's regs
  tlm_utils::simple_initiator_socket<HostDriver> mem;   // to DRAM
  sc_core::sc_in<bool> irq;                             // the PE's irq

  explicit HostDriver(sc_core::sc_module_name name);
  bool passed() const { return passed_; }

 private:
  static constexpr uint64_t kDram = uint64_t(1) << 40;  // where the driver puts its tensors
  void run();
  bool run_gemm();
  bool run_gqa_tile();
  // One TLM access of `n` bytes; the driver spends kAccessTime plus the
  // target's annotated delay.
  void access(tlm_utils::simple_initiator_socket<HostDriver>& s, tlm::tlm_command cmd, uint64_t address,
              void* data, unsigned n);
  void write32(uint64_t offset, uint32_t v);
  uint32_t read32(uint64_t offset);
  uint64_t read64(uint64_t offset);
  // A tensor descriptor in table entry `slot`; returns its handle.
  kb::Tensor tensor(const std::string& name, kb::MemSpace space, uint64_t address, int64_t rows,
                    int64_t cols);
  void submit(const kb::Command& c);      // one binary descriptor into the queue
  void wait_drained();                    // IRQ_ENABLE drained|error, wait for irq, ack
  void put(uint64_t address, const std::vector<float>& v);
  std::vector<float> get(uint64_t address, size_t n);

  uint32_t next_slot_ = 0;
  uint32_t next_id_ = 1;
  uint64_t submitted_ = 0;
  bool passed_ = false;
};
