// The base-protocol checker of tests/tlm: compliant LT and
// nb traffic passes it with no violation and reaches the target unchanged;
// each class of violation is caught, and only that one. Every test
// simulates in a forked child (SystemC elaborates once per process) and
// returns the checker's findings as JSON.
#include "tests/tlm/base_protocol_checker.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tb/run/runner.h"

namespace kb::test {
namespace {

using nlohmann::json;
using sc_core::SC_NS;
using sc_core::sc_time;
using testing::HasSubstr;
using tlm::tlm_generic_payload;

constexpr unsigned int kMemSize = 256;

// Payloads for nb_transport: reference-counted, recycled on release.
class Pool : public tlm::tlm_mm_interface {
 public:
  tlm_generic_payload* allocate() {
    if (free_.empty()) {
      all_.push_back(std::make_unique<tlm_generic_payload>(this));
      free_.push_back(all_.back().get());
    }
    tlm_generic_payload* p = free_.back();
    free_.pop_back();
    p->acquire();
    return p;
  }
  void free(tlm_generic_payload* p) override {
    p->reset();
    free_.push_back(p);
  }

 private:
  std::vector<std::unique_ptr<tlm_generic_payload>> all_;
  std::vector<tlm_generic_payload*> free_;
};

// A payload as a compliant initiator sets it up (IEEE 1666-2011 14.7).
void setup(tlm_generic_payload& t, tlm::tlm_command cmd, uint64_t address, unsigned char* data,
           unsigned int length) {
  t.set_command(cmd);
  t.set_address(address);
  t.set_data_ptr(data);
  t.set_data_length(length);
  t.set_streaming_width(length);
  t.set_byte_enable_ptr(nullptr);
  t.set_byte_enable_length(0);
  t.set_dmi_allowed(false);
  t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
}

// A memory target in the style of the Accellera LT examples, with knobs
// that make it break one rule at a time.
struct Target : sc_core::sc_module {
  enum class Fault { kNone, kLeaveIncomplete, kChangeAddress, kDebugOvercount, kDmiElsewhere };
  enum class NbMode { kCompleted, kFourPhase, kSilent };

  tlm_utils::simple_target_socket<Target> socket;
  unsigned char mem[kMemSize] = {};
  Fault fault = Fault::kNone;
  NbMode nb_mode = NbMode::kCompleted;
  std::function<void(Target&)> script;  // run in a thread at time 0
  Pool pool;

  SC_HAS_PROCESS(Target);
  // b_only: no nb_transport_fw of its own; the socket converts nb_transport
  // calls to b_transport.
  Target(sc_core::sc_module_name n, bool b_only) : sc_module(n), socket("socket") {
    socket.register_b_transport(this, &Target::b_transport);
    if (!b_only) socket.register_nb_transport_fw(this, &Target::nb_transport_fw);
    socket.register_transport_dbg(this, &Target::transport_dbg);
    socket.register_get_direct_mem_ptr(this, &Target::get_direct_mem_ptr);
    SC_THREAD(run_script);
    SC_THREAD(four_phase);
  }

  // The memory access itself, guarded like a careful target: a bad payload
  // gets an error response, never a crash.
  void serve(tlm_generic_payload& t) {
    const uint64_t a = t.get_address();
    const unsigned int len = t.get_data_length();
    if (t.get_data_ptr() == nullptr || len == 0) {
      t.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    } else if (t.get_byte_enable_ptr() != nullptr) {
      t.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    } else if (t.get_streaming_width() < len) {
      t.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    } else if (a >= kMemSize || len > kMemSize - a) {
      t.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    } else {
      if (t.is_read()) std::memcpy(t.get_data_ptr(), mem + a, len);
      if (t.is_write()) std::memcpy(mem + a, t.get_data_ptr(), len);
      t.set_dmi_allowed(true);
      t.set_response_status(tlm::TLM_OK_RESPONSE);
    }
  }

  void b_transport(tlm_generic_payload& t, sc_time& delay) {
    serve(t);
    delay += sc_time(10, SC_NS);
    if (fault == Fault::kChangeAddress) t.set_address(t.get_address() + 4);
    if (fault == Fault::kLeaveIncomplete) t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  }

