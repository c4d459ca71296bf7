// Custom GoogleTest main (docs/conventions.md 8): quiet SystemC banner, SystemC
// warnings and errors become test failures, except the documented report of
// a failed kernel launch (see is_kernel_error). CTest runs every test in its
// own process (gtest_discover_tests), so each test may elaborate one
// simulation.
#include <gtest/gtest.h>
#include <systemc>

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "models/pe/cpu/pe_cpu.h"
#include "models/pe/scheduler/pe_scheduler.h"

namespace {

// Simulations run in forked children (tb/run/runner.h), whose gtest results
// never reach the parent. A failed assertion there (inside a kernel, or a
// SystemC warning) throws instead, which fails the run with the message, and
// the parent's check of the run's result reports it.
class FailRunInChild : public ::testing::EmptyTestEventListener {
 public:
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (getpid() == main_pid_ || !r.failed()) return;
    throw std::runtime_error(std::string("assertion failed inside the simulation: ") +
                             (r.file_name() ? r.file_name() : "?") + ":" +
                             std::to_string(r.line_number()) + ": " + r.message());
  }

 private:
  const pid_t main_pid_ = getpid();
};

// A failed kernel launch is reported as an SC_ERROR of type
// kb::kKernelErrorType (models/pe/cpu/pe_cpu.h), and its message is also the
// launch's error, which every run's result carries (RunResult::ok and
// error): a test that expects the error asserts the message, and one that
// does not fails on the result. Only that report is let through; any other
// warning or error, and this type at another severity, fails the test.
// A refused descriptor (kb::kDescriptorErrorType) is let
// through the same way: its write gets an error response and PE_REGS records
// its code, which the tests that expect it assert.
bool is_kernel_error(const sc_core::sc_report& report) {
  return report.get_severity() == sc_core::SC_ERROR &&
         (std::strcmp(report.get_msg_type(), kb::kKernelErrorType) == 0 ||
          std::strcmp(report.get_msg_type(), kb::kDescriptorErrorType) == 0);
}

void report_to_gtest(const sc_core::sc_report& report,
                     const sc_core::sc_actions& actions) {
  if (report.get_severity() >= sc_core::SC_WARNING && !is_kernel_error(report)) {
    ADD_FAILURE() << "SystemC " << report.get_msg_type() << ": "
                  << report.get_msg();
  }
  sc_core::sc_report_handler::default_handler(report, actions);
}
}  // namespace

int main(int argc, char** argv) {
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1);
  sc_core::sc_report_handler::set_handler(report_to_gtest);
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::UnitTest::GetInstance()->listeners().Append(new FailRunInChild);
  return RUN_ALL_TESTS();
}

// libsystemc.so references sc_main; this binary drives SystemC from main().
int sc_main(int, char**) { return 0; }
