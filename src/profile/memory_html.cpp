// memory.html: the page template (web/memory.html, embedded at build time) with the map
// as compact columnar JSON (made at this file edge by to_columnar_json) in place of its
// data marker.
#include "profile/memory_html.hpp"

#include <string_view>

#include "profile/memory_map_json.hpp"
#include "profile/web_page.hpp"
#include "support/error.hpp"

namespace tilevit::profile {
namespace web {
extern const std::string_view memory_html, memory_time_js;  // generated: src/profile/CMakeLists.txt
}

namespace {

constexpr std::string_view kMarker = "/*TILEVIT_MEMORY_DATA*/";

// '<' only occurs inside JSON strings, where \u003c means the same; so no "</script>"
// or "<!--" in a label can end the data block early.
std::string script_safe(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (const char c : json)
    if (c == '<') out += "\\u003c";
    else out += c;
  return out;
}

}  // namespace

std::string render_memory_html(const MemoryMap& map) {
  const std::string data = to_columnar_json(map);
  const std::string_view page = web::memory_html;
  const std::size_t at = page.find(kMarker);
  if (at == std::string_view::npos) throw Error("memory.html template has no data marker", kExitInternal);
  std::string out;
  out.reserve(page.size() + data.size());
  out.append(page.substr(0, at));
  out += script_safe(data);
  out.append(page.substr(at + kMarker.size()));
  fill(out, "TIME_DATA", "<script id=\"memory-time\" type=\"application/json\">" + script_safe_json(over_time_json(map)) + "</script>");
  fill(out, "TIME_SCRIPT", "<script>\n" + std::string(web::memory_time_js) + "</script>");
  return out;
}

}  // namespace tilevit::profile