  tlm::tlm_sync_enum nb_transport_fw(tlm_generic_payload& t, tlm::tlm_phase& phase, sc_time& delay) {
    if (phase == tlm::END_RESP) {
      end_resp_.notify(delay);
      return tlm::TLM_COMPLETED;
    }
    if (phase != tlm::BEGIN_REQ) return tlm::TLM_ACCEPTED;
    switch (nb_mode) {
      case NbMode::kCompleted:
        serve(t);
        delay += sc_time(10, SC_NS);
        return tlm::TLM_COMPLETED;
      case NbMode::kFourPhase:
        t.acquire();
        pending_ = &t;
        request_.notify(delay);
        return tlm::TLM_ACCEPTED;
      case NbMode::kSilent:
        return tlm::TLM_ACCEPTED;
    }
    return tlm::TLM_ACCEPTED;
  }

  // END_REQ after 5 ns, BEGIN_RESP 5 ns later, then END_RESP or TLM_COMPLETED
  // from the initiator. One transaction at a time (the initiator waits).
  void four_phase() {
    for (;;) {
      while (pending_ == nullptr) wait(request_);  // a request may arrive before this waits
      tlm_generic_payload& t = *pending_;
      pending_ = nullptr;
      wait(sc_time(5, SC_NS));
      tlm::tlm_phase phase = tlm::END_REQ;
      sc_time delay = sc_core::SC_ZERO_TIME;
      socket->nb_transport_bw(t, phase, delay);
      wait(sc_time(5, SC_NS));
      serve(t);
      phase = tlm::BEGIN_RESP;
      delay = sc_core::SC_ZERO_TIME;
      if (socket->nb_transport_bw(t, phase, delay) != tlm::TLM_COMPLETED) wait(end_resp_);
      t.release();
    }
  }

  unsigned int transport_dbg(tlm_generic_payload& t) {
    const uint64_t a = t.get_address();
    if (t.get_data_ptr() == nullptr || a >= kMemSize) return 0;
    const unsigned int n = std::min<unsigned int>(t.get_data_length(), static_cast<unsigned int>(kMemSize - a));
    if (t.is_read()) std::memcpy(t.get_data_ptr(), mem + a, n);
    if (t.is_write()) std::memcpy(mem + a, t.get_data_ptr(), n);
    return fault == Fault::kDebugOvercount ? t.get_data_length() + 1 : n;
  }

  bool get_direct_mem_ptr(tlm_generic_payload&, tlm::tlm_dmi& dmi) {
    dmi.set_dmi_ptr(mem);
    dmi.set_start_address(fault == Fault::kDmiElsewhere ? 128 : 0);
    dmi.set_end_address(kMemSize - 1);
    dmi.allow_read_write();
    return true;
  }

  void run_script() {
    if (script) script(*this);
  }

 private:
  tlm_generic_payload* pending_ = nullptr;
  sc_core::sc_event request_, end_resp_;
};

// An initiator whose traffic is a script run in a thread (or, for the
// method test, in a method process at time 0).
struct Initiator : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Initiator> socket;
  std::function<void(Initiator&)> script;
  Pool pool;
  // nb_transport_bw: answer BEGIN_RESP with TLM_COMPLETED instead of a later
  // END_RESP, and then also release the payload there.
  bool complete_in_bw = false;
  bool release_in_bw = false;
  tlm_generic_payload* response = nullptr;  // the last BEGIN_RESP received
  sc_core::sc_event response_event;
  std::vector<std::pair<uint64_t, uint64_t>> invalidated;

  SC_HAS_PROCESS(Initiator);
  Initiator(sc_core::sc_module_name n, bool as_method) : sc_module(n), socket("socket") {
    socket.register_nb_transport_bw(this, &Initiator::nb_transport_bw);
    socket.register_invalidate_direct_mem_ptr(this, &Initiator::invalidate_direct_mem_ptr);
    if (as_method) {
      SC_METHOD(run);
    } else {
      SC_THREAD(run);
    }
  }

  void run() {
    if (script) script(*this);
  }

  tlm::tlm_sync_enum nb_transport_bw(tlm_generic_payload& t, tlm::tlm_phase& phase, sc_time& delay) {
    if (phase != tlm::BEGIN_RESP) return tlm::TLM_ACCEPTED;
    response = &t;
    response_event.notify(delay);
    if (complete_in_bw && release_in_bw) t.release();
    return complete_in_bw ? tlm::TLM_COMPLETED : tlm::TLM_ACCEPTED;
  }

