#pragma once
// The parts the viewer pages share: JSON safe inside a <script> element and the
// template markers "<!--TILEVIT:name-->" of src/profile/web/*.html.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "support/error.hpp"

namespace tilevit::profile {

// Inside <script>, "</script" (any case) would end the element: JSON may write '<' as
// \u003c in strings, and it is the only place a '<' can occur in JSON text.
inline std::string script_safe_json(const nlohmann::json& j) {
  const std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    if (c == '<') out += "\\u003c";
    else out += c;
  }
  return out;
}

// Replaces the one "<!--TILEVIT:name-->" marker of a page template.
inline void fill(std::string& page, std::string_view name, std::string_view text) {
  const std::string marker = "<!--TILEVIT:" + std::string(name) + "-->";
  const auto at = page.find(marker);
  if (at == std::string::npos) throw Error("page template has no " + marker, kExitInternal);
  page.replace(at, marker.size(), text);
}

}  // namespace tilevit::profile
