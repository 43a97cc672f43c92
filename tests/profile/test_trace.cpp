#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "compiler/compile.hpp"
#include "profile/profile.hpp"
#include "profile/trace.hpp"

using namespace tilevit;

TEST(Trace, ValidChromeTraceWithNestedEventsPerTile) {
  const auto m = compiler::compile_model(
      compiler::build_vit_graph(model::ViTConfig::small(), model::NumericsConfig::uniform(-4)), target::test16(), {});
  const auto p = profile::build_profile(target::test16(), m.lowered.program, {});
  const auto j = nlohmann::json::parse(profile::chrome_trace_json(p));
  ASSERT_TRUE(j.contains("traceEvents"));
  std::map<int, std::vector<std::pair<double, double>>> tracks;
  std::map<int, std::string> names;
  std::size_t repeats = 0;
  for (const auto& e : j["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph") && e.contains("pid") && e.contains("name"));
    if (e["ph"] == "M") {
      if (e["name"] == "thread_name") names[e["tid"].get<int>()] = e["args"]["name"];
      continue;
    }
    ASSERT_EQ(e["ph"], "X");
    const double ts = e["ts"], dur = e["dur"];
    EXPECT_GE(dur, 0);
    // Raw cycles are kept and agree with the microseconds at 1.5 GHz.
    EXPECT_NEAR(ts, e["args"]["start_cycle"].get<double>() / 1500.0, 1e-6);
    if (e["cat"] == "repeat") ++repeats;
    else tracks[e["tid"].get<int>()].push_back({ts, ts + dur});
  }
  EXPECT_EQ(names.size(), 16u);
  EXPECT_EQ(repeats, 16u);  // one repeat-remainder interval per tile
  for (auto& [tile, events] : tracks) {
    EXPECT_EQ(names[tile], "tile " + std::to_string(tile));
    for (std::size_t i = 1; i < events.size(); ++i)
      EXPECT_LE(events[i - 1].second, events[i].first + 1e-9) << "overlap on tile " << tile;  // events nest: disjoint, in order
  }
}
