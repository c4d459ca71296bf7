// Reads a flat JSON array of a struct's fields in order: the compact form a
// result takes across the fork (tb/run/isolated.h), where a keyed object per
// element would spend most of the transport on its keys.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace kb {

class JsonFields {
 public:
  explicit JsonFields(const nlohmann::json& j) : j_(j) {
    if (!j.is_array()) throw std::runtime_error("expected an array of fields");
  }
  const nlohmann::json& next() { return j_.at(i_++); }
  // Every field was read: a longer array is refused, not partly taken.
  void end() const {
    if (i_ != j_.size()) {
      throw std::runtime_error(std::to_string(j_.size()) + " fields where " + std::to_string(i_) +
                               " were expected");
    }
  }

 private:
  const nlohmann::json& j_;
  size_t i_ = 0;
};

}  // namespace kb
