// profile compare: the step table sums to each span (a pipeline's too), rows match across plans, the page.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "compiler/compile.hpp"
#include "pipeline_profile.hpp"
#include "profile/compare.hpp"
#include "profile/compare_html.hpp"
#include "profile/profile.hpp"
#include "profile/profile_file.hpp"

using namespace tilevit;

namespace {

profile::Profile small_profile(std::uint32_t layers, std::uint32_t words, compiler::ProfileDetail detail) {
  model::ViTConfig c = model::ViTConfig::small();
  c.layers = layers;
  const auto m = compiler::compile_model(compiler::build_vit_graph(c, model::NumericsConfig::uniform(-4)), target::test16(),
                                         compiler::CompileOptions{compiler::Plan{{}, words}, {true, detail}});
  auto p = profile::build_profile(target::test16(), m.executable.program, detail);
  p.model = c.name + ", " + std::to_string(layers) + " layers";
  return p;
}

std::int64_t sum(const std::vector<profile::CompareRow>& rows) {
  std::int64_t total = 0;
  for (const auto& r : rows) total += r.cycles_a;
  return total;
}

// compare_profiles(a, b): each side's step rows sum to its span, the deltas to the difference.
profile::CompareReport expect_steps_sum_to_spans(const profile::Profile& a, const profile::Profile& b) {
  const auto r = profile::compare_profiles(a, b);
  EXPECT_EQ(r.steps_total_a, std::int64_t(a.span));
  EXPECT_EQ(r.steps_total_b, std::int64_t(b.span));
  std::int64_t deltas = 0;
  for (const auto& s : r.steps) deltas += s.delta();
  EXPECT_EQ(deltas, std::int64_t(b.span) - std::int64_t(a.span));
  return r;
}

}  // namespace

// Each profile's step rows sum to its span, whatever the granularity and detail.
TEST(CompareProfiles, StepRowsSumToTheSpan) {
  using G = compiler::Granularity;
  for (const auto& detail : {compiler::ProfileDetail{G::phase, 1}, compiler::ProfileDetail{G::kernel, 2},
                             compiler::ProfileDetail{G::phase, 0}, compiler::ProfileDetail{G::graph, 1}}) {
    const auto p = small_profile(2, 1024, detail);
    EXPECT_EQ(sum(profile::call_steps(p)), std::int64_t(p.span)) << compiler::to_string(detail.granularity);
  }
  // With every iteration in detail no row is left outside the steps.
  const auto all = profile::call_steps(small_profile(2, 1024, {G::phase, UINT32_MAX}));
  for (const auto& r : all) EXPECT_NE(r.key, "(outside steps)");
}

// Two plans (exchange streams of 1,024 and 64 words): the total difference of the step
// table is the difference of the spans; every row's delta is B - A with absent as 0.
TEST(CompareProfiles, TotalDifferenceIsTheSpanDifference) {
  const auto a = small_profile(2, 1024, {compiler::Granularity::phase, 1});
  const auto b = small_profile(2, 64, {compiler::Granularity::phase, 1});
  ASSERT_NE(a.span, b.span);
  const auto r = expect_steps_sum_to_spans(a, b);
  for (std::size_t i = 1; i < r.steps.size(); ++i) EXPECT_GE(std::llabs(r.steps[i - 1].delta()), std::llabs(r.steps[i].delta()));
  const auto j = profile::to_json(r, 5);
  EXPECT_EQ(j["steps"]["total_delta"].get<std::int64_t>(), j["span_delta"].get<std::int64_t>());
  EXPECT_LE(j["steps"]["rows"].size(), 5u);
  EXPECT_FALSE(r.kernels.empty());
}

// Different models (layer counts) compare by name and say so.
TEST(CompareProfiles, DifferentModelsAreNamed) {
  const auto a = small_profile(2, 1024, {compiler::Granularity::phase, 1});
  const auto b = small_profile(1, 1024, {compiler::Granularity::kernel, 1});
  const auto r = profile::compare_profiles(a, b);
  bool model = false, detail = false;
  for (const auto& d : r.differences) model |= d.rfind("model:", 0) == 0, detail |= d.rfind("profile detail:", 0) == 0;
  EXPECT_TRUE(model);
  EXPECT_TRUE(detail);
  EXPECT_EQ(r.steps_total_b - r.steps_total_a, std::int64_t(b.span) - std::int64_t(a.span));
}

// The page is standalone (no URL), carries both profiles and the comparison, and the
// memory peaks survive the .tvprof file.
TEST(CompareHtml, StandalonePageWithBothProfiles) {
  auto a = small_profile(2, 1024, {compiler::Granularity::phase, 1});
  auto b = small_profile(2, 64, {compiler::Granularity::phase, 1});
  a.tile_peak_bytes.assign(a.tiles, 1000);
  b.tile_peak_bytes.assign(b.tiles, 2000);
  const auto decoded = profile::decode_profile(profile::encode_profile(b), "b.tvprof");
  EXPECT_EQ(decoded.tile_peak_bytes, b.tile_peak_bytes);
  const std::string page = profile::render_compare_html(a, decoded, "a.tvprof", "b <b>.tvprof");
  EXPECT_EQ(page.find("http://"), std::string::npos);
  EXPECT_EQ(page.find("https://"), std::string::npos);
  for (const char* id : {"id=\"compare-data\"", "id=\"tilevit-data-a\"", "id=\"tilevit-data-b\"", "tilevitCompare"})
    EXPECT_NE(page.find(id), std::string::npos) << id;
  EXPECT_EQ(page.find("b <b>.tvprof"), std::string::npos);  // names are escaped in the data
  EXPECT_EQ(page, profile::render_compare_html(a, decoded, "a.tvprof", "b <b>.tvprof"));
}

// A tile_peak_bytes of the wrong length is refused in one line.
TEST(CompareHtml, PeaksOfTheWrongLengthAreRefused) {
  auto p = small_profile(1, 1024, {compiler::Granularity::phase, 1});
  p.tile_peak_bytes.assign(p.tiles - 1, 5);
  EXPECT_THROW(profile::decode_profile(profile::encode_profile(p), "p.tvprof"), Error);
}

// The chips run micro-batches at once: the steps count each in full and a negative row takes
// the overlap off, so the table still sums to the span, and a comparison with one chip's
// profile sums each side to its span.
TEST(CompareProfiles, StepRowsSumToTheSpanWhenChipsWorkAtOnce) {
  const auto p = test_support::two_chip_profile();
  const auto steps = profile::call_steps(p);
  EXPECT_EQ(sum(steps), std::int64_t(p.span));
  ASSERT_EQ(steps.back().key, "(chips at work at once)");
  EXPECT_LT(steps.back().cycles_a, 0);
  const auto one = test_support::stage_profile({0, true, false});
  expect_steps_sum_to_spans(one, p);
  const auto diff = profile::diff_profiles(one, p);
  EXPECT_NE(std::find(diff.identity.begin(), diff.identity.end(), "loop iterations (layers): 2 vs 2 + 2"), diff.identity.end());
}
