// The memory map of a tiny compile on the 16-tile test machine: the map's invariants,
// memory.json's schema (to_json), determinism, the PNG's geometry, and a standalone HTML
// page holding the data.
#include <gtest/gtest.h>
#include <png.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <set>

#include "compiler/compile.hpp"
#include "profile/memory_html.hpp"
#include "profile/memory_map.hpp"
#include "profile/memory_map_json.hpp"
#include "profile/memory_png.hpp"
#include "support/error.hpp"

using namespace tilevit;

namespace {

const compiler::CompiledModel& small_model() {
  static const compiler::CompiledModel m = [] {
    model::ViTConfig c = model::ViTConfig::small();
    c.layers = 2;
    return compiler::compile_model(compiler::build_vit_graph(c, model::NumericsConfig::uniform(-4)), target::test16(),
                                   {});
  }();
  return m;
}

const profile::MemoryMap& small_map() {
  static const profile::MemoryMap map =
      profile::build_memory_map(target::test16(), small_model().executable.program, false);
  return map;
}

const nlohmann::json& small_map_json() {
  static const nlohmann::json j = profile::to_json(small_map());
  return j;
}

std::set<std::string> keys_of(const nlohmann::json& object) {
  std::set<std::string> keys;
  for (const auto& [key, value] : object.items()) keys.insert(key);
  return keys;
}

struct Decoded {
  png_uint_32 width = 0, height = 0;
  bool ok = false;
};

Decoded decode_png(const std::vector<std::byte>& bytes) {
  Decoded d;
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&image, bytes.data(), bytes.size())) return d;
  image.format = PNG_FORMAT_RGB;
  std::vector<png_byte> pixels(PNG_IMAGE_SIZE(image));
  d.ok = png_image_finish_read(&image, nullptr, pixels.data(), 0, nullptr) != 0;
  d.width = image.width;
  d.height = image.height;
  png_image_free(&image);
  return d;
}

}  // namespace

TEST(memoryMap, SchemaAndEveryAllocationInsideSram) {
  const auto& j = small_map_json();
  const auto& m = target::test16();
  EXPECT_EQ(j["schema_version"], 3);
  EXPECT_EQ(j["start"], m.sram_base);
  EXPECT_EQ(j["end"], m.sram_end());
  ASSERT_EQ(j["tiles"].size(), m.tiles);
  EXPECT_EQ(j["regions"].size(), m.regions.size());
  const std::size_t labels = j["labels"].size();
  const std::set<std::string> kinds = {"parameter", "activation", "scratch", "padding", "support"};
  for (std::uint32_t t = 0; t < m.tiles; ++t) {
    const auto& tile = j["tiles"][t];
    EXPECT_EQ(tile["logical"], t);
    EXPECT_EQ(tile["physical"]["row"], t / m.columns);
    EXPECT_EQ(tile["physical"]["column"], t % m.columns);
    for (const auto& a : tile["allocations"]) {
      const std::uint32_t s = a["start"], e = a["end"], p = a["payload_end"];
      EXPECT_GE(s, m.sram_base);
      EXPECT_LE(e, m.sram_end());
      EXPECT_LT(s, p);
      EXPECT_LE(p, e);
      EXPECT_LT(e - p, 64u) << "alignment tails are shorter than any alignment";
      EXPECT_LT(a["label"].get<std::size_t>(), labels);
      EXPECT_TRUE(kinds.count(a["kind"].get<std::string>())) << a["kind"];
      EXPECT_LE(a["first"].get<std::uint32_t>(), a["last"].get<std::uint32_t>());
      EXPECT_GE(a["shards"].get<std::uint32_t>(), 1u);
    }
    const auto& s = tile["summary"];
    EXPECT_EQ(s["capacity"], m.free_bytes_per_tile(false));
    EXPECT_LE(s["peak_bytes"].get<std::uint32_t>(), s["capacity"].get<std::uint32_t>());
    EXPECT_LE(s["peak_bytes"].get<std::uint32_t>(), s["high_water"].get<std::uint32_t>());
  }
}

