// The memory map of a tiny compile on the 16-tile test machine: memory.json invariants,
// determinism, the PNG's geometry, and a standalone HTML page holding the data.
#include <gtest/gtest.h>
#include <png.h>

#include <cstring>
#include <map>
#include <set>

#include "compiler/compile.hpp"
#include "profile/memory_html.hpp"
#include "profile/memory_map.hpp"
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

const nlohmann::json& small_map() {
  static const nlohmann::json j = profile::memory_map_json(target::test16(), small_model().lowered.program, false);
  return j;
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
  const auto& j = small_map();
  const auto& m = target::test16();
  EXPECT_EQ(j["schema_version"], 1);
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

TEST(memoryMap, NoTwoEntriesOverlapInAddressAndLifetime) {
  const auto& j = small_map();
  for (const auto& tile : j["tiles"]) {
    const auto& list = tile["allocations"];
    for (std::size_t x = 0; x < list.size(); ++x)
      for (std::size_t y = x + 1; y < list.size(); ++y) {
        const auto &a = list[x], &b = list[y];
        const bool address = a["start"] < b["end"] && b["start"] < a["end"];
        const bool time = a["first"] <= b["last"] && b["first"] <= a["last"];
        EXPECT_FALSE(address && time) << "tile " << tile["logical"] << ": " << j["labels"][a["label"].get<int>()]
                                      << " and " << j["labels"][b["label"].get<int>()];
      }
  }
}

TEST(memoryMap, EveryProgramAllocationOnceAndEveryReservedRangeOnEveryTile) {
  const auto& j = small_map();
  const auto& program = small_model().lowered.program;
  std::set<std::size_t> reserved_labels;
  std::size_t active = 0;
  for (const auto& r : target::test16().reserved) active += r.when == target::ReservedWhen::always;
  std::size_t entries = 0, reserved = 0;
  std::map<std::uint32_t, std::size_t> per_tile;
  for (const auto& a : program.allocations) ++per_tile[a.tile];
  for (const auto& tile : j["tiles"]) {
    std::size_t here = 0;
    for (const auto& a : tile["allocations"]) {
      const std::string& label = j["labels"][a["label"].get<std::size_t>()].get_ref<const std::string&>();
      if (label.find("(reserved ") != std::string::npos) ++reserved;
      else ++here;
      ++entries;
    }
    EXPECT_EQ(here, per_tile[tile["logical"].get<std::uint32_t>()]);
  }
  EXPECT_EQ(entries - reserved, program.allocations.size());
  EXPECT_EQ(j["program_allocations"], program.allocations.size());
  EXPECT_EQ(j["entries"], entries);
  EXPECT_EQ(reserved, active * j["tiles"].size());
  // The profiling build adds the profiling buffer on every tile.
  const auto profiled = profile::memory_map_json(target::test16(), program, true);
  EXPECT_EQ(profiled["entries"].get<std::size_t>(), entries + j["tiles"].size());
}

TEST(memoryMap, Deterministic) {
  const auto again = profile::memory_map_json(target::test16(), small_model().lowered.program, false);
  EXPECT_EQ(again.dump(), small_map().dump());
  EXPECT_EQ(profile::render_memory_png(again), profile::render_memory_png(small_map()));
  EXPECT_EQ(profile::render_memory_html(again), profile::render_memory_html(small_map()));
}

TEST(memoryMap, AllocationOutsideTheMachineIsBadInput) {
  compiler::CompiledProgram p = small_model().lowered.program;
  p.allocations.back().tile = 99;
  try {
    profile::memory_map_json(target::test16(), p, false);
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

TEST(memoryHtml, StandaloneWithTheData) {
  const auto& j = small_map();
  const std::string html = profile::render_memory_html(j);
  EXPECT_EQ(html.find("/*TILEVIT_MEMORY_DATA*/"), std::string::npos);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_NE(html.find("id=\"reused\""), std::string::npos);
  EXPECT_NE(html.find("tilevitMemory"), std::string::npos);
  // Every label is in the page ('<' escaped inside the data block).
  for (const auto& label : j["labels"]) {
    std::string escaped = nlohmann::json(label).dump();
    for (std::size_t at; (at = escaped.find('<')) != std::string::npos;) escaped.replace(at, 1, "\\u003c");
    EXPECT_NE(html.find(escaped), std::string::npos) << label;
  }
  // A label that tries to end the data block cannot.
  nlohmann::json evil = j;
  evil["labels"][0] = "</script><script>alert(1)</script>";
  const std::string page = profile::render_memory_html(evil);
  EXPECT_EQ(page.find("</script><script>alert"), std::string::npos);
}

TEST(memoryHtml, RejectsWhatIsNotAMemoryMap) {
  EXPECT_THROW(profile::render_memory_html(nlohmann::json::object()), Error);
  nlohmann::json j = small_map();
  j["tiles"][0]["allocations"][0]["end"] = 0xFFFFFFFu;
  EXPECT_THROW(profile::render_memory_html(j), Error);
}
