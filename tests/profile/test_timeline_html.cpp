// model.html: the page is standalone (no network references), embeds every sample in its
// columns, keeps labels from closing its <script> elements and is deterministic. One test
// also writes the page of a small compiled model where TILEVIT_TIMELINE_HTML_OUT says
// (the browser tests' fixture, tests/browser/).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include "compiler/compile.hpp"
#include "profile/profile.hpp"
#include "profile/timeline_html.hpp"

using namespace tilevit;

namespace {

// A hand-made profile: per tile compute, sync, exchange and idle samples.
profile::Profile hand_profile(std::uint32_t tiles, std::uint32_t steps, const std::string& operation = "gemm_qkv") {
  profile::Profile p;
  p.machine_name = "test";
  p.tiles = tiles;
  p.clock_hz = 1'500'000'000;
  p.model = "hand-made";
  p.steps = steps;
  p.meta = {{profile::SampleKind::compute, 0, -1, "layer.qkv", "gemm_fp8", operation, "8x16x16"},
            {profile::SampleKind::sync, 0, -1, "layer.qkv", "", "", ""},
            {profile::SampleKind::exchange, 0, -1, "layer.qkv", "", "", ""},
            {profile::SampleKind::idle, 0, -1, "layer.qkv", "", "", ""}};
  p.samples.resize(tiles);
  for (std::uint32_t t = 0; t < tiles; ++t) {
    std::uint64_t at = 0;
    for (std::uint32_t s = 0; s < steps; ++s) {
      const std::uint64_t busy = 100 + (t * 7 + s * 13) % 50;
      p.samples[t].push_back({at, at + busy, 0, 0, 0, 2ull * 8 * 16 * 16});
      p.samples[t].push_back({at + busy, at + 160, 3, 0, 0, 0});
      p.samples[t].push_back({at + 160, at + 200, 1, 0, 0, 0});
      p.samples[t].push_back({at + 200, at + 260, 2, t % 3 ? 10u : 0u, t % 2 ? 12u : 0u, 0});
      at += 260;
    }
    p.span = at;
  }
  return p;
}

std::size_t samples_of(const profile::Profile& p) {
  std::size_t n = 0;
  for (const auto& t : p.samples) n += t.size();
  return n;
}

// The embedded data element, parsed.
nlohmann::json data_of(const std::string& html) {
  const std::string open = "<script id=\"tilevit-data\" type=\"application/json\">";
  const auto a = html.find(open);
  EXPECT_NE(a, std::string::npos);
  const auto b = html.find("</script>", a);
  return nlohmann::json::parse(html.substr(a + open.size(), b - a - open.size()));
}

std::size_t decoded_bytes(const std::string& b64) {
  const std::size_t pad = std::count(b64.begin(), b64.end(), '=');
  return b64.size() / 4 * 3 - pad;
}

std::size_t width_of(const std::string& type) { return type == "u8" ? 1 : type == "u16" ? 2 : type == "u32" ? 4 : 8; }

compiler::CompiledModel compile_small() {
  model::ViTConfig c = model::ViTConfig::small();
  c.layers = 2;
  compiler::CompileOptions o;
  o.profiling.enabled = true;
  return compiler::compile_model(compiler::build_vit_graph(c, model::NumericsConfig::uniform(-4)), target::test16(), o);
}

}  // namespace

TEST(TimelineHtml, IsStandalone) {
  const std::string html = profile::render_timeline_html(hand_profile(4, 3));
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<!--TILEVIT:"), std::string::npos) << "a template marker was left";
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find(" src="), std::string::npos);
  EXPECT_NE(html.find("window.tilevitTimeline"), std::string::npos);
}

TEST(TimelineHtml, EmbedsEverySample) {
  const auto p = hand_profile(5, 4);
  const auto j = data_of(profile::render_timeline_html(p));
  EXPECT_EQ(j["samples"], samples_of(p));
  EXPECT_EQ(j["tiles"], 5);
  EXPECT_EQ(j["span"], p.span);
  EXPECT_EQ(j["meta"].size(), p.meta.size());
  for (const auto* name : {"start", "duration", "payload"}) {
    const auto& c = j["columns"][name];
    EXPECT_EQ(c["length"], samples_of(p)) << name;
    EXPECT_EQ(decoded_bytes(c["base64"]), samples_of(p) * width_of(c["type"])) << name;
  }
  EXPECT_EQ(j["columns"]["offsets"]["length"], 6);
  // Shared payloads: 4 kinds, exchange in 4 directions, compute 1: far fewer than samples.
  EXPECT_LE(j["payloads"].get<int>(), 3 + 4);
}

TEST(TimelineHtml, WideValuesUseWiderColumns) {
  auto p = hand_profile(2, 1);
  p.samples[1].back().end = p.samples[1].back().start + (std::uint64_t(1) << 40);
  p.span = p.samples[1].back().end;
  const auto j = data_of(profile::render_timeline_html(p));
  EXPECT_EQ(j["columns"]["duration"]["type"], "f64");
  EXPECT_EQ(j["columns"]["start"]["type"], "u8");  // starts stay small
}

TEST(TimelineHtml, LabelsCannotCloseTheScript) {
  const std::string evil = "</script><script>alert(1)</script><!--";
  const auto p = hand_profile(2, 1, evil);
  const std::string html = profile::render_timeline_html(p);
  std::string lower = html;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  std::size_t closes = 0;
  for (auto at = lower.find("</script"); at != std::string::npos; at = lower.find("</script", at + 1)) ++closes;
  EXPECT_EQ(closes, 2u) << "only the data and the code elements close";
  EXPECT_EQ(data_of(html)["meta"][0][5], evil);  // the label survives intact
  EXPECT_EQ(html.find("alert(1)</script"), std::string::npos);
}

TEST(TimelineHtml, IsDeterministic) {
  const auto p = hand_profile(7, 5);
  EXPECT_EQ(profile::render_timeline_html(p), profile::render_timeline_html(p));
}

TEST(TimelineHtml, PeaksAreEmbedded) {
  const auto j = data_of(profile::render_timeline_html(hand_profile(1, 1), {64, 96}));
  EXPECT_EQ(j["peak_flops_per_tile_cycle"]["fp16"], 64);
  EXPECT_EQ(j["peak_flops_per_tile_cycle"]["fp8"], 96);
}

TEST(TimelineHtml, RejectsInconsistentProfiles) {
  auto p = hand_profile(2, 1);
  p.samples[0][0].meta = 99;
  EXPECT_ANY_THROW(profile::render_timeline_html(p));
  p = hand_profile(2, 1);
  p.samples.pop_back();
  EXPECT_ANY_THROW(profile::render_timeline_html(p));
}

// The page of a compiled model (test16, 2 layers); written to TILEVIT_TIMELINE_HTML_OUT
// when set, for the browser tests.
TEST(TimelineHtml, CompiledModel) {
  const auto m = compile_small();
  compiler::ProfileDetail o;
  auto p = profile::build_profile(target::test16(), m.executable.program, o);
  p.model = "small, 2 layers, batch 1";
  const std::string html = profile::render_timeline_html(
      p, {double(target::test16().flop_per_cycle_fp16), double(target::test16().flop_per_cycle_fp8)});
  const auto j = data_of(html);
  EXPECT_EQ(j["samples"], samples_of(p));
  EXPECT_EQ(j["tiles"], 16);
  if (const char* out = std::getenv("TILEVIT_TIMELINE_HTML_OUT")) {
    std::ofstream f(out, std::ios::binary);
    f << html;
    ASSERT_TRUE(f.good()) << out;
  }
}
