// A generic payload a module owns and reuses. The base protocol wants a
// payload sent through nb_transport to have a memory manager (IEEE 1666
// 14.5); this one is its own and frees nothing, so acquire()/release()
// count references and the module keeps the storage.
#pragma once

#include <tlm>

namespace kb {

class ModulePayload : public tlm::tlm_generic_payload, private tlm::tlm_mm_interface {
 public:
  ModulePayload() : tlm::tlm_generic_payload(this) {}
  ModulePayload(const ModulePayload&) = delete;
  ModulePayload& operator=(const ModulePayload&) = delete;

 private:
  void free(tlm::tlm_generic_payload*) override {}
};

}  // namespace kb
