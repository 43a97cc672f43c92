// A spec's points: order, ids, settings (src/sweep/points.hpp).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "support/error.hpp"
#include "sweep/points.hpp"

namespace tilevit::sweep {
namespace {

SweepSpec spec() {
  return parse_sweep_spec(
      R"({"tilevit_sweep": 1, "machine": "test16", "axes": {"preset": ["small"], "batch": [1, 2], "clock_hz": [1000000000, 2000000000, 3000000000]}})",
      "spec.json", "");
}

TEST(SweepPoints, CartesianProductWithTheLastAxisFastest) {
  const SweepSpec s = spec();
  const auto points = expand_points(s, target::to_text(target::test16()));
  ASSERT_EQ(points.size(), 6u);
  EXPECT_EQ(parameters_json(s, points[0]), (nlohmann::json{{"preset", "small"}, {"batch", 1}, {"clock_hz", 1000000000}}));
  EXPECT_EQ(parameters_json(s, points[1])["clock_hz"], 2000000000);
  EXPECT_EQ(parameters_json(s, points[3]), (nlohmann::json{{"preset", "small"}, {"batch", 2}, {"clock_hz", 1000000000}}));
  for (std::size_t i = 0; i < points.size(); ++i) EXPECT_EQ(points[i].index, i);
}

TEST(SweepPoints, IdsAreStableAndDistinct) {
  const SweepSpec s = spec();
  const std::string base = target::to_text(target::test16());
  std::set<std::string> ids;
  for (const SweepPoint& p : expand_points(s, base)) {
    EXPECT_EQ(p.id.size(), 16u);
    EXPECT_EQ(p.id, point_at(s, base, p.index).id);
    ids.insert(p.id);
  }
  EXPECT_EQ(ids.size(), 6u);
  // Another base machine, or another device-run setting: other ids.
  EXPECT_NE(point_at(s, target::to_text(target::c600()), 0).id, point_at(s, base, 0).id);
  SweepSpec device = s;
  device.device_run = true;
  EXPECT_NE(point_at(device, base, 0).id, point_at(s, base, 0).id);
}

TEST(SweepPoints, APointKeepsItsIdWhenTheSpecGainsValues) {
  const SweepSpec s = spec();
  SweepSpec wider = s;
  wider.axes[1].values.emplace_back(std::uint64_t{3});  // batch 1, 2, 3
  const std::string base = target::to_text(target::test16());
  // batch 2, clock 1 GHz: index 3 before, index 3 after too (batch is not the last axis:
  // the index moves only for later batches); the id is the same either way.
  EXPECT_EQ(point_at(wider, base, 3).id, point_at(s, base, 3).id);
  EXPECT_EQ(point_at(wider, base, 6).values[1], AxisValue(std::uint64_t{3}));
}

TEST(SweepPoints, SettingsTakeTheSpecDefaults) {
  const SweepSpec s = spec();
  const PointSettings p = settings_of(s, point_at(s, "", 5));
  EXPECT_EQ(p.preset, "small");
  EXPECT_EQ(p.batch, 2);
  EXPECT_FALSE(p.layers.has_value());
  EXPECT_EQ(p.optimization_steps, 0u);
  EXPECT_EQ(p.exchange_stream_words, 1024u);
  ASSERT_EQ(p.machine.size(), 1u);
  EXPECT_EQ(p.machine[0].first->name, "clock_hz");
  EXPECT_EQ(p.machine[0].second, 3000000000u);
}

TEST(SweepPoints, AnIndexPastTheEndIsAnError) {
  EXPECT_THROW(point_at(spec(), "", 6), Error);
}

}  // namespace
}  // namespace tilevit::sweep