// to_json writes every field docs/MEMORY_MAP.md lists for schema_version 1, and no other,
// with the struct's values.
TEST(memoryMapJson, HasTheDocumentedSchemaFields) {
  const auto& map = small_map();
  const auto& j = small_map_json();
  using Keys = std::set<std::string>;
  EXPECT_EQ(keys_of(j), (Keys{"schema_version", "machine", "profiling", "start", "end", "steps", "loop", "kinds",
                              "regions", "reserved", "program_allocations", "entries", "labels", "over_time", "tiles"}));
  EXPECT_EQ(keys_of(j["machine"]), (Keys{"name", "tiles", "rows", "columns", "sram_base", "sram_end"}));
  EXPECT_EQ(j["machine"]["name"], map.machine.name);
  EXPECT_EQ(j["machine"]["sram_base"], "0x" + [&] {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%X", map.start);
    return std::string(buf);
  }());
  EXPECT_EQ(keys_of(j["loop"]), (Keys{"begin", "end", "count"}));
  EXPECT_EQ(j["loop"]["count"], map.loop.count);
  EXPECT_EQ(j["kinds"], nlohmann::json({"parameter", "activation", "scratch", "padding", "support"}));
  EXPECT_EQ(j["profiling"], false);
  EXPECT_EQ(j["steps"], map.steps);
  EXPECT_EQ(j["labels"], nlohmann::json(map.labels));
  ASSERT_FALSE(j["regions"].empty());
  for (const auto& r : j["regions"]) EXPECT_EQ(keys_of(r), (Keys{"name", "start", "end"}));
  ASSERT_EQ(j["reserved"].size(), target::test16().reserved.size());
  for (const auto& r : j["reserved"]) EXPECT_EQ(keys_of(r), (Keys{"name", "kind", "start", "end", "when", "active"}));
  const Keys entry_keys{"start", "end", "payload_end", "label", "kind", "first", "last", "shards"};
  const Keys summary_keys{"capacity",   "allocations",   "peak_bytes",    "peak_phase",   "free_at_peak",
                          "largest_hole", "high_water", "fragmentation", "padding_bytes", "bytes_by_kind"};
  for (std::size_t t = 0; t < map.tiles.size(); ++t) {
    const auto& tile = j["tiles"][t];
    EXPECT_EQ(keys_of(tile), (Keys{"logical", "physical", "allocations", "summary"}));
    EXPECT_EQ(keys_of(tile["physical"]), (Keys{"row", "column"}));
    EXPECT_EQ(keys_of(tile["summary"]), summary_keys);
    EXPECT_EQ(keys_of(tile["summary"]["bytes_by_kind"]), (Keys{"parameter", "activation", "scratch", "support"}));
    EXPECT_EQ(tile["summary"]["peak_bytes"], map.tiles[t].summary.peak_bytes);
    ASSERT_EQ(tile["allocations"].size(), map.tiles[t].entries.size());
    for (std::size_t i = 0; i < map.tiles[t].entries.size(); ++i) {
      const auto& a = tile["allocations"][i];
      const profile::MemoryEntry& e = map.tiles[t].entries[i];
      EXPECT_EQ(keys_of(a), entry_keys);
      EXPECT_EQ(a["start"], e.start);
      EXPECT_EQ(a["end"], e.end);
      EXPECT_EQ(a["kind"], std::string(profile::to_string(e.kind)));
    }
  }
}

TEST(memoryMap, NoTwoEntriesOverlapInAddressAndLifetime) {
  const auto& map = small_map();
  for (const auto& tile : map.tiles) {
    const auto& list = tile.entries;
    for (std::size_t x = 0; x < list.size(); ++x)
      for (std::size_t y = x + 1; y < list.size(); ++y) {
        const auto &a = list[x], &b = list[y];
        const bool address = a.start < b.end && b.start < a.end;
        const bool time = a.first <= b.last && b.first <= a.last;
        EXPECT_FALSE(address && time) << "tile " << tile.logical << ": " << map.labels.at(a.label) << " and "
                                      << map.labels.at(b.label);
      }
  }
}