  void invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end) { invalidated.emplace_back(start, end); }

  // One nb transaction from the pool, run to its end like a compliant AT
  // initiator. Returns the response status.
  tlm::tlm_response_status nb(tlm::tlm_command cmd, uint64_t address, unsigned char* data, unsigned int length) {
    tlm_generic_payload* t = pool.allocate();
    setup(*t, cmd, address, data, length);
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    sc_time delay = sc_core::SC_ZERO_TIME;
    const tlm::tlm_sync_enum s = socket->nb_transport_fw(*t, phase, delay);
    if (s == tlm::TLM_COMPLETED) {
      wait(delay);
    } else {
      while (response != t) wait(response_event);
      response = nullptr;
      if (!complete_in_bw) {
        wait(sc_time(2, SC_NS));
        phase = tlm::END_RESP;
        delay = sc_core::SC_ZERO_TIME;
        socket->nb_transport_fw(*t, phase, delay);
      }
    }
    const tlm::tlm_response_status status = t->get_response_status();
    t->release();
    return status;
  }
};

struct Shape {
  bool method_initiator = false;  // the initiator's script runs in a method process
  bool b_only_target = false;     // the target registers b_transport only
};

// Initiator -> checker -> target, the checker bound with bind_checked.
struct Top : sc_core::sc_module {
  Initiator initiator;
  Target target;
  BaseProtocolChecker& checker;
  Top(sc_core::sc_module_name n, Shape shape)
      : sc_module(n),
        initiator("initiator", shape.method_initiator),
        target("target", shape.b_only_target),
        checker(bind_checked(initiator.socket, target.socket, "checker")) {}
};

json findings(const Top& top, json extra = json::object()) {
  extra["violations"] = BaseProtocolChecker::violations();
  extra["count"] = BaseProtocolChecker::violation_count();
  extra["transactions"] = top.checker.transactions();
  extra["checker"] = top.checker.name();
  return extra;
}

// Runs `configure` on a fresh Top in a child, simulates to the end and
// returns the findings (plus whatever `configure` stored in `extra`).
json simulate(const std::function<void(Top&, json& extra)>& configure, Shape shape = {}) {
  const json r = run_function_isolated([&] {
    Top top("top", shape);
    json extra = json::object();
    configure(top, extra);
    sc_core::sc_start();
    return findings(top, extra);
  });
  EXPECT_FALSE(r.contains("error")) << r.dump();
  return r;
}

std::vector<std::string> violations(const json& r) {
  return r.value("violations", std::vector<std::string>{});
}

// The one violation found ("" and a failure if there were not exactly one).
std::string only(const json& r) {
  const auto v = violations(r);
  EXPECT_EQ(v.size(), 1u) << r.dump(2);
  return v.size() == 1 ? v[0] : std::string();
}

// Exactly one violation, of `rule`, reported under the checker's name.
void expect_only(const json& r, const std::string& rule) {
  EXPECT_THAT(only(r), HasSubstr("top.checker: " + rule)) << r.dump(2);
}

// A valid LT write of 4 bytes at `address` in a thread, payload on the stack.
void lt_write(Initiator& i, uint64_t address, const std::function<void(tlm_generic_payload&)>& spoil = {}) {
  unsigned char data[4] = {1, 2, 3, 4};
  tlm_generic_payload t;
  setup(t, tlm::TLM_WRITE_COMMAND, address, data, 4);
  if (spoil) spoil(t);
  sc_time delay = sc_core::SC_ZERO_TIME;
  i.socket->b_transport(t, delay);
}

// ---- compliant traffic: no violation, and the checker is transparent ----

