#include "profile/compare_html.hpp"

#include <nlohmann/json.hpp>

#include "profile/html_escape.hpp"
#include "profile/timeline_html.hpp"
#include "profile/web_page.hpp"

// The page parts, compiled in from src/profile/web/ (src/profile/CMakeLists.txt).
namespace tilevit::profile::web {
extern const std::string_view compare_html, compare_css, columns_js, compare_data_js, compare_draw_js, compare_tables_js,
    compare_ui_js;
}

namespace tilevit::profile {

std::string render_compare_html(const Profile& a, const Profile& b, const std::string& name_a, const std::string& name_b) {
  const CompareReport report = compare_profiles(a, b);
  nlohmann::json data = to_json(report, SIZE_MAX);
  data["schema_version"] = 1;
  data["names"] = {{"a", name_a}, {"b", name_b}};
  data["sides"] = compare_sides_json(a, b);
  nlohmann::json flame = nlohmann::json::array();
  for (const FlameDiffRow& f : report.flame)
    flame.push_back({{"kind", f.kind}, {"kernel", f.kernel}, {"phase", f.phase}, {"operation", f.operation},
                     {"a", f.cycles_a}, {"b", f.cycles_b}});
  data["flame"] = std::move(flame);
  data["peaks_a"] = report.peaks_a;
  data["peaks_b"] = report.peaks_b;

  std::string page(web::compare_html);
  std::string script;
  for (const auto part : {web::columns_js, web::compare_data_js, web::compare_draw_js, web::compare_tables_js, web::compare_ui_js})
    script += std::string(part) + "\n";
  fill(page, "TITLE", html_escape("tilevit compare: " + a.model + " on " + a.machine_name + " vs " + b.model + " on " +
                                  b.machine_name));
  fill(page, "STYLE", "<style>\n" + std::string(web::compare_css) + "</style>");
  fill(page, "DATA", "<script id=\"compare-data\" type=\"application/json\">" + script_safe_json(data) + "</script>\n" +
                         "<script id=\"tilevit-data-a\" type=\"application/json\">" +
                         script_safe_json(timeline_data_json(a, peaks_of(a))) + "</script>\n" +
                         "<script id=\"tilevit-data-b\" type=\"application/json\">" +
                         script_safe_json(timeline_data_json(b, peaks_of(b))) + "</script>");
  fill(page, "SCRIPT", "<script>\n" + script + "</script>");
  return page;
}

}  // namespace tilevit::profile
