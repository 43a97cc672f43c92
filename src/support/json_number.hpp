#pragma once
// Numbers read from JSON files a user hands us. nlohmann's get<int>() casts whatever it
// holds (1e300, -1, 2^64-1) without a check, which wraps silently or is undefined
// behaviour; these read a number only when it is exactly representable in the target
// type and inside [min, max], and otherwise throw an Error naming the field.
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "support/error.hpp"

namespace tilevit {

// A value as a message shows it: numbers as written, anything else by its type only.
inline std::string json_value_text(const nlohmann::json& value) {
  return value.is_number() ? value.dump() : std::string(value.type_name());
}

// An integer JSON number (not 3.0, not 1e300) in [min, max].
template <typename T>
T json_integer(const nlohmann::json& value, std::string_view field, T min = std::numeric_limits<T>::min(),
               T max = std::numeric_limits<T>::max()) {
  static_assert(std::is_integral_v<T> && sizeof(T) <= 8);
  bool ok = false;
  if (value.is_number_unsigned()) {
    const std::uint64_t v = value.get<std::uint64_t>();
    ok = (min < 0 || v >= static_cast<std::uint64_t>(min)) && (max >= 0 && v <= static_cast<std::uint64_t>(max));
  } else if (value.is_number_integer()) {  // negative: nlohmann stores non-negative values as unsigned
    const std::int64_t v = value.get<std::int64_t>();
    ok = min < 0 && v >= static_cast<std::int64_t>(min) && (max < 0 ? v <= static_cast<std::int64_t>(max) : true);
  }
  if (!ok)
    throw Error(std::string(field) + ": expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) +
                "], got " + json_value_text(value));
  return value.is_number_unsigned() ? static_cast<T>(value.get<std::uint64_t>()) : static_cast<T>(value.get<std::int64_t>());
}

// A finite JSON number that fits a float (or a double) without becoming infinite.
template <typename T>
T json_real(const nlohmann::json& value, std::string_view field) {
  static_assert(std::is_floating_point_v<T>);
  const double v = value.is_number() ? value.get<double>() : std::numeric_limits<double>::quiet_NaN();
  if (!std::isfinite(v) || std::abs(v) > static_cast<double>(std::numeric_limits<T>::max()))
    throw Error(std::string(field) + ": expected a finite number, got " + json_value_text(value));
  return static_cast<T>(v);
}

}  // namespace tilevit
