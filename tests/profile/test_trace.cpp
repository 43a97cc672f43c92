#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "compiler/compile.hpp"
#include "profile/profile.hpp"
#include "profile/trace.hpp"

using namespace tilevit;

// On test16 with the C600's kernel generation, so that its GEMMs count as calibrated.
TEST(Trace, ValidChromeTraceWithNestedEventsPerTile) {
  auto machine = target::test16();
  machine.costs.generation = target::c600().costs.generation;
  const auto m = compiler::compile_model(
      compiler::build_vit_graph(model::ViTConfig::small(), model::NumericsConfig::uniform(-4)), machine, {});
  const auto p = profile::build_profile(machine, m.executable.program, {});
  const auto j = nlohmann::json::parse(profile::chrome_trace_json(p));
  ASSERT_TRUE(j.contains("traceEvents"));
  // Per track: [start, end) in integer nanoseconds as an importer reads them, by
  // truncation and by rounding of the microsecond values.
  std::map<int, std::vector<std::pair<std::int64_t, std::int64_t>>> truncated, rounded;
  std::map<int, std::string> names;
  std::size_t repeats = 0;
  std::uint64_t uncalibrated = 0;
  for (const auto& e : j["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph") && e.contains("pid") && e.contains("name"));
    if (e["ph"] == "M") {
      if (e["name"] == "thread_name") names[e["tid"].get<int>()] = e["args"]["name"];
      continue;
    }
    ASSERT_EQ(e["ph"], "X");
    const double ts = e["ts"], dur = e["dur"];
    EXPECT_GT(dur, 0);
    // Raw cycles are kept and agree with the microseconds at 1.5 GHz (to the nanosecond).
    EXPECT_NEAR(ts, e["args"]["start_cycle"].get<double>() / 1500.0, 1e-3);
    EXPECT_NEAR(ts + dur, e["args"]["end_cycle"].get<double>() / 1500.0, 1e-3);
    repeats += e["cat"] == "repeat";
    if (e["args"].contains("kernel")) {  // compute: the kernel cycles no measurement covers
      const auto cycles = e["args"]["end_cycle"].get<std::uint64_t>() - e["args"]["start_cycle"].get<std::uint64_t>();
      ASSERT_TRUE(e["args"].contains("uncalibrated_cycles")) << e.dump();
      EXPECT_LE(e["args"]["uncalibrated_cycles"].get<std::uint64_t>(), cycles);
      if (e["cat"] == "gemm_fp8") {
        EXPECT_EQ(e["args"]["uncalibrated_cycles"], 0);
      }
      uncalibrated += e["args"]["uncalibrated_cycles"].get<std::uint64_t>();
    }
    const int tid = e["tid"].get<int>();
    truncated[tid].push_back({std::int64_t(ts * 1000), std::int64_t(ts * 1000) + std::int64_t(dur * 1000)});
    rounded[tid].push_back({std::llround(ts * 1000), std::llround(ts * 1000) + std::llround(dur * 1000)});
  }
  EXPECT_EQ(names.size(), 16u);
  EXPECT_EQ(repeats, 16u);  // one repeat-remainder interval per tile
  EXPECT_GT(uncalibrated, 0u);  // the small model's attention combines key blocks
  for (const auto* tracks : {&truncated, &rounded})
    for (const auto& [tile, events] : *tracks) {
      EXPECT_EQ(names[tile], "tile " + std::to_string(tile));
      for (std::size_t i = 1; i < events.size(); ++i)  // events nest: disjoint and in order, exactly
        ASSERT_LE(events[i - 1].second, events[i].first) << "overlap on tile " << tile << " event " << i;
    }
}
