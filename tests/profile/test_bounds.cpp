// Ideal against achieved: per-op lower bounds recorded in a profile, per operation and per
// step in bound_report; achieved sums are the call's.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "compiler/compile.hpp"
#include "compiler/plan_bound.hpp"
#include "profile/bounds.hpp"
#include "profile/profile_file.hpp"

using namespace tilevit;

namespace {

profile::Profile bounded_profile(compiler::ProfileDetail detail) {
  model::ViTConfig c = model::ViTConfig::small();
  c.layers = 2;
  const auto graph = compiler::build_vit_graph(c, model::NumericsConfig::uniform(-4));
  const auto m = compiler::compile_model(graph, target::test16(), compiler::CompileOptions{compiler::Plan{{}, 1024}, {true, detail}});
  auto p = profile::build_profile(target::test16(), m.executable.program, detail);
  for (const auto& b : compiler::operation_lower_bounds(graph, target::test16())) p.operation_bounds.push_back({b.name, std::uint64_t(b.tile_cycles + 0.5)});
  return profile::decode_profile(profile::encode_profile(p), "p.tvprof");  // through the file
}

}  // namespace

// The per-op bounds add up to the plan search's bound of the call.
TEST(OperationBounds, SumToThePlanLowerBound) {
  model::ViTConfig c = model::ViTConfig::small();
  const auto graph = compiler::build_vit_graph(c, model::NumericsConfig::uniform(-4));
  double total = 0;
  for (const auto& b : compiler::operation_lower_bounds(graph, target::test16())) total += b.tile_cycles;
  const auto call = compiler::plan_lower_bound(graph, target::test16());
  EXPECT_NEAR(total / 16, double(call.cycles), 2.0);
}

// Per operation the achieved compute tile-cycles sum to the call's; per step the achieved
// cycles sum to the span; the bounds of either sum to the call's bound; every ratio >= 1.
TEST(BoundReport, AchievedSumsAreTheCallsAndRatiosAtLeastOne) {
  for (const auto g : {compiler::Granularity::phase, compiler::Granularity::kernel}) {
    const auto p = bounded_profile({g, 1});
    const auto r = profile::bound_report(p);
    ASSERT_TRUE(r.available);
    std::uint64_t ops = 0, steps = 0;
    double op_bound = 0, step_bound = 0;
    for (const auto& b : r.operations) ops += b.achieved, op_bound += b.bound;
    for (const auto& b : r.steps) steps += b.achieved, step_bound += b.bound;
    EXPECT_EQ(ops, p.tile_cycles[std::size_t(profile::SampleKind::compute)]);
    EXPECT_EQ(steps, p.span);
    EXPECT_NEAR(op_bound / 16, r.call_bound, 1e-6 * r.call_bound + 1);
    EXPECT_NEAR(step_bound, r.call_bound, 1e-6 * r.call_bound + 1);
    for (const auto& b : r.operations)
      if (b.bound > 0) EXPECT_GE(b.ratio(), 1.0) << b.key;
    const auto j = profile::to_json(r, 3);
    EXPECT_EQ(j["operations"]["rows"].size(), 3u);
    EXPECT_EQ(j["steps"]["achieved_sum"].get<std::uint64_t>(), p.span);
  }
}

// A profile without recorded bounds says so; bad bounds in a file are refused.
TEST(BoundReport, AbsentOrMalformedBounds) {
  auto p = bounded_profile({compiler::Granularity::phase, 1});
  auto plain = p;
  plain.operation_bounds.clear();
  EXPECT_FALSE(profile::bound_report(plain).available);
  EXPECT_EQ(profile::to_json(profile::bound_report(plain), 5)["call"]["achieved_over_bound"], nullptr);
  p.operation_bounds.front().name = std::string(5000, 'x');
  EXPECT_THROW(profile::decode_profile(profile::encode_profile(p), "p.tvprof"), Error);
}
