// The memory map as JSON: memory.json and memory.html's columnar data (memory_map_json.hpp).
#include "profile/memory_map_json.hpp"

#include <charconv>
#include <cstdio>

#include "support/error.hpp"

namespace tilevit::profile {
namespace {

using nlohmann::json;

std::string hex(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%X", v);
  return buf;
}

json kinds_json() {
  json kinds = json::array();
  for (std::size_t k = 0; k < kMemoryKindCount; ++k)
    kinds.push_back(std::string(to_string(static_cast<MemoryKind>(k))));
  return kinds;
}

std::string allocation_kind_name(std::size_t kind) {
  return std::string(compiler::to_string(static_cast<compiler::AllocationKind>(kind)));
}

json regions_json(const MemoryMap& map) {
  json regions = json::array();
  for (const auto& g : map.regions) regions.push_back({{"name", g.name}, {"start", g.start}, {"end", g.end}});
  return regions;
}

json reserved_json(const MemoryMap& map) {
  json reserved = json::array();
  for (const auto& [r, active] : map.reserved)
    reserved.push_back({{"name", r.name},
                        {"kind", std::string(target::to_string(r.kind))},
                        {"start", r.start},
                        {"end", r.end()},
                        {"when", std::string(target::to_string(r.when))},
                        {"active", active}});
  return reserved;
}

// The scalar summary fields, in the order of memory.html's summary table columns (the
// table then has one column per allocation kind for bytes_by_kind).
struct SummaryField {
  const char* name;
  json (*value)(const MemoryTileSummary&);
};
constexpr SummaryField kSummaryFields[] = {
    {"allocations", [](const MemoryTileSummary& s) { return json(s.allocations); }},
    {"capacity", [](const MemoryTileSummary& s) { return json(s.capacity); }},
    {"peak_bytes", [](const MemoryTileSummary& s) { return json(s.peak_bytes); }},
    {"peak_phase", [](const MemoryTileSummary& s) { return json(s.peak_phase); }},
    {"free_at_peak", [](const MemoryTileSummary& s) { return json(s.free_at_peak); }},
    {"largest_hole", [](const MemoryTileSummary& s) { return json(s.largest_hole); }},
    {"high_water", [](const MemoryTileSummary& s) { return json(s.high_water); }},
    {"fragmentation", [](const MemoryTileSummary& s) { return json(s.fragmentation); }},
    {"padding_bytes", [](const MemoryTileSummary& s) { return json(s.padding_bytes); }},
};

json summary_json(const MemoryTileSummary& summary) {
  json out = json::object();
  for (const SummaryField& f : kSummaryFields) out[f.name] = f.value(summary);
  json by_kind = json::object();
  for (std::size_t k = 0; k < compiler::kAllocationKinds; ++k)
    by_kind[allocation_kind_name(k)] = summary.bytes_by_kind[k];
  out["bytes_by_kind"] = std::move(by_kind);
  return out;
}

json tile_json(const MemoryTile& tile) {
  json entries = json::array();
  for (const MemoryEntry& e : tile.entries)
    entries.push_back({{"start", e.start},
                       {"end", e.end},
                       {"payload_end", e.payload_end},
                       {"label", e.label},
                       {"kind", std::string(to_string(e.kind))},
                       {"first", e.first},
                       {"last", e.last},
                       {"shards", e.shards}});
  return {{"logical", tile.logical},
          {"physical", {{"row", tile.row}, {"column", tile.column}}},
          {"allocations", std::move(entries)},
          {"summary", summary_json(tile.summary)}};
}

// Appends integers as a JSON array without building a json tree.
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

// memory.html's summary table: one row per tile.
json summary_table(const MemoryMap& map) {
  json names = json::array(), rows = json::array();
  for (const SummaryField& f : kSummaryFields) names.push_back(f.name);
  for (std::size_t k = 0; k < compiler::kAllocationKinds; ++k) names.push_back(allocation_kind_name(k));
  for (const MemoryTile& tile : map.tiles) {
    json row = json::array();
    for (const SummaryField& f : kSummaryFields) row.push_back(f.value(tile.summary));
    for (const std::uint32_t bytes : tile.summary.bytes_by_kind) row.push_back(bytes);
    rows.push_back(std::move(row));
  }
  return {{"columns", std::move(names)}, {"rows", std::move(rows)}};
}

std::string tile_columns(const MemoryMap& map) {
  Column logical, row, column;
  for (const MemoryTile& tile : map.tiles) {
    logical.push(tile.logical);
    row.push(tile.row);
    column.push(tile.column);
  }
  return "{\"logical\":" + logical.json() + ",\"row\":" + row.json() + ",\"column\":" + column.json() + "}";
}

// Entry fields as columns, addresses relative to the map's start; tile t's entries are
// offset[t] .. offset[t+1]-1.
std::string entry_columns(const MemoryMap& map) {
  Column offset, start, payload, tail, label, kind, first, last, shards;
  std::uint64_t count = 0;
  offset.push(0);
  for (const MemoryTile& tile : map.tiles) {
    for (const MemoryEntry& e : tile.entries) {
      if (e.start < map.start || e.end > map.end || e.payload_end < e.start || e.payload_end > e.end)
        throw Error("memory map: allocation [" + std::to_string(e.start) + ", " + std::to_string(e.end) +
                    ") of tile " + std::to_string(tile.logical) + " outside the map or inconsistent");
      start.push(e.start - map.start);
      payload.push(e.payload_end - e.start);
      tail.push(e.end - e.payload_end);
      label.push(e.label);
      kind.push(static_cast<std::uint64_t>(e.kind));  // index into kinds
      first.push(e.first);
      last.push(e.last);
      shards.push(e.shards);
      ++count;
    }
    offset.push(count);
  }
  return "{\"offset\":" + offset.json() + ",\"start\":" + start.json() + ",\"payload\":" + payload.json() +
         ",\"tail\":" + tail.json() + ",\"label\":" + label.json() + ",\"kind\":" + kind.json() +
         ",\"first\":" + first.json() + ",\"last\":" + last.json() + ",\"shards\":" + shards.json() + "}";
}

}  // namespace

// Memory over time (memory_over_time.hpp): per step by purpose, the peak and what makes it.
json over_time_json(const MemoryMap& map) {
  const MemoryOverTime& m = map.over_time;
  json purposes = json::array(), largest = json::array();
  for (const char* name : kMemoryPurposeNames) purposes.push_back(name);
  for (const MemoryAtPeak& a : m.largest)
    largest.push_back({{"label", a.label}, {"name", a.label < map.labels.size() ? map.labels[a.label] : std::string()}, {"purpose", kMemoryPurposeNames[std::size_t(a.purpose)]}, {"bytes", a.bytes}, {"start", a.start}});
  return {{"purposes", std::move(purposes)},
          {"fullest_tile", m.fullest_tile},
          {"step_labels", m.step_labels},
          {"fullest", m.fullest},
          {"chip", m.chip},
          {"peak",
           {{"step", m.peak_step},
            {"phase", m.peak_phase},
            {"label", m.peak_step < m.step_labels.size() ? m.step_labels[m.peak_step] : std::string()},
            {"bytes", m.peak_bytes},
            {"largest", std::move(largest)}}}};
}

json to_json(const MemoryMap& map) {
  json tiles = json::array();
  for (const MemoryTile& tile : map.tiles) tiles.push_back(tile_json(tile));
  json out;
  out["schema_version"] = kMemoryMapSchemaVersion;
  out["machine"] = {{"name", map.machine.name},
                    {"tiles", map.machine.tiles},
                    {"rows", map.machine.rows},
                    {"columns", map.machine.columns},
                    {"sram_base", hex(map.start)},
                    {"sram_end", hex(map.end)}};
  if (map.stage) {  // absent for a one-chip package: its memory.json keeps its form
    out["stage"] = map.stage->index;
    out["stages"] = map.stage->count;
  }
  out["profiling"] = map.profiling;
  out["start"] = map.start;
  out["end"] = map.end;
  out["steps"] = map.steps;
  out["loop"] = {{"begin", map.loop.begin}, {"end", map.loop.end}, {"count", map.loop.count}};
  out["kinds"] = kinds_json();
  out["regions"] = regions_json(map);
  out["reserved"] = reserved_json(map);
  out["program_allocations"] = map.program_allocations;
  out["entries"] = map.entry_count();
  out["labels"] = map.labels;
  out["over_time"] = over_time_json(map);
  out["tiles"] = std::move(tiles);
  return out;
}

std::string to_columnar_json(const MemoryMap& map) {
  if (map.end <= map.start)
    throw Error("memory map: empty SRAM range [" + std::to_string(map.start) + ", " + std::to_string(map.end) + ")");
  const json head = {{"machine", map.machine.name},
                     {"subject", map_subject(map)},
                     {"start", map.start},
                     {"end", map.end},
                     {"steps", map.steps},
                     {"profiling", map.profiling},
                     {"regions", regions_json(map)},
                     {"kinds", kinds_json()},
                     {"labels", map.labels},
                     {"summary", summary_table(map)}};
  std::string data = head.dump();  // an object: append the columnar parts before its '}'
  data.pop_back();
  data += ",\"tiles\":" + tile_columns(map) + ",\"alloc\":" + entry_columns(map) + "}";
  return data;
}

}  // namespace tilevit::profile
