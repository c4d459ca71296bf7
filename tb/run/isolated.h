// Functions run in forked children, their results sent back over a pipe.
//
// SystemC elaborates once per process, so a simulation runs in a child
// forked before any SystemC object exists in the caller: a crash or a
// kernel error in one run cannot take the caller down, and a process can
// do many runs (CLI, sweeps, tests). The child catches every exception and
// always _exits; a child that exceeds its timeout, or whose process is
// stopped, is ended and its run fails with a message saying why. Signals:
// tb/run/child_signals.h.
//
// What a child sends is a stream of lines, each a tag and compact JSON
// (compact JSON holds no raw line break), ending with 'Z'; or, at any
// point, 'E' and an exception's message up to the end of the stream. The
// parent reads lines as they arrive and builds the result from them, so
// neither side holds the whole result as text (100 k launches make a
// 220 MB document, 2.1 GB on each side).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tb/run/child_signals.h"

namespace kb {

// The child's end of the pipe: whole lines, buffered.
class ResultWriter {
 public:
  explicit ResultWriter(int fd) : fd_(fd) {}
  void line(char tag, const nlohmann::json& j);
  void end();
  void flush();

 private:
  int fd_;
  std::string buf_;
};

// The parent's reader of one child's lines.
class ResultReader {
 public:
  virtual ~ResultReader() = default;
  // One line (without its tag and line break). Throws when it cannot be read.
  virtual void line(char tag, std::string_view text) = 0;
  // After 'Z'. Throws when lines are missing.
  virtual void end() {}
};

// What a child runs: it sends its result through the writer.
using Producer = std::function<void(ResultWriter&)>;

struct Outcome {
  std::unique_ptr<ResultReader> reader;  // the result, when both errors are empty
  std::string error;       // no result: why
  std::string read_error;  // a result that could not be read: why
};

// A child's wall-clock limit: seconds > 0 ends it after that long, and its
// error names `named_s` ("timed out after N s"): the user's --timeout when
// the child was given only what earlier runs left of it; 0 names `seconds`.
struct ChildTimeout {
  double seconds = 0;
  double named_s = 0;
  ChildTimeout(double s = 0) : seconds(s) {}  // NOLINT(google-explicit-constructor): a double is seconds
  // `budget_s` left of a limit of `limit_s`, which the message names.
  static ChildTimeout remaining(double budget_s, double limit_s) {
    ChildTimeout t(budget_s);
    t.named_s = limit_s;
    return t;
  }
  double named() const { return named_s > 0 ? named_s : seconds; }
};

// Runs every job in a child, up to `jobs` at once (clamped to 1 ..
// kMaxJobs), each read by a reader from make_reader; their outcomes in
// order. timeouts[i] ends job i's child (ChildTimeout). `on_done(done,
// total)` is called after each completion.
std::vector<Outcome> run_children(const std::vector<Producer>& produce,
                                  const std::vector<ChildTimeout>& timeouts, int jobs,
                                  const std::function<std::unique_ptr<ResultReader>()>& make_reader,
                                  const std::function<void(size_t, size_t)>& on_done);

// Any function in a forked child, its JSON result returned (or
// {"error": ...} if the child crashed). For measurements that need a
// fresh process, such as the SystemC ceiling benchmark, or a mesh run.
// A timeout ends the child ({"error": "timed out after N s"}, ChildTimeout).
nlohmann::json run_function_isolated(const std::function<nlohmann::json()>& f, ChildTimeout timeout = {});

// "1.5": seconds as the timeout messages write them.
std::string seconds_text(double s);

}  // namespace kb
