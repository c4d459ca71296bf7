// The instant calendar (models/util/instant_calendar.h): actors due at one
// instant run in key order (global PE number, kind, construction), a sweep
// per delta cycle; InstantActor keeps sc_event's notify semantics and
// InstantQueue sc_event_queue's.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/util/instant_calendar.h"
#include "models/util/sim_time.h"
#include "tests/sim_util.h"

namespace kb {
namespace {

using sc_core::SC_NS;
using sc_core::sc_time;

struct Log {
  std::vector<std::string> runs;  // "name@ps/delta"
  void add(const std::string& n) {
    runs.push_back(n + "@" + std::to_string(now_ps()) + "/" + std::to_string(sc_core::sc_delta_count()));
  }
};

TEST(InstantCalendar, ActorsOfAnInstantRunInKeyOrderWhateverTheOrderOfNotification) {
  const nlohmann::json j = run_function_isolated([] {
    Log log;
    // Made in this order; keyed by PE, then kind.
    InstantActor step2(InstantKind::kSchedulerStep, [&] { log.add("pe2.step"); });
    InstantActor step1(InstantKind::kSchedulerStep, [&] { log.add("pe1.step"); });
    InstantActor cpu1(InstantKind::kCpuDispatchEnd, [&] { log.add("pe1.cpu"); });
    step2.set_pe(2);
    step1.set_pe(1);
    cpu1.set_pe(1);
    sc_core::sc_spawn([&] {
      step2.notify(sc_time(5, SC_NS));
      step1.notify(sc_time(5, SC_NS));
      cpu1.notify(sc_time(5, SC_NS));
    });
    sc_core::sc_start();
    nlohmann::json r;
    r["runs"] = log.runs;
    r["sweeps"] = InstantCalendar::get().sweeps();
    return r;
  });
  ASSERT_FALSE(j.contains("error")) << j.dump();
  ASSERT_EQ(j["runs"].size(), 3u) << j.dump();
  const auto name = [&](size_t i) {
    const std::string s = j["runs"][i];
    return s.substr(0, s.find('@'));
  };
  EXPECT_EQ(name(0), "pe1.cpu");
  EXPECT_EQ(name(1), "pe1.step");
  EXPECT_EQ(name(2), "pe2.step");
  EXPECT_EQ(j["sweeps"].get<uint64_t>(), 1u);  // one process activation for all three
}

// A zero-delay notification during a sweep: an actor later in key order
// runs in the same sweep, one earlier (or itself) in the next, a delta
// cycle later at the same time; one from a SystemC process after the
// instant's sweeps ran comes after them.
TEST(InstantCalendar, ZeroDelayNotificationsRunInThisSweepOrTheNext) {
  const nlohmann::json j = run_function_isolated([] {
    Log log;
    bool again = true;
    InstantActor* a_ptr = nullptr;
    InstantActor b(InstantKind::kSchedulerStep, [&] {
      log.add("b");
      if (again) {
        again = false;
        a_ptr->notify(sc_core::SC_ZERO_TIME);  // earlier key: the next sweep
      }
    });
    InstantActor a(InstantKind::kSchedulerStep, [&] {
      log.add("a");
      b.notify(sc_core::SC_ZERO_TIME);  // later key: this sweep
    });
    a_ptr = &a;
    a.set_pe(1);
    b.set_pe(2);
    sc_core::sc_event later;
    sc_core::sc_spawn([&] {
      a.notify(sc_time(3, SC_NS));
      sc_core::wait(sc_time(3, SC_NS));
      sc_core::wait(sc_core::SC_ZERO_TIME);
      sc_core::wait(sc_core::SC_ZERO_TIME);  // past the instant's sweeps
      b.notify(sc_core::SC_ZERO_TIME);
    });
    sc_core::sc_start();
    nlohmann::json r;
    r["runs"] = log.runs;
    return r;
  });
  ASSERT_FALSE(j.contains("error")) << j.dump();
  ASSERT_EQ(j["runs"].size(), 5u) << j.dump();
  auto part = [&](size_t i, int what) {  // 0 name, 1 ps, 2 delta
    const std::string s = j["runs"][i];
    const size_t at = s.find('@'), slash = s.find('/');
    if (what == 0) return s.substr(0, at);
    if (what == 1) return s.substr(at + 1, slash - at - 1);
    return s.substr(slash + 1);
  };
  EXPECT_EQ(part(0, 0), "a");
  EXPECT_EQ(part(1, 0), "b");
  EXPECT_EQ(part(1, 2), part(0, 2));  // the same sweep
  EXPECT_EQ(part(2, 0), "a");
  EXPECT_GT(std::stoull(part(2, 2)), std::stoull(part(1, 2)));  // the next sweep
  EXPECT_EQ(part(3, 0), "b");
  EXPECT_EQ(part(4, 0), "b");  // the process's notification, after them
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(part(i, 1), "3000");
  EXPECT_GT(std::stoull(part(4, 2)), std::stoull(part(3, 2)));
}

// sc_event::notify semantics: an earlier notification replaces a pending
// later one, a later one leaves a pending earlier one; sc_event_queue's:
// every notification runs.
TEST(InstantCalendar, ActorsKeepEventSemanticsAndQueuesEventQueueSemantics) {
  const nlohmann::json j = run_function_isolated([] {
    Log log;
    InstantActor ev(InstantKind::kSchedulerStep, [&] { log.add("ev"); });
    InstantQueue q(InstantKind::kIpcArrival, [&] { log.add("q"); });
    sc_core::sc_spawn([&] {
      ev.notify(sc_time(10, SC_NS));
      ev.notify(sc_time(5, SC_NS));   // replaces 10
      ev.notify(sc_time(7, SC_NS));   // ignored: 5 is pending
      q.notify(sc_time(5, SC_NS));
      q.notify(sc_time(5, SC_NS));
      q.notify(sc_time(7, SC_NS));
      sc_core::wait(sc_time(20, SC_NS));
      ev.notify(sc_time(1, SC_NS));  // after it ran: runs again
    });
    sc_core::sc_start();
    std::vector<std::string> names;
    for (const std::string& s : log.runs) names.push_back(s.substr(0, s.find('/')));
    nlohmann::json r;
    r["runs"] = names;
    return r;
  });
  ASSERT_FALSE(j.contains("error")) << j.dump();
  EXPECT_EQ(j["runs"], nlohmann::json({"q@5000", "q@5000", "ev@5000", "q@7000", "ev@21000"})) << j.dump();
}

// Look-ahead: an instant runs ahead of SystemC's time while nothing
// outside the calendar is due, and everything that is seen happens as
// without it. The scenario: an actor chain every ns wakes a process
// outside at once (4 ns), a delta later with another sweep left at that
// instant (6 ns) and 1.5 ns later (8 ns); the process answers each with a
// zero-delay notification of an actor; a second process waits until 7.5 ns
// on its own. Each run's log: actors with the model's time, the processes
// with the model's and SystemC's.
nlohmann::json lookahead_scenario(bool lookahead) {
  return run_function_isolated([lookahead] {
    InstantCalendar::set_lookahead(lookahead);
    std::vector<std::string> log;
    auto outside = [&](const std::string& n) {
      log.push_back(n + "@" + std::to_string(now_ps()) + " sc " +
                    std::to_string(ps_of(sc_core::sc_time_stamp())));
    };
    sc_core::sc_event e_now, e_delta, e_later, e_twice;
    InstantActor* chain_ptr = nullptr;
    InstantActor echo(InstantKind::kSchedulerStep, [&] { log.push_back("echo@" + std::to_string(now_ps())); });
    echo.set_pe(1);
    int again_at_6 = 1;
    InstantActor chain(InstantKind::kSchedulerStep, [&] {
      const uint64_t t = now_ps();
      log.push_back("chain@" + std::to_string(t));
      if (t == 3000) {  // at once, then again 2 ns later: the second stays pending
        notify_outside(e_twice);
        notify_outside(e_twice, sc_time(2, SC_NS));
      }
      if (t == 4000) notify_outside(e_now);
      if (t == 6000 && again_at_6) {
        --again_at_6;
        notify_outside(e_delta, sc_core::SC_ZERO_TIME);
        chain_ptr->notify(sc_core::SC_ZERO_TIME);  // itself: the next sweep at 6 ns
        return;
      }
      if (t == 8000) notify_outside(e_later, sc_time(1.5, SC_NS));
      if (t < 10000) chain_ptr->notify(sc_time(1, SC_NS));
    });
    chain_ptr = &chain;
    sc_core::sc_spawn([&] {
      chain.notify(sc_time(1, SC_NS));
      for (sc_core::sc_event* e : {&e_now, &e_delta, &e_later}) {
        sc_core::wait(*e);
        outside("woken");
        echo.notify(sc_core::SC_ZERO_TIME);
      }
    });
    sc_core::sc_spawn([&] {
      sc_core::wait(sc_time(7.5, SC_NS));
      outside("timer");
    });
    // A method woken with the thread each time (a VP's method, PE_REGS'):
    // where it falls among the calendar's sweeps is SystemC's order, which
    // look-ahead must keep too.
    sc_core::sc_spawn_options method;
    method.spawn_method();
    method.dont_initialize();
    method.set_sensitivity(&e_now);
    method.set_sensitivity(&e_delta);
    method.set_sensitivity(&e_later);
    sc_core::sc_spawn([&] { outside("method"); }, "method", &method);
    sc_core::sc_spawn_options twice;
    twice.spawn_method();
    twice.dont_initialize();
    twice.set_sensitivity(&e_twice);
    sc_core::sc_spawn([&] { outside("twice"); }, "twice", &twice);
    sc_core::sc_start();
    nlohmann::json r;
    r["log"] = log;
    r["end_ps"] = ps_of(sc_core::sc_time_stamp());
    r["instants_ahead"] = InstantCalendar::get().instants_ahead();
    return r;
  });
}

TEST(InstantCalendarLookahead, RunsInstantsAheadAndEverythingSeenHappensAsWithout) {
  const nlohmann::json off = lookahead_scenario(false), on = lookahead_scenario(true);
  ASSERT_FALSE(off.contains("error")) << off.dump();
  ASSERT_FALSE(on.contains("error")) << on.dump();
  EXPECT_EQ(on["log"], off["log"]);
  EXPECT_EQ(on["end_ps"], off["end_ps"]);
  EXPECT_EQ(off["instants_ahead"].get<uint64_t>(), 0u);
  EXPECT_GT(on["instants_ahead"].get<uint64_t>(), 0u);
  // What the log must say (so that both runs cannot agree on a wrong one):
  // the process runs at the instant that woke it, SystemC's time equal to
  // the model's; woken at once, in that sweep's delta cycle (4 ns); a delta
  // later, in the next sweep's, after the calendar (6 ns: SystemC runs a
  // delta cycle's methods, the calendar, before its threads).
  const std::vector<std::string> expected = {
      "chain@1000", "chain@2000", "chain@3000", "chain@4000", "woken@4000 sc 4000", "echo@4000",
      "chain@5000", "chain@6000", "chain@6000", "woken@6000 sc 6000", "echo@6000", "chain@7000",
      "timer@7500 sc 7500", "chain@8000", "chain@9000", "woken@9500 sc 9500", "echo@9500", "chain@10000"};
  std::vector<std::string> without_methods, twice;
  for (const auto& e : on["log"]) {
    const std::string s = e;
    if (s.rfind("twice@", 0) == 0) twice.push_back(s);
    else if (s.rfind("method@", 0) != 0) without_methods.push_back(s);
  }
  EXPECT_EQ(without_methods, expected) << on.dump();
  EXPECT_EQ(on["log"].size(), expected.size() + 3 + 2) << on.dump();  // the method, once per wake
  // An immediate notification, then a timed one of the same event: both
  // run (sc_event semantics: only an earlier notification cancels).
  EXPECT_EQ(twice, (std::vector<std::string>{"twice@3000 sc 3000", "twice@5000 sc 5000"})) << on.dump();
  EXPECT_EQ(on["end_ps"].get<uint64_t>(), 10000u);  // the last instant run
}

// With nothing outside the calendar, the whole run is one activation's
// look-ahead, and SystemC's time still ends at the last instant.
TEST(InstantCalendarLookahead, WithNothingOutsideOneActivationRunsEveryInstant) {
  const nlohmann::json j = run_function_isolated([] {
    InstantCalendar::set_lookahead(true);
    int runs = 0;
    InstantActor* self = nullptr;
    InstantActor tick(InstantKind::kSchedulerStep, [&] {
      if (++runs < 100) self->notify(sc_time(1, SC_NS));
    });
    self = &tick;
    sc_core::sc_spawn([&] { tick.notify(sc_time(1, SC_NS)); });
    sc_core::sc_start();
    nlohmann::json r;
    r["runs"] = runs;
    r["end_ps"] = ps_of(sc_core::sc_time_stamp());
    r["instants_ahead"] = InstantCalendar::get().instants_ahead();
    return r;
  });
  ASSERT_FALSE(j.contains("error")) << j.dump();
  EXPECT_EQ(j["runs"].get<int>(), 100);
  EXPECT_EQ(j["instants_ahead"].get<uint64_t>(), 99u);  // all but the first
  EXPECT_EQ(j["end_ps"].get<uint64_t>(), 100000u);
}

}  // namespace
}  // namespace kb
