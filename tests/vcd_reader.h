// A small VCD reader for tests: the IEEE 1364 subset that SystemC writes
// (scopes, vars, scalar and vector value changes). Throws
// std::runtime_error on anything else.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kb::test {

struct Vcd {
  std::string timescale;                 // e.g. "1 ps"
  std::set<std::string> scopes;          // dotted paths: "SystemC.pe.pe_cpu"
  std::map<std::string, int> widths;     // var path -> width
  // var path -> value changes (time, value), initial dump at time 0 first
  std::map<std::string, std::vector<std::pair<uint64_t, uint64_t>>> changes;
  uint64_t last_time = 0;
};

inline Vcd parse_vcd(const std::string& text) {
  Vcd v;
  std::istringstream in(text);
  std::vector<std::string> scope;
  std::map<std::string, std::string> path_of;  // identifier -> path
  std::string tok;
  bool definitions = true;
  uint64_t now = 0;
  auto expect_end = [&](std::vector<std::string>* words) {
    for (std::string w; in >> w;) {
      if (w == "$end") return;
      if (words) words->push_back(w);
    }
    throw std::runtime_error("VCD: missing $end");
  };
  auto record = [&](const std::string& id, uint64_t value) {
    const auto it = path_of.find(id);
    if (it == path_of.end()) throw std::runtime_error("VCD: unknown identifier " + id);
    auto& ch = v.changes[it->second];
    if (!ch.empty() && ch.back().first == now) ch.back().second = value;
    else ch.emplace_back(now, value);
  };
  while (in >> tok) {
    if (definitions) {
      if (tok == "$timescale") {
        std::vector<std::string> w;
        expect_end(&w);
        for (const std::string& s : w) v.timescale += (v.timescale.empty() ? "" : " ") + s;
      } else if (tok == "$scope") {
        std::vector<std::string> w;
        expect_end(&w);
        if (w.size() != 2) throw std::runtime_error("VCD: bad $scope");
        scope.push_back(w[1]);
        std::string p;
        for (const std::string& s : scope) p += (p.empty() ? "" : ".") + s;
        v.scopes.insert(p);
      } else if (tok == "$upscope") {
        expect_end(nullptr);
        if (scope.empty()) throw std::runtime_error("VCD: $upscope without $scope");
        scope.pop_back();
      } else if (tok == "$var") {
        std::vector<std::string> w;  // type width id name [range]
        expect_end(&w);
        if (w.size() < 4) throw std::runtime_error("VCD: bad $var");
        std::string p;
        for (const std::string& s : scope) p += s + ".";
        p += w[3];
        path_of[w[2]] = p;
        v.widths[p] = std::stoi(w[1]);
      } else if (tok == "$enddefinitions") {
        expect_end(nullptr);
        if (!scope.empty()) throw std::runtime_error("VCD: unclosed $scope");
        definitions = false;
      } else if (tok[0] == '$') {
        expect_end(nullptr);  // $date, $version, $comment
      } else {
        throw std::runtime_error("VCD: unexpected '" + tok + "' in the header");
      }
      continue;
    }
    if (tok == "$dumpvars" || tok == "$end") continue;
    if (tok == "$comment") {
      expect_end(nullptr);
      continue;
    }
    if (tok[0] == '#') {
      const uint64_t t = std::stoull(tok.substr(1));
      if (t < now) throw std::runtime_error("VCD: time goes backwards at " + tok);
      now = t;
      v.last_time = t;
    } else if (tok[0] == 'b' || tok[0] == 'B') {
      std::string id;
      if (!(in >> id)) throw std::runtime_error("VCD: vector value without identifier");
      record(id, std::stoull(tok.substr(1), nullptr, 2));
    } else if (tok[0] == '0' || tok[0] == '1') {
      record(tok.substr(1), uint64_t(tok[0] - '0'));
    } else {
      throw std::runtime_error("VCD: unexpected value '" + tok + "'");
    }
  }
  if (definitions) throw std::runtime_error("VCD: no $enddefinitions");
  return v;
}

}  // namespace kb::test
