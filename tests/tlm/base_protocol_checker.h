// A TLM-2.0 base-protocol checker for tests, written from
// the rules of IEEE 1666-2011 (clause numbers cited per check). It sits
// between one initiator socket and one target socket, forwards every call
// both ways unchanged, and records each broken rule in a process-wide list
// instead of reporting through SystemC (the test main turns SystemC reports
// into failures; a test asserts on the list instead).
//
// It never dereferences the payload's data or byte-enable arrays, so a bad
// payload (a null or dangling data pointer) cannot crash it; what the target
// does with such a payload is unchanged.
#pragma once

#include <systemc>
#include <tlm>

#include <cstdint>
#include <cstdio>
#include <string>
#include <unordered_map>
#include <vector>

namespace kb::test {

class BaseProtocolChecker : public sc_core::sc_module,
                            public tlm::tlm_fw_transport_if<>,
                            public tlm::tlm_bw_transport_if<> {
 public:
  tlm::tlm_target_socket<32> in;      // bind the initiator's socket to this
  tlm::tlm_initiator_socket<32> out;  // bind this to the target's socket

  explicit BaseProtocolChecker(sc_core::sc_module_name name) : sc_module(name), in("in"), out("out") {
    in.bind(*this);
    out.bind(*this);
  }

  // Every violation seen by any checker in this process:
  // "<checker name>: <rule>: <detail>". The text of the first kMaxKept is
  // kept; violation_count() counts them all.
  static constexpr size_t kMaxKept = 100000;
  static const std::vector<std::string>& violations() { return log(); }
  static size_t violation_count() { return count(); }

  // b_transport calls + nb_transport BEGIN_REQs + transport_dbg calls seen.
  uint64_t transactions() const { return transactions_; }

  // The target must not modify the address, but an interconnect may, on the
  // forward path, and need not restore it (14.10, 14.7). Call this for a
  // checker whose downstream side is an address-translating interconnect.
  void allow_address_translation(bool allow = true) { address_may_change_ = allow; }

  // ---- forward path (initiator -> target) ----

  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) override {
    ++transactions_;
    // 11.1.1.4 b): b_transport may call wait, so it is called from a thread
    // process only. Outside simulation the "current" handle is the last
    // process created, so only a running method process is judged.
    if (sc_core::sc_is_running() &&
        sc_core::sc_get_current_process_handle().proc_kind() == sc_core::SC_METHOD_PROC_) {
      violation("11.1.1.4 b) b_transport from a method process",
                "called from " + std::string(sc_core::sc_get_current_process_handle().name()) +
                    ", " + describe(trans));
    }
    // 14.5 t): a payload with a memory manager is passed with its
    // reference count above zero.
    if (trans.has_mm() && trans.get_ref_count() == 0) {
      violation("14.5 t) reference count", "0 on a payload with a memory manager passed to b_transport, " +
                                               describe(trans));
    }
    // 15.2.10 c): one payload is not in a b_transport and an nb_transport
    // sequence at once.
    if (nb_.count(&trans) != 0) {
      violation("15.2.10 c) b_transport during an nb_transport sequence", describe(trans));
    }
    check_request_attributes(trans, "b_transport");
    const Attributes before = Attributes::of(trans);
    ++b_active_[&trans];

    out->b_transport(trans, delay);

    if (--b_active_[&trans] == 0) b_active_.erase(&trans);
    // 14.17: the target sets the response status before b_transport returns.
    if (trans.get_response_status() == tlm::TLM_INCOMPLETE_RESPONSE) {
      violation("14.17 response status", "still TLM_INCOMPLETE_RESPONSE when b_transport returned, " +
                                             describe(trans));
    }
    check_unchanged(before, trans, "b_transport");
  }

  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) override {
    const tlm::tlm_phase start = phase;
    const bool base_phase = is_base_phase(start);
    check_nb_payload(trans, "nb_transport_fw");
    if (start == tlm::BEGIN_REQ) {
      ++transactions_;
      begin_request(trans, delay);
    } else if (start == tlm::END_RESP) {
      end_response(trans, delay, "nb_transport_fw");
    } else if (base_phase) {
      // 15.2.3 c): END_REQ and BEGIN_RESP travel target -> initiator only;
      // UNINITIALIZED_PHASE is never sent.
      violation("15.2.3 c) phase on the wrong path", phase_name(start) + " sent on nb_transport_fw, " +
                                                         describe(trans));
    }
    // An ignorable (extended) phase (15.2.5) changes no state.

    const tlm::tlm_sync_enum status = out->nb_transport_fw(trans, phase, delay);
    if (released(trans)) {
      forget(trans);
      return status;
    }

    // TLM_ACCEPTED: the phase and delay arguments carry nothing back
    // (the tlm_sync_enum rules of 11.1.2), so they are not read.
    if (status == tlm::TLM_UPDATED && is_base_phase(phase)) {
      if (phase == tlm::END_REQ || phase == tlm::BEGIN_RESP) {
        target_phase(trans, phase, delay, "the return from nb_transport_fw");
      } else {
        // 15.2.4: BEGIN_REQ / END_RESP are the initiator's phases.
        violation("15.2.4 phase sequence", phase_name(phase) + " returned by the target from nb_transport_fw, " +
                                               describe(trans));
      }
    } else if (status == tlm::TLM_COMPLETED) {
      complete(trans, /*target_completed=*/true, "nb_transport_fw");
    }
    check_nb_unchanged(trans, "nb_transport_fw");
    return status;
  }

  unsigned int transport_dbg(tlm::tlm_generic_payload& trans) override {
    ++transactions_;
    check_command(trans, "transport_dbg");
    // 11.3.4 l): a debug transaction with data has a data pointer.
    if (trans.get_data_length() > 0 && trans.get_data_ptr() == nullptr) {
      violation("11.3.4 l) debug data pointer", "null with data length " +
                                                    std::to_string(trans.get_data_length()) + ", " +
                                                    describe(trans));
    }
    const unsigned int length = trans.get_data_length();
    const unsigned int count = out->transport_dbg(trans);
    // 11.3.4 s): the count returned is at most the data length.
    if (count > length) {
      violation("11.3.4 s) debug byte count", std::to_string(count) + " bytes returned for data length " +
                                                  std::to_string(length) + ", " + describe(trans));
    }
    return count;
  }

  bool get_direct_mem_ptr(tlm::tlm_generic_payload& trans, tlm::tlm_dmi& dmi) override {
    // 11.2.5: the request is a read or a write.
    if (trans.get_command() != tlm::TLM_READ_COMMAND && trans.get_command() != tlm::TLM_WRITE_COMMAND) {
      violation("11.2.5 DMI command", "neither READ nor WRITE, " + describe(trans));
    }
    // 11.2.5 a), f), u), ac): the initiator passes an initialised descriptor
    // (tlm_dmi::init()): no pointer, no access, the whole address space,
    // zero latencies.
    if (dmi.get_dmi_ptr() != nullptr || !dmi.is_none_allowed() || dmi.get_start_address() != 0 ||
        dmi.get_end_address() != ~sc_dt::uint64(0) || dmi.get_read_latency() != sc_core::SC_ZERO_TIME ||
        dmi.get_write_latency() != sc_core::SC_ZERO_TIME) {
      violation("11.2.5 DMI descriptor", "not initialised (tlm_dmi::init()) before get_direct_mem_ptr, " +
                                             describe(trans));
    }
    const sc_dt::uint64 address = trans.get_address();
    const bool granted = out->get_direct_mem_ptr(trans, dmi);
    if (granted) {
      // 11.2.5: a granted region contains the address asked for, gives
      // read and/or write access and points at memory.
      if (address < dmi.get_start_address() || address > dmi.get_end_address()) {
        violation("11.2.5 DMI region", "granted [" + hex(dmi.get_start_address()) + ", " +
                                           hex(dmi.get_end_address()) + "] does not contain address " +
                                           hex(address));
      }
      if (!dmi.is_read_allowed() && !dmi.is_write_allowed()) {
        violation("11.2.5 DMI access", "granted with neither read nor write access, address " + hex(address));
      }
      if (dmi.get_dmi_ptr() == nullptr) {
        violation("11.2.5 DMI pointer", "granted with a null DMI pointer, address " + hex(address));
      }
    }
    return granted;
  }

  // ---- backward path (target -> initiator) ----

  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) override {
    const tlm::tlm_phase start = phase;
    check_nb_payload(trans, "nb_transport_bw");
    if (start == tlm::END_REQ || start == tlm::BEGIN_RESP) {
      target_phase(trans, start, delay, "nb_transport_bw");
    } else if (is_base_phase(start)) {
      violation("15.2.3 c) phase on the wrong path", phase_name(start) + " sent on nb_transport_bw, " +
                                                         describe(trans));
    }

    const tlm::tlm_sync_enum status = in->nb_transport_bw(trans, phase, delay);
    if (released(trans)) {
      forget(trans);
      return status;
    }

    if (status == tlm::TLM_UPDATED && is_base_phase(phase)) {
      if (phase == tlm::END_RESP) {
        end_response(trans, delay, "the return from nb_transport_bw");
      } else {
        violation("15.2.4 phase sequence", phase_name(phase) + " returned by the initiator from nb_transport_bw, " +
                                               describe(trans));
      }
    } else if (status == tlm::TLM_COMPLETED) {
      complete(trans, /*target_completed=*/false, "nb_transport_bw");
    }
    check_nb_unchanged(trans, "nb_transport_bw");
    return status;
  }

  void invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end) override {
    in->invalidate_direct_mem_ptr(start, end);
  }

 private:
  // The attributes nobody but the initiator sets (14.7; the address also
  // an interconnect on the forward path, 14.10).
  struct Attributes {
    tlm::tlm_command command;
    sc_dt::uint64 address;
    unsigned char* data;
    unsigned int length;
    unsigned char* byte_enable;
    unsigned int byte_enable_length;
    unsigned int streaming_width;
    static Attributes of(const tlm::tlm_generic_payload& t) {
      return {t.get_command(), t.get_address(), t.get_data_ptr(), t.get_data_length(),
              t.get_byte_enable_ptr(), t.get_byte_enable_length(), t.get_streaming_width()};
    }
  };

  // Where an nb_transport transaction is on this hop (15.2.4).
  enum class Stage { kRequest, kRequestEnded, kResponse };
  struct NbState {
    Stage stage;
    Attributes attributes;
    sc_core::sc_time time;  // sc_time_stamp() + delay of the last call (15.2.7 c)
  };

  static std::vector<std::string>& log() {
    static std::vector<std::string> v;
    return v;
  }

  static size_t& count() {
    static size_t n = 0;
    return n;
  }

  void violation(const std::string& rule, const std::string& detail) const {
    ++count();
    if (log().size() < kMaxKept) log().push_back(std::string(name()) + ": " + rule + ": " + detail);
  }

  static bool is_base_phase(const tlm::tlm_phase& p) { return static_cast<unsigned int>(p) <= tlm::END_RESP; }

  static std::string phase_name(const tlm::tlm_phase& p) { return p.get_name(); }

  static std::string hex(sc_dt::uint64 v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
  }

  static std::string describe(const tlm::tlm_generic_payload& t) {
    const char* cmd = t.get_command() == tlm::TLM_READ_COMMAND    ? "READ"
                      : t.get_command() == tlm::TLM_WRITE_COMMAND ? "WRITE"
                      : t.get_command() == tlm::TLM_IGNORE_COMMAND ? "IGNORE"
                                                                   : "command?";
    return std::string(cmd) + " at " + hex(t.get_address()) + ", length " + std::to_string(t.get_data_length()) +
           " @ " + sc_core::sc_time_stamp().to_string();
  }

  void check_command(const tlm::tlm_generic_payload& t, const char* where) const {
    // 14.9: the command is one of the three.
    const tlm::tlm_command c = t.get_command();
    if (c != tlm::TLM_READ_COMMAND && c != tlm::TLM_WRITE_COMMAND && c != tlm::TLM_IGNORE_COMMAND) {
      violation("14.9 command", "value " + std::to_string(static_cast<int>(c)) + " in " + where);
    }
  }

  // The payload as an initiator must set it up for b_transport or
  // BEGIN_REQ (14.7 default values and the attribute clauses).
  void check_request_attributes(const tlm::tlm_generic_payload& t, const char* where) const {
    check_command(t, where);
    const std::string at = std::string(" in ") + where + ", " + describe(t);
    // 14.11 / 14.12: read and write commands carry data (an IGNORE command
    // transfers nothing, so its data attributes are not judged).
    if (t.get_command() != tlm::TLM_IGNORE_COMMAND) {
      if (t.get_data_ptr() == nullptr) violation("14.11 data pointer", "null" + at);
      if (t.get_data_length() == 0) violation("14.12 data length", "0" + at);
    }
    // 14.14: a byte-enable array has a length.
    if (t.get_byte_enable_ptr() != nullptr && t.get_byte_enable_length() == 0) {
      violation("14.14 byte enable length", "0 with a non-null byte-enable pointer" + at);
    }
    // 14.15: the streaming width is non-zero.
    if (t.get_streaming_width() == 0) violation("14.15 streaming width", "0" + at);
    // 14.16: the DMI hint starts false; only the target sets it.
    if (t.is_dmi_allowed()) violation("14.16 DMI allowed", "true on entry" + at);
    // 14.17: the response status starts TLM_INCOMPLETE_RESPONSE.
    if (t.get_response_status() != tlm::TLM_INCOMPLETE_RESPONSE) {
      violation("14.17 response status", std::string(t.get_response_string()) + " on entry" + at);
    }
    // 14.8: the generic payload option is only for DMI and debug.
    if (t.get_gp_option() != tlm::TLM_MIN_PAYLOAD) violation("14.8 gp option", "not TLM_MIN_PAYLOAD" + at);
  }

  // 14.7: the target does not modify these attributes, and nobody does
  // during the transaction's lifetime.
  void check_unchanged(const Attributes& a, const tlm::tlm_generic_payload& t, const char* where) const {
    const Attributes b = Attributes::of(t);
    const std::string at = std::string(" during ") + where + ", " + describe(t);
    auto check = [&](const char* what, uint64_t from, uint64_t to) {
      if (from != to) {
        violation(std::string("14.7 ") + what + " modified", "from " + hex(from) + " to " + hex(to) + at);
      }
    };
    auto ptr = [](const unsigned char* p) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)); };
    check("command", static_cast<uint64_t>(a.command), static_cast<uint64_t>(b.command));
    if (!address_may_change_) check("address", a.address, b.address);
    check("data pointer", ptr(a.data), ptr(b.data));
    check("data length", a.length, b.length);
    check("byte-enable pointer", ptr(a.byte_enable), ptr(b.byte_enable));
    check("byte-enable length", a.byte_enable_length, b.byte_enable_length);
    check("streaming width", a.streaming_width, b.streaming_width);
  }

  void check_nb_unchanged(const tlm::tlm_generic_payload& t, const char* where) {
    const auto it = nb_.find(&t);
    if (it == nb_.end()) return;
    check_unchanged(it->second.attributes, t, where);
    it->second.attributes = Attributes::of(t);  // report a change once
  }

  void check_nb_payload(const tlm::tlm_generic_payload& t, const char* where) const {
    // 14.5 i), t): nb_transport payloads have a memory manager and are held
    // (reference count above zero).
    if (!t.has_mm()) {
      violation("14.5 i) memory manager", std::string("none on a payload passed to ") + where + ", " + describe(t));
    } else if (t.get_ref_count() == 0) {
      violation("14.5 t) reference count", std::string("0 on a payload passed to ") + where + ", " + describe(t));
    }
  }

  // 15.2.7 c): sc_time_stamp() + delay does not decrease along a transaction.
  void check_time(NbState& s, const sc_core::sc_time& delay, const std::string& where) const {
    const sc_core::sc_time t = sc_core::sc_time_stamp() + delay;
    if (t < s.time) {
      violation("15.2.7 c) timing annotation", "time + delay " + t.to_string() + " in " + where +
                                                   " is before " + s.time.to_string() + " of the previous phase");
    }
    s.time = t;
  }

  void begin_request(tlm::tlm_generic_payload& t, const sc_core::sc_time& delay) {
    check_request_attributes(t, "nb_transport_fw BEGIN_REQ");
    // 15.2.4 / 14.5: a payload starts a new transaction only after its
    // previous one completed.
    if (nb_.count(&t) != 0) {
      violation("15.2.4 phase sequence", "BEGIN_REQ on a payload whose transaction has not completed, " +
                                             describe(t));
    }
    // 15.2.10 c): not while the same payload is in a b_transport call.
    if (b_active_.count(&t) != 0) {
      violation("15.2.10 c) nb_transport during b_transport", "BEGIN_REQ, " + describe(t));
    }
    // 15.2.6 e): no BEGIN_REQ before END_REQ (or BEGIN_RESP, or
    // TLM_COMPLETED) of the previous request on this hop.
    if (request_ != nullptr) {
      violation("15.2.6 e) request exclusion", "BEGIN_REQ while the request at " + hex(request_->get_address()) +
                                                   " has not ended, " + describe(t));
    }
    request_ = &t;
    nb_[&t] = NbState{Stage::kRequest, Attributes::of(t), sc_core::sc_time_stamp() + delay};
  }

  // END_REQ or BEGIN_RESP, sent by the target (on the backward path or as
  // the return from nb_transport_fw).
  void target_phase(const tlm::tlm_generic_payload& t, const tlm::tlm_phase& phase, const sc_core::sc_time& delay,
                    const std::string& where) {
    const auto it = nb_.find(&t);
    const bool is_resp = phase == tlm::BEGIN_RESP;
    // 15.2.4: END_REQ follows BEGIN_REQ; BEGIN_RESP follows BEGIN_REQ or
    // END_REQ, of a transaction in progress.
    const bool in_order = it != nb_.end() && (it->second.stage == Stage::kRequest ||
                                              (is_resp && it->second.stage == Stage::kRequestEnded));
    if (!in_order) {
      violation("15.2.4 phase sequence", phase_name(phase) + " in " + where +
                                             (it == nb_.end() ? " with no request in progress, "
                                                              : " out of order, ") +
                                             describe(t));
    }
    if (request_ == &t) request_ = nullptr;  // BEGIN_RESP implies END_REQ (15.2.6 c)
    if (is_resp) {
      // 15.2.6 f): one response in progress on this hop.
      if (response_ != nullptr && response_ != &t) {
        violation("15.2.6 f) response exclusion", "BEGIN_RESP while the response at " + hex(response_->get_address()) +
                                                      " has not ended, " + describe(t));
      }
      response_ = &t;
      check_response_status(t, "BEGIN_RESP in " + where);
    }
    if (it == nb_.end()) return;
    check_time(it->second, delay, where);
    if (in_order) it->second.stage = is_resp ? Stage::kResponse : Stage::kRequestEnded;
  }

  // END_RESP, sent by the initiator: the transaction completes.
  void end_response(const tlm::tlm_generic_payload& t, const sc_core::sc_time& delay, const std::string& where) {
    const auto it = nb_.find(&t);
    if (it == nb_.end() || it->second.stage != Stage::kResponse) {
      violation("15.2.4 phase sequence", "END_RESP in " + where +
                                             (it == nb_.end() ? " with no transaction in progress, "
                                                              : " before BEGIN_RESP, ") +
                                             describe(t));
    }
    if (it != nb_.end()) {
      check_time(it->second, delay, where);
      check_unchanged(it->second.attributes, t, where.c_str());
      nb_.erase(it);
    }
    if (response_ == &t) response_ = nullptr;
    if (request_ == &t) request_ = nullptr;
  }

  // TLM_COMPLETED returned: the transaction ends at whatever phase it was.
  void complete(const tlm::tlm_generic_payload& t, bool target_completed, const char* where) {
    const auto it = nb_.find(&t);
    if (it == nb_.end()) {
      // Completed by END_RESP already (the target may answer it with
      // TLM_COMPLETED) or never started.
      if (response_ == &t) response_ = nullptr;
      return;
    }
    // 14.17: a target that completes a request it has not yet answered
    // sets the response status.
    if (target_completed && it->second.stage != Stage::kResponse) {
      check_response_status(t, std::string("TLM_COMPLETED returned from ") + where);
    }
    check_unchanged(it->second.attributes, t, where);
    nb_.erase(it);
    if (request_ == &t) request_ = nullptr;
    if (response_ == &t) response_ = nullptr;
  }

  // The last reference was released during the call (the initiator may
  // release when it completes a transaction in nb_transport_bw): the
  // transaction is over and the object back with its memory manager, so its
  // attributes say nothing more.
  static bool released(const tlm::tlm_generic_payload& t) { return t.has_mm() && t.get_ref_count() <= 0; }

  void forget(const tlm::tlm_generic_payload& t) {
    nb_.erase(&t);
    if (request_ == &t) request_ = nullptr;
    if (response_ == &t) response_ = nullptr;
  }

  void check_response_status(const tlm::tlm_generic_payload& t, const std::string& where) const {
    if (t.get_response_status() == tlm::TLM_INCOMPLETE_RESPONSE) {
      violation("14.17 response status", "TLM_INCOMPLETE_RESPONSE at " + where + ", " + describe(t));
    }
  }

  uint64_t transactions_ = 0;
  bool address_may_change_ = false;
  std::unordered_map<const tlm::tlm_generic_payload*, NbState> nb_;  // nb transactions in progress
  std::unordered_map<const tlm::tlm_generic_payload*, int> b_active_;  // payloads inside b_transport
  const tlm::tlm_generic_payload* request_ = nullptr;   // BEGIN_REQ not yet ended (15.2.6 e)
  const tlm::tlm_generic_payload* response_ = nullptr;  // BEGIN_RESP not yet ended (15.2.6 f)
};

// Binds init -> a new checker -> target. The checker is a child of the module
// under construction (or top level). Checkers live as long as the process,
// like the rest of an elaborated SystemC hierarchy.
// `target` is any 32-bit base-protocol target socket, whatever its binding
// policy (kb::Pe's regs may stay unbound).
inline BaseProtocolChecker& bind_checked(
    tlm::tlm_initiator_socket<32>& init,
    tlm::tlm_base_target_socket_b<32, tlm::tlm_fw_transport_if<>, tlm::tlm_bw_transport_if<>>& target,
    const char* name) {
  static std::vector<BaseProtocolChecker*> all;  // reachable: not a leak
  all.push_back(new BaseProtocolChecker(name));
  BaseProtocolChecker& c = *all.back();
  init.bind(c.in);
  c.out.bind(target);
  return c;
}

}  // namespace kb::test