TEST(ProtocolChecker, CompliantLtTrafficHasNoViolation) {
  const json r = simulate([](Top& top, json& extra) {
    top.target.script = [](Target& t) {
      sc_core::wait(sc_time(100, SC_NS));
      t.socket->invalidate_direct_mem_ptr(16, 31);
    };
    top.initiator.script = [&extra](Initiator& i) {
      // Write then read back through b_transport; the target's 10 ns
      // annotation reaches the initiator.
      unsigned char out[8] = {0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4};
      unsigned char in[8] = {};
      tlm_generic_payload w;
      setup(w, tlm::TLM_WRITE_COMMAND, 32, out, 8);
      sc_time delay = sc_time(1, SC_NS);
      i.socket->b_transport(w, delay);
      extra["write_status"] = w.get_response_string();
      extra["write_delay_ns"] = delay / sc_time(1, SC_NS);
      tlm_generic_payload rd;
      setup(rd, tlm::TLM_READ_COMMAND, 32, in, 8);
      delay = sc_core::SC_ZERO_TIME;
      i.socket->b_transport(rd, delay);
      extra["read_status"] = rd.get_response_string();
      extra["read"] = std::vector<int>(in, in + 8);
      // An out-of-range access is answered with an error, which is legal.
      tlm_generic_payload bad;
      setup(bad, tlm::TLM_READ_COMMAND, kMemSize - 2, in, 4);
      delay = sc_core::SC_ZERO_TIME;
      i.socket->b_transport(bad, delay);
      extra["bad_status"] = bad.get_response_string();
      // Debug read of the same bytes.
      unsigned char dbg[4] = {};
      tlm_generic_payload d;
      setup(d, tlm::TLM_READ_COMMAND, 34, dbg, 4);
      extra["dbg_count"] = i.socket->transport_dbg(d);
      extra["dbg"] = std::vector<int>(dbg, dbg + 4);
      // DMI.
      tlm_generic_payload q;
      setup(q, tlm::TLM_READ_COMMAND, 40, nullptr, 0);
      tlm::tlm_dmi dmi;
      extra["dmi_granted"] = i.socket->get_direct_mem_ptr(q, dmi);
      extra["dmi_end"] = dmi.get_end_address();
      sc_core::wait(sc_time(200, SC_NS));
      extra["invalidated"] = i.invalidated;
    };
  });
  EXPECT_EQ(r["count"], 0u) << r.dump(2);
  EXPECT_TRUE(violations(r).empty());
  EXPECT_EQ(r["transactions"], 4u);  // three b_transport calls and one debug call
  EXPECT_EQ(r["write_status"], "TLM_OK_RESPONSE");
  EXPECT_EQ(r["write_delay_ns"], 11.0);  // 1 ns from the initiator + 10 ns from the target
  EXPECT_EQ(r["read_status"], "TLM_OK_RESPONSE");
  EXPECT_EQ(r["read"], (std::vector<int>{0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4}));
  EXPECT_EQ(r["bad_status"], "TLM_ADDRESS_ERROR_RESPONSE");
  EXPECT_EQ(r["dbg_count"], 4u);
  EXPECT_EQ(r["dbg"], (std::vector<int>{0xbe, 0xef, 1, 2}));
  EXPECT_EQ(r["dmi_granted"], true);
  EXPECT_EQ(r["dmi_end"], kMemSize - 1);
  EXPECT_EQ(r["invalidated"], json::parse("[[16, 31]]"));
}

TEST(ProtocolChecker, CompliantNbTrafficHasNoViolation) {
  const json r = simulate([](Top& top, json& extra) {
    top.initiator.script = [&top, &extra](Initiator& i) {
      unsigned char a[4] = {9, 8, 7, 6};
      unsigned char b[4] = {};
      // The target completes at BEGIN_REQ, with a 10 ns annotation.
      top.target.nb_mode = Target::NbMode::kCompleted;
      const sc_time t0 = sc_core::sc_time_stamp();
      extra["completed_write"] = i.nb(tlm::TLM_WRITE_COMMAND, 8, a, 4) == tlm::TLM_OK_RESPONSE;
      extra["completed_ns"] = (sc_core::sc_time_stamp() - t0) / sc_time(1, SC_NS);
      // The full BEGIN_REQ, END_REQ, BEGIN_RESP, END_RESP sequence; then
      // BEGIN_RESP answered with TLM_COMPLETED.
      top.target.nb_mode = Target::NbMode::kFourPhase;
      extra["four_phase_read"] = i.nb(tlm::TLM_READ_COMMAND, 8, b, 4) == tlm::TLM_OK_RESPONSE;
      extra["read"] = std::vector<int>(b, b + 4);
      i.complete_in_bw = true;
      unsigned char c[4] = {5, 5, 5, 5};
      extra["completed_in_bw"] = i.nb(tlm::TLM_WRITE_COMMAND, 12, c, 4) == tlm::TLM_OK_RESPONSE;
      extra["mem"] = std::vector<int>(top.target.mem + 8, top.target.mem + 16);
    };
  });
  EXPECT_EQ(r["count"], 0u) << r.dump(2);
  EXPECT_EQ(r["transactions"], 3u);
  EXPECT_EQ(r["completed_write"], true);
  EXPECT_EQ(r["completed_ns"], 10.0);
  EXPECT_EQ(r["four_phase_read"], true);
  EXPECT_EQ(r["read"], (std::vector<int>{9, 8, 7, 6}));
  EXPECT_EQ(r["completed_in_bw"], true);
  EXPECT_EQ(r["mem"], (std::vector<int>{9, 8, 7, 6, 5, 5, 5, 5}));
}

