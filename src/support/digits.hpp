#pragma once
// Numbers as reports print them: thousands separated by commas, and shares as percentages
// that never round a non-zero part away (so "100.0%" always means all of it).
#include <cstdint>
#include <cstdio>
#include <string>

namespace tilevit {

inline std::string with_commas(std::uint64_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return s;
}

// part / whole as "98.7%", with "<0.1%" and ">99.9%" where one decimal would read 0 or 100
// although the part is neither none nor all; "100.0%" for an empty whole.
inline std::string percent_text(std::uint64_t part, std::uint64_t whole) {
  if (whole == 0 || part >= whole) return "100.0%";
  if (part == 0) return "0.0%";
  const double share = 100.0 * static_cast<double>(part) / static_cast<double>(whole);
  if (share < 0.05) return "<0.1%";
  if (share >= 99.95) return ">99.9%";
  char text[16];
  std::snprintf(text, sizeof text, "%.1f%%", share);
  return text;
}

}  // namespace tilevit
