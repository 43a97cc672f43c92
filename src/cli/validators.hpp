#pragma once
// Command-line value checks that CLI11 does not make: an empty value is never a number,
// a seed is an unsigned 64-bit integer (no "-1" wrapping to 2^64-1, no saturation),
// a real number must be finite and inside its range (NaN passes CLI::Range).
#include <CLI/CLI.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

namespace tilevit::cli {

inline CLI::Validator non_empty_value() {
  return CLI::Validator([](std::string& s) { return s.empty() ? std::string("empty value") : std::string(); }, "");
}

// Every option of `app` and its subcommands that takes a value rejects "".
inline void reject_empty_values(CLI::App& app) {
  for (CLI::Option* o : app.get_options())
    if (o->get_type_size_max() > 0) o->check(non_empty_value());
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) reject_empty_values(*sub);
}

inline CLI::Validator unsigned_64() {
  return CLI::Validator(
      [](std::string& s) {
        std::uint64_t v = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec != std::errc() || end != s.data() + s.size())
          return "'" + s + "': expected an integer in [0, 18446744073709551615]";
        return std::string();
      },
      "UINT64");
}

// A finite real in [lo, hi], or (lo, hi] when `lo_open`.
inline CLI::Validator finite_real(double lo, double hi, bool lo_open = false) {
  const std::string range = (lo_open ? "(" : "[") + CLI::detail::to_string(lo) + ", " + CLI::detail::to_string(hi) + "]";
  return CLI::Validator(
      [=](std::string& s) {
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        const bool inside = lo_open ? v > lo && v <= hi : v >= lo && v <= hi;
        if (s.empty() || *end != '\0' || !std::isfinite(v) || !inside)
          return "'" + s + "': expected a finite number in " + range;
        return std::string();
      },
      "REAL in " + range);
}

}  // namespace tilevit::cli