TEST(ProtocolChecker, NbFromAMethodToABTransportTargetHasNoViolation) {
  // nb_transport may be called from a method process; the target socket
  // turns it into b_transport in its own thread and answers with BEGIN_RESP.
  const json r = simulate(
      [](Top& top, json& extra) {
        top.initiator.complete_in_bw = true;
        top.initiator.release_in_bw = true;  // the method cannot wait for the response
        top.initiator.script = [&top, &extra](Initiator& i) {
          static unsigned char data[4] = {7, 7, 7, 7};
          tlm_generic_payload* t = i.pool.allocate();
          setup(*t, tlm::TLM_WRITE_COMMAND, 20, data, 4);
          tlm::tlm_phase phase = tlm::BEGIN_REQ;
          sc_time delay = sc_core::SC_ZERO_TIME;
          extra["status"] = int(i.socket->nb_transport_fw(*t, phase, delay));
          top.target.script = [&extra](Target& tg) {
            sc_core::wait(sc_time(100, SC_NS));
            extra["mem"] = std::vector<int>(tg.mem + 20, tg.mem + 24);
          };
        };
      },
      Shape{/*method_initiator=*/true, /*b_only_target=*/true});
  EXPECT_EQ(r["count"], 0u) << r.dump(2);
  EXPECT_EQ(r["transactions"], 1u);
  EXPECT_EQ(r["status"], int(tlm::TLM_ACCEPTED));
  EXPECT_EQ(r["mem"], (std::vector<int>{7, 7, 7, 7}));
}

// ---- b_transport violations ----

TEST(ProtocolChecker, BTransportFromMethodIsCaught) {
  const json r = simulate(
      [](Top& top, json&) { top.initiator.script = [](Initiator& i) { lt_write(i, 0); }; },
      Shape{/*method_initiator=*/true, /*b_only_target=*/false});
  expect_only(r, "11.1.1.4 b)");
  EXPECT_THAT(only(r), HasSubstr("top.initiator.run"));
  EXPECT_EQ(r["transactions"], 1u);
}

TEST(ProtocolChecker, NullDataPointerIsCaughtAndStillForwarded) {
  const json r = simulate([](Top& top, json& extra) {
    top.initiator.script = [&extra](Initiator& i) {
      unsigned char data[4] = {};
      tlm_generic_payload t;
      setup(t, tlm::TLM_WRITE_COMMAND, 0, data, 4);
      t.set_data_ptr(nullptr);
      sc_time delay = sc_core::SC_ZERO_TIME;
      i.socket->b_transport(t, delay);
      // The target saw the payload as sent and answered it.
      extra["status"] = t.get_response_string();
    };
  });
  expect_only(r, "14.11 data pointer");
  EXPECT_EQ(r["status"], "TLM_GENERIC_ERROR_RESPONSE");
}

TEST(ProtocolChecker, ZeroDataLengthIsCaught) {
  const json r = simulate([](Top& top, json&) {
    top.initiator.script = [](Initiator& i) {
      lt_write(i, 0, [](tlm_generic_payload& t) {
        t.set_data_length(0);
        t.set_streaming_width(4);
      });
    };
  });
  expect_only(r, "14.12 data length");
}