TEST(memoryMap, EveryProgramAllocationOnceAndEveryReservedRangeOnEveryTile) {
  const auto& map = small_map();
  const auto& program = small_model().executable.program;
  std::set<std::size_t> reserved_labels;
  std::size_t active = 0;
  for (const auto& r : target::test16().reserved) active += r.when == target::ReservedWhen::always;
  std::size_t entries = 0, reserved = 0;
  std::map<std::uint32_t, std::size_t> per_tile;
  for (const auto& a : program.allocations) ++per_tile[a.tile];
  for (const auto& tile : map.tiles) {
    std::size_t here = 0;
    for (const auto& a : tile.entries) {
      const std::string& label = map.labels.at(a.label);
      if (label.find("(reserved ") != std::string::npos) ++reserved;
      else ++here;
      ++entries;
    }
    EXPECT_EQ(here, per_tile[tile.logical]);
    EXPECT_EQ(tile.summary.allocations, here);
  }
  EXPECT_EQ(entries - reserved, program.allocations.size());
  EXPECT_EQ(map.program_allocations, program.allocations.size());
  EXPECT_EQ(map.entry_count(), entries);
  EXPECT_EQ(reserved, active * map.tiles.size());
  // The profiling build adds the profiling buffer on every tile.
  const auto profiled = profile::build_memory_map(target::test16(), program, true);
  EXPECT_EQ(profiled.entry_count(), entries + map.tiles.size());
}

TEST(memoryMap, Deterministic) {
  const auto again = profile::build_memory_map(target::test16(), small_model().executable.program, false);
  EXPECT_TRUE(again == small_map());
  EXPECT_EQ(profile::to_json(again).dump(), small_map_json().dump());
  EXPECT_EQ(profile::render_memory_png(again), profile::render_memory_png(small_map()));
  EXPECT_EQ(profile::render_memory_html(again), profile::render_memory_html(small_map()));
}

// Issue #22, item 7: a package's label in invalid UTF-8 does not stop memory.json.
TEST(memoryMap, InvalidUtf8LabelIsReplaced) {
  compiler::CompiledProgram p = small_model().executable.program;
  p.allocations.back().request.label = "bad\xff\xfe label";
  const auto map = profile::build_memory_map(target::test16(), p, false);
  EXPECT_NO_THROW(profile::to_json(map).dump());
  EXPECT_NO_THROW(profile::render_memory_html(map));
  EXPECT_NE(std::find(map.labels.begin(), map.labels.end(), "bad\xef\xbf\xbd\xef\xbf\xbd label, " +
                                                                  std::string(compiler::to_string(p.allocations.back().request.kind))),
            map.labels.end());
}

TEST(memoryMap, AllocationOutsideTheMachineIsBadInput) {
  compiler::CompiledProgram p = small_model().executable.program;
  p.allocations.back().tile = 99;
  try {
    profile::build_memory_map(target::test16(), p, false);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitBadInput);
    EXPECT_NE(std::string(e.what()).find("tile 99"), std::string::npos);
  }
}

TEST(memoryPng, DecodesToTheLayoutSize) {
  const auto bytes = profile::render_memory_png(small_map());
  const auto layout = profile::memory_png_layout(small_map());
  const Decoded d = decode_png(bytes);
  ASSERT_TRUE(d.ok);
  EXPECT_EQ(d.width, layout.width);
  EXPECT_EQ(d.height, layout.height);
  EXPECT_EQ(layout.height, layout.map_top + 16 * layout.rows_per_tile + 4);
  EXPECT_GT(layout.width, (target::test16().sram_size / layout.bytes_per_pixel));
}

