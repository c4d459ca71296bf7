#include "tb/replay/stream_text.h"

#include <charconv>
#include <cstdio>
#include <variant>

#include "models/util/overloaded.h"

namespace kb::cmdstream {

namespace {

bool needs_escape(unsigned char c, bool extra_name) {
  return c <= 0x20 || c == 0x7f || c == '%' || c == '=' || c == '"' || (extra_name && c == ':');
}

std::string extra_text(const Extra& e) {
  std::string s = "extra=" + encode(e.name, true) + ":";
  std::visit(overloaded{[&](bool b) { s += b ? "bool:1" : "bool:0"; },
                        [&](int64_t i) { s += "int:" + std::to_string(i); },
                        [&](double d) { s += "float:" + float_text(d); },
                        [&](const std::vector<int64_t>& v) {
                          s += "ints:";
                          for (size_t i = 0; i < v.size(); ++i)
                            s += (i ? "," : "") + std::to_string(v[i]);
                        },
                        [&](const std::string& str) { s += "str:" + encode(str); }},
             e.value);
  return s;
}

}  // namespace

std::string encode(const std::string& s, bool extra_name) {
  if (s.empty()) return "\"\"";
  std::string out;
  for (unsigned char c : s) {
    if (needs_escape(c, extra_name)) {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  return out;
}

std::string encode_operand(const std::string& s) {
  std::string e = encode(s);
  if (s == "out" || s == "extra") {
    char buf[4];
    std::snprintf(buf, sizeof buf, "%%%02X", (unsigned char)s[0]);
    e = buf + s.substr(1);
  }
  return e;
}

bool decode(const std::string& s, std::string* out) {
  out->clear();
  if (s == "\"\"") return true;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out->push_back(s[i]);
      continue;
    }
    unsigned v = 0;
    if (i + 2 >= s.size()) return false;
    const auto r = std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16);
    if (r.ec != std::errc() || r.ptr != s.data() + i + 3) return false;
    out->push_back(char(v));
    i += 2;
  }
  return true;
}

std::string float_text(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest exact form
  return std::string(buf, r.ptr);
}

std::string extras_text(const Extras& extras) {
  std::string s;
  for (const Extra& e : extras) s += " " + extra_text(e);
  return s;
}

std::string shorten(std::string_view s, size_t max) {
  if (s.size() <= max) return std::string(s);
  return std::string(s.substr(0, max)) + "... (" + std::to_string(s.size()) + " bytes)";
}

}  // namespace kb::cmdstream