TEST(ProtocolChecker, ZeroStreamingWidthIsCaught) {
  const json r = simulate([](Top& top, json&) {
    top.initiator.script = [](Initiator& i) {
      lt_write(i, 0, [](tlm_generic_payload& t) { t.set_streaming_width(0); });
    };
  });
  expect_only(r, "14.15 streaming width");
}

TEST(ProtocolChecker, TargetLeavingStatusIncompleteIsCaught) {
  const json r = simulate([](Top& top, json&) {
    top.target.fault = Target::Fault::kLeaveIncomplete;
    top.initiator.script = [](Initiator& i) { lt_write(i, 0); };
  });
  expect_only(r, "14.17 response status");
  EXPECT_THAT(only(r), HasSubstr("when b_transport returned"));
}

TEST(ProtocolChecker, TargetChangingTheAddressIsCaught) {
  const json r = simulate([](Top& top, json&) {
    top.target.fault = Target::Fault::kChangeAddress;
    top.initiator.script = [](Initiator& i) { lt_write(i, 8); };
  });
  expect_only(r, "14.7 address modified");
  EXPECT_THAT(only(r), HasSubstr("from 0x8 to 0xc"));
}

TEST(ProtocolChecker, AddressTranslationCanBeAllowedForAnInterconnect) {
  const json r = simulate([](Top& top, json&) {
    top.checker.allow_address_translation();
    top.target.fault = Target::Fault::kChangeAddress;
    top.initiator.script = [](Initiator& i) { lt_write(i, 8); };
  });
  EXPECT_EQ(r["count"], 0u) << r.dump(2);
  EXPECT_EQ(r["transactions"], 1u);
}

TEST(ProtocolChecker, DirtyPayloadOnEntryIsCaught) {
  // A reused payload whose status and DMI hint were not reset.
  const json r = simulate([](Top& top, json&) {
    top.initiator.script = [](Initiator& i) {
      lt_write(i, 0, [](tlm_generic_payload& t) {
        t.set_response_status(tlm::TLM_OK_RESPONSE);
        t.set_dmi_allowed(true);
      });
    };
  });
  const auto v = violations(r);
  ASSERT_EQ(v.size(), 2u) << r.dump(2);
  EXPECT_THAT(v[0], HasSubstr("14.16 DMI allowed"));
  EXPECT_THAT(v[1], HasSubstr("14.17 response status"));
  EXPECT_THAT(v[1], HasSubstr("on entry"));
}

// ---- nb_transport violations ----

TEST(ProtocolChecker, NbWithoutMemoryManagerIsCaught) {
  const json r = simulate([](Top& top, json&) {
    top.initiator.script = [](Initiator& i) {
      unsigned char data[4] = {};
      tlm_generic_payload t;  // no memory manager
      setup(t, tlm::TLM_WRITE_COMMAND, 0, data, 4);
      tlm::tlm_phase phase = tlm::BEGIN_REQ;
      sc_time delay = sc_core::SC_ZERO_TIME;
      i.socket->nb_transport_fw(t, phase, delay);
    };
  });
  expect_only(r, "14.5 i) memory manager");
  EXPECT_EQ(r["transactions"], 1u);
}

TEST(ProtocolChecker, SecondBeginReqBeforeEndReqIsCaught) {
  const json r = simulate([](Top& top, json&) {
    top.target.nb_mode = Target::NbMode::kSilent;  // never ends a request
    top.initiator.script = [](Initiator& i) {
      unsigned char a[4] = {}, b[4] = {};
      for (unsigned char* data : {a, b}) {
        tlm_generic_payload* t = i.pool.allocate();
        setup(*t, tlm::TLM_WRITE_COMMAND, 0, data, 4);
        tlm::tlm_phase phase = tlm::BEGIN_REQ;
        sc_time delay = sc_core::SC_ZERO_TIME;
        i.socket->nb_transport_fw(*t, phase, delay);
      }
    };
  });
  expect_only(r, "15.2.6 e) request exclusion");
  EXPECT_EQ(r["transactions"], 2u);
}

