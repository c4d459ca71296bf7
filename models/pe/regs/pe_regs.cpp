#include "models/pe/regs/pe_regs.h"

#include <cstring>
#include <exception>

#include "models/util/hex.h"
#include "models/util/instant_calendar.h"

namespace kb {

namespace {

using namespace regs;

// The registers of register_map.h (the QUEUE window and the table aside).
struct Reg {
  uint64_t offset;
  unsigned width;
  bool readable, writable;
};
constexpr Reg kRegs[] = {
    {kStatus, 4, true, false},     {kErrorCode, 4, true, false}, {kErrorCommand, 4, true, false},
    {kCompleted, 8, true, false},  {kOccupancy, 4, true, false}, {kIrqEnable, 4, true, true},
    {kIrqStatus, 4, true, true},   {kDoorbell, 4, false, true},  {kKernels, 4, true, false},
};
constexpr uint32_t kIrqBits = kIrqDrained | kIrqError;  // undefined bits read 0

// The register whose bytes hold `offset`, or nullptr.
const Reg* find_reg(uint64_t offset) {
  for (const Reg& r : kRegs)
    if (offset >= r.offset && offset - r.offset < r.width) return &r;
  return nullptr;
}

void put_le(unsigned char* data, uint64_t v, unsigned width) {
  for (unsigned i = 0; i < width; ++i) data[i] = static_cast<unsigned char>(v >> (8 * i));
}

uint64_t get_le(const unsigned char* data, unsigned width) {
  uint64_t v = 0;
  for (unsigned i = 0; i < width; ++i) v |= uint64_t(data[i]) << (8 * i);
  return v;
}

// Byte enables, no data, then length and streaming width against `width`
// (0: any length). Sets the error response and returns false.
bool check_shape(tlm::tlm_generic_payload& p, unsigned width) {
  if (p.get_byte_enable_ptr()) {
    p.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    return false;
  }
  if (!p.get_data_ptr() || p.get_data_length() == 0) {
    p.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return false;
  }
  if ((width != 0 && p.get_data_length() != width) || p.get_streaming_width() != p.get_data_length()) {
    p.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return false;
  }
  return true;
}

}  // namespace

PeRegs::PeRegs(sc_core::sc_module_name name, const PeScheduler& scheduler)
    : sc_module(name),
      in("in"),
      queue("queue"),
      irq("irq"),
      scheduler_(scheduler),
      table_(kTensorTableEnd - kTensorTable, 0) {
  in.register_b_transport(this, &PeRegs::b_transport);
  in.register_transport_dbg(this, &PeRegs::transport_dbg);
  SC_HAS_PROCESS(PeRegs);
  SC_METHOD(drained);
  sensitive << scheduler_.drained_event();
  dont_initialize();
  SC_METHOD(drive_irq);
  sensitive << irq_changed_;
  dont_initialize();
}

uint32_t PeRegs::register_kernel(const std::string& name, Kernel kernel) {
  kernels_.emplace_back(name, std::move(kernel));
  return uint32_t(kernels_.size() - 1);
}

Status PeRegs::status() const {
  if (error_code_ != ErrorCode::kNone) return Status::kError;  // sticky
  const bool busy = scheduler_.occupancy() > 0 || (cpu_busy_ && cpu_busy_());
  return busy ? Status::kBusy : Status::kIdle;
}

void PeRegs::record_error(ErrorCode code, uint32_t command, const std::string& what) {
  if (error_code_ == ErrorCode::kNone && code != ErrorCode::kNone) {
    error_code_ = code;
    error_command_ = command & 0xFFFFFFu;  // a completion id is 24 bits
    error_message_ = what;
  }
  raise(kIrqError);
}

void PeRegs::raise(uint32_t irq_bits) {
  irq_status_ |= irq_bits;
  notify_outside(irq_changed_, sc_core::SC_ZERO_TIME);
}

void PeRegs::drained() { raise(kIrqDrained); }

void PeRegs::drive_irq() {
  if (irq.size() > 0) irq->write(irq_level());
}

void PeRegs::b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  // The state at the transaction's time (the initiator may run ahead).
  if (delay != sc_core::SC_ZERO_TIME) {
    sc_core::wait(delay);
    delay = sc_core::SC_ZERO_TIME;
  }
  const uint64_t a = p.get_address();
  if (a < kStatus) {
    queue_write(p);
  } else if (a >= kTensorTable && a < kTensorTableEnd) {
    table_access(p);
  } else {
    register_access(p);
  }
}

