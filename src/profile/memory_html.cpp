// memory.html: the page template (web/memory.html, embedded at build time) with the map
// as compact columnar JSON in place of its data marker.
#include "profile/memory_html.hpp"

#include <charconv>
#include <string_view>

#include "profile/memory_map.hpp"
#include "support/error.hpp"

namespace tilevit::profile {
namespace web {
extern const std::string_view memory_html;  // generated: src/profile/CMakeLists.txt
}

namespace {

constexpr std::string_view kMarker = "/*TILEVIT_MEMORY_DATA*/";

// Appends integers as a JSON array without building a json tree (120K allocations x 9
// columns would be a million nodes).
class Column {
 public:
  void push(std::uint64_t v) {
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    if (!text_.empty()) text_ += ',';
    text_.append(buf, r.ptr);
  }
  std::string json() const { return "[" + text_ + "]"; }

 private:
  std::string text_;
};

std::uint64_t field(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number_unsigned())
    throw Error(std::string("memory map: missing or negative field '") + key + "'");
  return it->get<std::uint64_t>();
}

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

std::string render_memory_html(const nlohmann::json& map) {
  using nlohmann::json;
  if (!map.is_object() || map.value("schema_version", 0) != kMemoryMapSchemaVersion)
    throw Error("memory map: not a memory map with schema_version " + std::to_string(kMemoryMapSchemaVersion));
  const std::uint64_t start = field(map, "start"), end = field(map, "end");
  const json& tiles = map.at("tiles");
  json kinds = json::array();
  for (const char* k : kMemoryKinds) kinds.push_back(k);

  Column offset, a_start, payload, tail, label, kind, first, last, shards;
  Column logical, row, column;
  const char* summary_columns[] = {"allocations", "capacity",   "peak_bytes", "peak_step",   "free_at_peak",
                                   "largest_hole", "high_water", "fragmentation", "padding_bytes"};
  json summary_names = json::array(), summary_rows = json::array();
  for (const char* c : summary_columns) summary_names.push_back(c);
  for (const char* k : {"parameter", "activation", "scratch", "support"}) summary_names.push_back(k);
  std::uint64_t count = 0;
  offset.push(0);
  for (const json& tile : tiles) {
    logical.push(field(tile, "logical"));
    const json& physical = tile.at("physical");
    row.push(field(physical, "row"));
    column.push(field(physical, "column"));
    for (const json& a : tile.at("allocations")) {
      const std::uint64_t s = field(a, "start"), e = field(a, "end"), p = field(a, "payload_end");
      if (s < start || e > end || p < s || p > e)
        throw Error("memory map: allocation [" + std::to_string(s) + ", " + std::to_string(e) + ") of tile " +
                    std::to_string(field(tile, "logical")) + " outside the map or inconsistent");
      a_start.push(s - start);
      payload.push(p - s);
      tail.push(e - p);
      label.push(field(a, "label"));
      const std::string& k = a.at("kind").get_ref<const std::string&>();
      std::uint64_t index = 3;  // unknown kinds draw as padding
      for (std::size_t i = 0; i < kMemoryKindCount; ++i)
        if (k == kMemoryKinds[i]) index = i;
      kind.push(index);
      first.push(field(a, "first"));
      last.push(field(a, "last"));
      shards.push(a.value("shards", std::uint64_t{1}));
      ++count;
    }
    offset.push(count);
    const json& s = tile.at("summary");
    json r = json::array();
    for (const char* c : summary_columns) r.push_back(s.value(c, json(0)));
    const json& by_kind = s.value("bytes_by_kind", json::object());
    for (const char* k : {"parameter", "activation", "scratch", "support"}) r.push_back(by_kind.value(k, json(0)));
    summary_rows.push_back(std::move(r));
  }

  const json& machine = map.value("machine", json::object());
  json head = {{"machine", machine.value("name", std::string("?"))},
               {"start", start},
               {"end", end},
               {"steps", map.value("steps", 0)},
               {"profiling", map.value("profiling", false)},
               {"regions", map.value("regions", json::array())},
               {"kinds", kinds},
               {"labels", map.at("labels")},
               {"summary", {{"columns", summary_names}, {"rows", summary_rows}}}};
  std::string data = head.dump();  // an object: append the columnar parts before its '}'
  data.pop_back();
  data += ",\"tiles\":{\"logical\":" + logical.json() + ",\"row\":" + row.json() + ",\"column\":" + column.json() + "}";
  data += ",\"alloc\":{\"offset\":" + offset.json() + ",\"start\":" + a_start.json() + ",\"payload\":" + payload.json() +
          ",\"tail\":" + tail.json() + ",\"label\":" + label.json() + ",\"kind\":" + kind.json() +
          ",\"first\":" + first.json() + ",\"last\":" + last.json() + ",\"shards\":" + shards.json() + "}}";

  const std::string_view page = web::memory_html;
  const std::size_t at = page.find(kMarker);
  if (at == std::string_view::npos) throw Error("memory.html template has no data marker", kExitInternal);
  std::string out;
  out.reserve(page.size() + data.size());
  out.append(page.substr(0, at));
  out += script_safe(data);
  out.append(page.substr(at + kMarker.size()));
  return out;
}

}  // namespace tilevit::profile