TEST(ProtocolChecker, BeginRespWithNoRequestIsCaught) {
  const json r = simulate([](Top& top, json&) {
    top.target.script = [](Target& tg) {
      unsigned char data[4] = {};
      tlm_generic_payload* t = tg.pool.allocate();
      setup(*t, tlm::TLM_READ_COMMAND, 0, data, 4);
      t->set_response_status(tlm::TLM_OK_RESPONSE);
      tlm::tlm_phase phase = tlm::BEGIN_RESP;
      sc_time delay = sc_core::SC_ZERO_TIME;
      tg.socket->nb_transport_bw(*t, phase, delay);
      t->release();
    };
    top.initiator.complete_in_bw = true;
  });
  expect_only(r, "15.2.4 phase sequence");
  EXPECT_THAT(only(r), HasSubstr("BEGIN_RESP in nb_transport_bw with no request in progress"));
  EXPECT_EQ(r["transactions"], 0u);
}

TEST(ProtocolChecker, PhaseAfterCompletionIsCaught) {
  // The target completes the transaction, then still sends BEGIN_RESP for it.
  const json r = simulate([](Top& top, json&) {
    top.target.nb_mode = Target::NbMode::kCompleted;
    top.initiator.complete_in_bw = true;
    top.initiator.script = [&top](Initiator& i) {
      unsigned char data[4] = {};
      tlm_generic_payload* t = i.pool.allocate();
      setup(*t, tlm::TLM_WRITE_COMMAND, 0, data, 4);
      tlm::tlm_phase phase = tlm::BEGIN_REQ;
      sc_time delay = sc_core::SC_ZERO_TIME;
      i.socket->nb_transport_fw(*t, phase, delay);  // TLM_COMPLETED
      phase = tlm::BEGIN_RESP;
      top.target.socket->nb_transport_bw(*t, phase, delay);
      t->release();
    };
  });
  expect_only(r, "15.2.4 phase sequence");
}

TEST(ProtocolChecker, PhaseOnTheWrongPathIsCaught) {
  // END_REQ is the target's phase; an initiator sends it forward.
  const json r = simulate([](Top& top, json&) {
    top.initiator.script = [](Initiator& i) {
      unsigned char data[4] = {};
      tlm_generic_payload* t = i.pool.allocate();
      setup(*t, tlm::TLM_WRITE_COMMAND, 0, data, 4);
      tlm::tlm_phase phase = tlm::END_REQ;
      sc_time delay = sc_core::SC_ZERO_TIME;
      i.socket->nb_transport_fw(*t, phase, delay);
      t->release();
    };
  });
  expect_only(r, "15.2.3 c) phase on the wrong path");
  EXPECT_EQ(r["transactions"], 0u);
}

TEST(ProtocolChecker, SecondBeginRespBeforeEndRespIsCaught) {
  // Two requests, each ended in turn; then two responses with no END_RESP
  // between them.
  const json r = simulate([](Top& top, json&) {
    auto sent = std::make_shared<std::vector<tlm_generic_payload*>>();
    top.target.nb_mode = Target::NbMode::kSilent;
    top.initiator.script = [sent](Initiator& i) {
      static unsigned char a[4], b[4];
      for (unsigned char* data : {a, b}) {
        tlm_generic_payload* t = i.pool.allocate();
        setup(*t, tlm::TLM_READ_COMMAND, 0, data, 4);
        sent->push_back(t);
        tlm::tlm_phase phase = tlm::BEGIN_REQ;
        sc_time delay = sc_core::SC_ZERO_TIME;
        i.socket->nb_transport_fw(*t, phase, delay);
        sc_core::wait(sc_time(2, SC_NS));  // the target ends the request at 1 ns
      }
    };
    top.target.script = [sent](Target& tg) {
      for (int k = 0; k < 2; ++k) {
        sc_core::wait(sc_time(1, SC_NS));
        tlm::tlm_phase phase = tlm::END_REQ;
        sc_time delay = sc_core::SC_ZERO_TIME;
        tg.socket->nb_transport_bw(*sent->at(size_t(k)), phase, delay);
        sc_core::wait(sc_time(1, SC_NS));
      }
      for (tlm_generic_payload* t : *sent) {
        t->set_response_status(tlm::TLM_OK_RESPONSE);
        tlm::tlm_phase phase = tlm::BEGIN_RESP;
        sc_time delay = sc_core::SC_ZERO_TIME;
        tg.socket->nb_transport_bw(*t, phase, delay);  // the initiator accepts and never ends it
      }
    };
  });
  expect_only(r, "15.2.6 f) response exclusion");
  EXPECT_EQ(r["transactions"], 2u);
}

