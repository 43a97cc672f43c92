#pragma once
// Text placed in HTML (element content or a double-quoted attribute) by the standalone
// pages: the timeline viewer and the sweep's Pareto chart.
#include <string>
#include <string_view>

namespace tilevit::profile {

inline std::string html_escape(std::string_view text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace tilevit::profile