TEST(memoryPng, Deterministic) {
  const auto first = profile::render_memory_png(small_map());
  EXPECT_EQ(profile::render_memory_png(small_map()), first);
  const profile::MemoryMap copy = small_map();
  EXPECT_EQ(profile::render_memory_png(copy), first);
  // ... and drawn from the map: a tile without entries changes the image.
  profile::MemoryMap emptier = small_map();
  emptier.tiles[0].entries.clear();
  EXPECT_NE(profile::render_memory_png(emptier), first);
}

// The page's data block is the columnar form of the same map.
TEST(memoryHtml, ColumnarDataMatchesTheMap) {
  const auto& map = small_map();
  const auto data = nlohmann::json::parse(profile::to_columnar_json(map));
  EXPECT_EQ(data["start"], map.start);
  EXPECT_EQ(data["end"], map.end);
  EXPECT_EQ(data["kinds"], small_map_json()["kinds"]);
  EXPECT_EQ(data["labels"], small_map_json()["labels"]);
  EXPECT_EQ(data["regions"], small_map_json()["regions"]);
  EXPECT_EQ(data["tiles"]["logical"].size(), map.tiles.size());
  ASSERT_EQ(data["alloc"]["offset"].size(), map.tiles.size() + 1);
  EXPECT_EQ(data["alloc"]["offset"].back(), map.entry_count());
  EXPECT_EQ(data["alloc"]["label"].size(), map.entry_count());
  EXPECT_EQ(data["summary"]["rows"].size(), map.tiles.size());
  const profile::MemoryEntry& e = map.tiles[0].entries[0];
  EXPECT_EQ(data["alloc"]["start"][0], e.start - map.start);
  EXPECT_EQ(data["alloc"]["payload"][0], e.payload_end - e.start);
  EXPECT_EQ(data["alloc"]["kind"][0], static_cast<unsigned>(e.kind));
}

TEST(memoryHtml, StandaloneWithTheData) {
  const auto& map = small_map();
  const std::string html = profile::render_memory_html(map);
  EXPECT_EQ(html.find("/*TILEVIT_MEMORY_DATA*/"), std::string::npos);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_NE(html.find("id=\"reused\""), std::string::npos);
  EXPECT_NE(html.find("tilevitMemory"), std::string::npos);
  // Every label is in the page ('<' escaped inside the data block).
  for (const auto& label : map.labels) {
    std::string escaped = nlohmann::json(label).dump();
    for (std::size_t at; (at = escaped.find('<')) != std::string::npos;) escaped.replace(at, 1, "\\u003c");
    EXPECT_NE(html.find(escaped), std::string::npos) << label;
  }
  // A label that tries to end the data block cannot.
  profile::MemoryMap evil = map;
  evil.labels[0] = "</script><script>alert(1)</script>";
  const std::string page = profile::render_memory_html(evil);
  EXPECT_EQ(page.find("</script><script>alert"), std::string::npos);
}

TEST(memoryHtml, RejectsWhatIsNotAMemoryMap) {
  EXPECT_THROW(profile::render_memory_html(profile::MemoryMap{}), Error);  // no SRAM range
  profile::MemoryMap map = small_map();
  map.tiles[0].entries[0].end = 0xFFFFFFFu;
  EXPECT_THROW(profile::render_memory_html(map), Error);
}

// A pipeline stage's map says which stage it is (JSON and titles); a one-chip map does not.
TEST(memoryMap, AStagesMapNamesTheStage) {
  EXPECT_EQ(profile::map_subject(small_map()), small_map().machine.name);
  EXPECT_FALSE(small_map_json().contains("stage"));
  profile::MemoryMap stage = small_map();
  stage.stage = profile::MemoryMapStage{1, 2};
  EXPECT_EQ(profile::map_subject(stage), small_map().machine.name + ", stage 1 of 2");
  const nlohmann::json j = profile::to_json(stage);
  EXPECT_EQ(j["stage"], 1);
  EXPECT_EQ(j["stages"], 2);
  EXPECT_EQ(nlohmann::json::parse(profile::to_columnar_json(stage))["subject"], profile::map_subject(stage));
  EXPECT_NE(profile::render_memory_png(stage), profile::render_memory_png(small_map()));  // the title line differs
}
