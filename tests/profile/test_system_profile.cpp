// One profile of a pipeline's call (system_profile, pipeline_profile.hpp): each chip keeps
// its stage's loop, so queries scale its iterations not in detail as one chip's profile does.
#include <gtest/gtest.h>

#include "pipeline_profile.hpp"
#include "profile/analysis.hpp"
#include "profile/rows.hpp"

using namespace tilevit;
using test_support::two_chip_profile;

TEST(SystemProfile, EachChipKeepsItsStagesLoop) {
  const auto p = two_chip_profile();
  ASSERT_EQ(p.row_groups.size(), 3u);
  EXPECT_EQ(p.row_groups[0].loop_count, 2u);
  EXPECT_EQ(p.row_groups[1].loop_count, 2u);
  EXPECT_EQ(p.row_groups[2].loop_count, 0u);  // the links
  for (const auto& c : {profile::group_coverage(p)[0], profile::group_coverage(p)[1]}) {
    EXPECT_TRUE(c.extrapolated);
    EXPECT_EQ(c.detailed, 1u);
  }
  EXPECT_EQ(profile::tile_rows(p), 32u);
  EXPECT_EQ(profile::rows_text(p), "32 tiles on 2 chips (16 + 16), 1 link row");
  EXPECT_EQ(profile::row_name(p, 17), "chip 1 t1");
  EXPECT_EQ(profile::row_name(p, 32), "links 0");
}

// The layer not in detail on each chip is scaled in: every group's compute tile-cycles are
// the header's, which counts every iteration.
TEST(SystemProfile, QueriesExtrapolateEachChipsLoop) {
  const auto p = two_chip_profile();
  for (const auto g : {profile::GroupBy::kind, profile::GroupBy::operation, profile::GroupBy::tile}) {
    std::uint64_t compute = 0;
    for (const auto& row : profile::query_profile(p, g)) {
      compute += row.compute_cycles;
      EXPECT_NE(row.key, "repeat");  // stood for what is scaled in
    }
    EXPECT_EQ(compute, p.tile_cycles[std::size_t(profile::SampleKind::compute)]);
  }
  EXPECT_THROW(profile::query_profile(p, profile::GroupBy::kind, profile::QueryView::layer), Error);
}
