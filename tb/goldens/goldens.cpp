#include "tb/goldens/goldens.h"

#include <fstream>

namespace kb {

std::string golden_path(const std::string& dir, const std::string& bench) {
  return dir + "/" + bench + ".json";
}

RunSpec golden_spec(const Bench& b) {
  RunSpec spec;
  spec.launches = b.launches(BenchRegistry::instance().params(b, b.golden_params), spec.config);
  return spec;
}

nlohmann::json golden_figures(const Bench& b, const RunResult& r) {
  if (!r.ok) throw BenchError("bench '" + b.name + "' failed: " + r.error);
  const PeConfig cfg;
  nlohmann::json j;
  j["bench"] = b.name;
  j["figures"] = bench_figures(b, BenchRegistry::instance().params(b, b.golden_params), cfg, r);
  return j;
}

nlohmann::json golden_run(const Bench& b) {
  if (!b.is_system()) return golden_figures(b, run_isolated(golden_spec(b)));
  nlohmann::json j;
  j["bench"] = b.name;
  j["figures"] = b.system(BenchRegistry::instance().params(b, b.golden_params), PeConfig{}, SystemOutputs{});
  return j;
}

std::vector<std::string> golden_diff(const nlohmann::json& expected, const nlohmann::json& actual,
                                     const std::string& path) {
  std::vector<std::string> out;
  if (expected.is_object() && actual.is_object()) {
    for (const auto& [key, value] : expected.items()) {
      const std::string p = path.empty() ? key : path + "." + key;
      if (!actual.contains(key)) {
        out.push_back(p + ": missing (expected " + value.dump() + ")");
        continue;
      }
      auto sub = golden_diff(value, actual.at(key), p);
      out.insert(out.end(), sub.begin(), sub.end());
    }
    for (const auto& [key, value] : actual.items()) {
      if (!expected.contains(key)) {
        out.push_back((path.empty() ? key : path + "." + key) + ": new (" + value.dump() + ")");
      }
    }
    return out;
  }
  if (expected != actual) {
    out.push_back(path + ": expected " + expected.dump() + ", got " + actual.dump());
  }
  return out;
}

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw BenchError("cannot open '" + path + "'");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw BenchError("'" + path + "' is not valid JSON: " + e.what());
  }
}

}  // namespace kb