TEST(ProtocolChecker, DecreasingTimingAnnotationIsCaught) {
  // BEGIN_REQ at 0 s + 10 ns, then END_REQ at 1 ns + 0 s.
  const json r = simulate([](Top& top, json&) {
    auto sent = std::make_shared<tlm_generic_payload*>(nullptr);
    top.target.nb_mode = Target::NbMode::kSilent;
    top.initiator.script = [sent](Initiator& i) {
      static unsigned char data[4];
      *sent = i.pool.allocate();
      setup(**sent, tlm::TLM_WRITE_COMMAND, 0, data, 4);
      tlm::tlm_phase phase = tlm::BEGIN_REQ;
      sc_time delay = sc_time(10, SC_NS);
      i.socket->nb_transport_fw(**sent, phase, delay);
    };
    top.target.script = [sent](Target& tg) {
      sc_core::wait(sc_time(1, SC_NS));
      tlm::tlm_phase phase = tlm::END_REQ;
      sc_time delay = sc_core::SC_ZERO_TIME;
      tg.socket->nb_transport_bw(**sent, phase, delay);
    };
  });
  expect_only(r, "15.2.7 c) timing annotation");
}

TEST(ProtocolChecker, BTransportDuringAnNbSequenceIsCaught) {
  const json r = simulate([](Top& top, json&) {
    top.target.nb_mode = Target::NbMode::kSilent;
    top.initiator.script = [](Initiator& i) {
      unsigned char data[4] = {};
      tlm_generic_payload* t = i.pool.allocate();
      setup(*t, tlm::TLM_WRITE_COMMAND, 0, data, 4);
      tlm::tlm_phase phase = tlm::BEGIN_REQ;
      sc_time delay = sc_core::SC_ZERO_TIME;
      i.socket->nb_transport_fw(*t, phase, delay);  // accepted, never ended
      i.socket->b_transport(*t, delay);
    };
  });
  expect_only(r, "15.2.10 c) b_transport during an nb_transport sequence");
  EXPECT_EQ(r["transactions"], 2u);
}

// ---- debug and DMI violations ----

TEST(ProtocolChecker, DebugWithNullDataPointerIsCaught) {
  const json r = simulate([](Top& top, json& extra) {
    top.initiator.script = [&extra](Initiator& i) {
      tlm_generic_payload t;
      setup(t, tlm::TLM_READ_COMMAND, 0, nullptr, 4);
      extra["dbg_count"] = i.socket->transport_dbg(t);
    };
  });
  expect_only(r, "11.3.4 l) debug data pointer");
  EXPECT_EQ(r["dbg_count"], 0u);
  EXPECT_EQ(r["transactions"], 1u);
}

TEST(ProtocolChecker, DebugCountBeyondDataLengthIsCaught) {
  const json r = simulate([](Top& top, json& extra) {
    top.target.fault = Target::Fault::kDebugOvercount;
    top.initiator.script = [&extra](Initiator& i) {
      unsigned char data[4] = {};
      tlm_generic_payload t;
      setup(t, tlm::TLM_READ_COMMAND, 0, data, 4);
      extra["dbg_count"] = i.socket->transport_dbg(t);
    };
  });
  expect_only(r, "11.3.4 s) debug byte count");
  EXPECT_EQ(r["dbg_count"], 5u);  // returned unchanged
}

TEST(ProtocolChecker, DmiRegionWithoutTheAddressIsCaught) {
  const json r = simulate([](Top& top, json& extra) {
    top.target.fault = Target::Fault::kDmiElsewhere;  // grants [128, 255]
    top.initiator.script = [&extra](Initiator& i) {
      tlm_generic_payload t;
      setup(t, tlm::TLM_READ_COMMAND, 40, nullptr, 0);
      tlm::tlm_dmi dmi;
      extra["granted"] = i.socket->get_direct_mem_ptr(t, dmi);
    };
  });
  expect_only(r, "11.2.5 DMI region");
  EXPECT_THAT(only(r), HasSubstr("[0x80, 0xff] does not contain address 0x28"));
  EXPECT_EQ(r["granted"], true);
  EXPECT_EQ(r["transactions"], 0u);  // DMI requests are not transactions
}

}  // namespace
}  // namespace kb::test