void PeRegs::queue_write(tlm::tlm_generic_payload& p) {
  if (!check_shape(p, 0)) return;
  if (p.is_read()) {  // QUEUE is write-only
    p.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    return;
  }
  if (!p.is_write()) {  // TLM_IGNORE_COMMAND
    p.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  // A payload of PE_REGS's own per write: several initiators may be
  // blocked on a full queue at once. The data is the writer's, valid for
  // the whole call.
  tlm::tlm_generic_payload d;
  d.set_command(tlm::TLM_WRITE_COMMAND);
  d.set_address(kQueueAddress);
  d.set_data_ptr(p.get_data_ptr());
  d.set_data_length(p.get_data_length());
  d.set_streaming_width(p.get_data_length());
  d.set_byte_enable_ptr(nullptr);
  d.set_dmi_allowed(false);
  d.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  queue->b_transport(d, delay);  // blocks while the queue is full
  p.set_response_status(d.get_response_status());
}

void PeRegs::table_access(tlm::tlm_generic_payload& p) {
  const uint64_t offset = p.get_address() - kTensorTable;
  if (offset % kTensorDescBytes != 0) {  // one whole entry per access
    p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  if (!check_shape(p, unsigned(kTensorDescBytes))) return;
  unsigned char* data = p.get_data_ptr();
  if (p.is_read()) {
    std::memcpy(data, &table_[offset], kTensorDescBytes);
    p.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  if (!p.is_write()) {
    p.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  if (!on_tensor_write_) {  // Pe wires it to the tensor table
    p.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    return;
  }
  const Handle handle = p.get_address();
  std::string error;
  try {
    error = on_tensor_write_(handle, data);
  } catch (const std::exception& e) {
    error = e.what();
    if (error.empty()) error = "refused";
  }
  if (!error.empty()) {
    record_error(ErrorCode::kBadTensor, 0, "tensor descriptor at " + hex(handle) + ": " + error);
    p.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  std::memcpy(&table_[offset], data, kTensorDescBytes);
  p.set_response_status(tlm::TLM_OK_RESPONSE);
}

bool PeRegs::read_value(uint64_t offset, uint64_t* value) const {
  switch (offset) {
    case kStatus: *value = uint32_t(status()); return true;
    case kErrorCode: *value = uint32_t(error_code_); return true;
    case kErrorCommand: *value = error_command_; return true;
    case kCompleted: *value = scheduler_.completed(); return true;
    case kOccupancy: *value = scheduler_.occupancy(); return true;
    case kIrqEnable: *value = irq_enable_; return true;
    case kIrqStatus: *value = irq_status_; return true;
    case kKernels: *value = kernels_.size(); return true;
    default: return false;
  }
}

void PeRegs::register_access(tlm::tlm_generic_payload& p) {
  const uint64_t a = p.get_address();
  const Reg* r = find_reg(a);
  if (!r || r->offset != a) {  // no register, or inside one (misaligned)
    p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  if (!check_shape(p, r->width)) return;
  unsigned char* data = p.get_data_ptr();
  if (p.is_read()) {
    uint64_t v = 0;
    if (!r->readable || !read_value(a, &v)) {
      p.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
      return;
    }
    put_le(data, v, r->width);
    p.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  if (!p.is_write()) {
    p.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  if (!r->writable) {
    p.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    return;
  }
  const uint32_t v = uint32_t(get_le(data, r->width));  // every writable register is 4 bytes
  p.set_response_status(tlm::TLM_OK_RESPONSE);
  switch (a) {
    case kIrqEnable:
      irq_enable_ = v & kIrqBits;
      notify_outside(irq_changed_, sc_core::SC_ZERO_TIME);
      break;
    case kIrqStatus:  // write 1 to clear
      irq_status_ &= ~v;
      notify_outside(irq_changed_, sc_core::SC_ZERO_TIME);
      break;
    case kDoorbell:
      if (v >= kernels_.size()) {
        record_error(ErrorCode::kUnknownKernel, 0,
                     "DOORBELL " + std::to_string(v) + ": " + std::to_string(kernels_.size()) +
                         " kernels registered");
        p.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
      } else if (!on_doorbell_) {
        p.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
      } else {
        on_doorbell_(kernels_[v].first, kernels_[v].second);
      }
      break;
    default:
      p.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
  }
}

unsigned int PeRegs::transport_dbg(tlm::tlm_generic_payload& p) {
  // Reads only, never a side effect.
  unsigned char* data = p.get_data_ptr();
  const uint64_t a = p.get_address();
  const unsigned len = p.get_data_length();
  if (!p.is_read() || !data || len == 0 || p.get_byte_enable_ptr()) return 0;
  if (a >= kTensorTable && a < kTensorTableEnd) {
    if (len > kTensorTableEnd - a) return 0;
    std::memcpy(data, &table_[a - kTensorTable], len);
    return len;
  }
  const Reg* r = find_reg(a);
  uint64_t v = 0;
  if (!r || r->offset != a || len != r->width || !r->readable || !read_value(a, &v)) return 0;
  put_le(data, v, r->width);
  return len;
}

}  // namespace kb
