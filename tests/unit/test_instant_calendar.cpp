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

}  // namespace
}  // namespace kb
