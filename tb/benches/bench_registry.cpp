#include "tb/benches/bench_registry.h"

#include "models/trace/stats.h"

#include <algorithm>

namespace kb {

BenchRegistry& BenchRegistry::instance() {
  static BenchRegistry r;
  return r;
}

void BenchRegistry::add(Bench b) {
  benches_.push_back(std::move(b));
  std::sort(benches_.begin(), benches_.end(),
            [](const Bench& x, const Bench& y) { return x.name < y.name; });
}

const Bench& BenchRegistry::get(const std::string& name) const {
  for (const Bench& b : benches_)
    if (b.name == name) return b;
  std::string names;
  for (const Bench& b : benches_) names += (names.empty() ? "" : ", ") + b.name;
  throw BenchError("unknown bench '" + name + "' (known: " + names + ")");
}

BenchParams BenchRegistry::params(const Bench& b, const std::vector<std::string>& overrides) const {
  std::map<std::string, std::string> v;
  for (const BenchParam& p : b.params) v[p.name] = p.default_value;
  for (const std::string& o : overrides) {
    const auto eq = o.find('=');
    if (eq == std::string::npos) {
      throw BenchError("--param " + o + ": expected NAME=VALUE");
    }
    const std::string name = o.substr(0, eq);
    if (!v.count(name)) {
      std::string names;
      for (const BenchParam& p : b.params) names += (names.empty() ? "" : ", ") + p.name;
      throw BenchError("--param " + o + ": bench '" + b.name + "' has no parameter '" + name +
                       "' (parameters: " + names + ")");
    }
    v[name] = o.substr(eq + 1);
  }
  return BenchParams(b.name, std::move(v));
}

int64_t BenchParams::integer(const std::string& name) const {
  const std::string& s = values_.at(name);
  size_t used = 0;
  long long x = 0;
  try {
    x = std::stoll(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != s.size() || s.empty() || x <= 0) {
    throw BenchError("bench '" + bench_ + "' parameter " + name + "=" + s +
                     ": expected a positive integer");
  }
  return x;
}

std::vector<std::string> BenchParams::words(const std::string& name) const {
  std::vector<std::string> out;
  const std::string& all = values_.at(name);
  size_t start = 0;
  while (start <= all.size()) {
    const size_t comma = std::min(all.find(',', start), all.size());
    std::string w = all.substr(start, comma - start);
    if (std::find(out.begin(), out.end(), w) != out.end()) {
      throw BenchError("bench '" + bench_ + "' parameter " + name + ": '" + w +
                       "' is listed twice; expected distinct values");
    }
    out.push_back(std::move(w));
    if (out.size() > kMaxListValues) {
      throw BenchError("bench '" + bench_ + "' parameter " + name + ": more than " + std::to_string(kMaxListValues) +
                       " values; split the list over several runs or a sweep");
    }
    start = comma + 1;
  }
  return out;
}

std::vector<int64_t> BenchParams::integers(const std::string& name) const {
  std::vector<int64_t> out;
  for (const std::string& w : words(name)) {
    const int64_t v = BenchParams(bench_, {{name, w}}).integer(name);
    if (std::find(out.begin(), out.end(), v) != out.end()) {  // "64" and "064"
      throw BenchError("bench '" + bench_ + "' parameter " + name + ": " + std::to_string(v) +
                       " is listed twice; expected distinct values");
    }
    out.push_back(v);
  }
  return out;
}

nlohmann::json bench_figures(const Bench& b, const BenchParams& p, const PeConfig& cfg,
                             const RunResult& r) {
  if (b.figures) return b.figures(p, cfg, r);
  nlohmann::json j;
  for (const LaunchResult& l : r.launches) j[l.kernel] = launch_figures(l, cfg);
  return j;
}

void SystemOutputs::apply(MeshRunSpec& spec) const {
  spec.oplog_path = oplog;
  spec.trace_path = trace;
  spec.trace_window = trace_window;
  spec.vcd_path = vcd;
  spec.stats_path = stats;
  apply_limits(spec);
}

void SystemOutputs::apply_limits(MeshRunSpec& spec) const {
  spec.max_memory_bytes = max_memory_bytes;
  spec.timeout_s = timeout_s;
  if (timeout_s > 0) {
    spec.deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                std::chrono::duration<double>(timeout_s));
  }
}

std::string BenchParams::text(const std::string& name) const { return values_.at(name); }

Dtype BenchParams::dtype(const std::string& name) const {
  Dtype d;
  if (!dtype_from_string(values_.at(name), &d)) {
    throw BenchError("bench '" + bench_ + "' parameter " + name + "=" + values_.at(name) +
                     ": expected fp32, bf16, fp16 or int8");
  }
  return d;
}

}  // namespace kb
