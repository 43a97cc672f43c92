// Placement failures: the first and the worst failing tile of place_all, the one-line
// does-not-fit message, and malformed requests as internal errors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/placement.hpp"
#include "placement_requests.hpp"
#include "support/error.hpp"
#include "target/machine.hpp"

namespace tilevit::compiler {
namespace {

using namespace placement_test;

TEST(Placement, PlaceAllReportsTheFirstFailingTile) {
  const MachineDescription& m = target::test16();
  std::vector<TilePlacementInput> tiles(6);
  for (std::uint32_t t = 0; t < tiles.size(); ++t) {
    tiles[t].tile = t;
    tiles[t].requests = {act("x", t == 2 || t == 4 ? 500'000 : 1000, 0, 0)};
  }
  try {
    place_all(m, tiles, false);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitBadInput);
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("tile 2: cannot place \"x\" (500000 B", 0), 0u) << msg;
    EXPECT_NE(msg.find("(and 1 more tiles)"), std::string::npos) << msg;
  }
}

// The overflow a user is shown: the worst tile (over its capacity beats short of one
// free range), its peak live bytes against its capacity, and how many tiles failed.
TEST(Placement, PlaceAllCarriesTheWorstTilesOverflow) {
  const MachineDescription& m = target::test16();
  std::vector<TilePlacementInput> tiles(6);
  for (std::uint32_t t = 0; t < tiles.size(); ++t) {
    tiles[t].tile = t;
    tiles[t].requests = {act("x", t == 2 ? 500'000 : 1000, 0, 0)};
    if (t == 4) tiles[t].requests = {act("a", 400'000, 3, 5), act("b", 300'000, 5, 6), act("c", 1000, 0, 1)};
  }
  try {
    place_all(m, tiles, false);
    FAIL() << "expected an error";
  } catch (const DoesNotFit& e) {
    const TileOverflow& o = e.overflow();
    EXPECT_EQ(o.tile, 4u);
    EXPECT_FALSE(o.one_piece);
    EXPECT_EQ(o.needed, 700'000u);
    EXPECT_EQ(o.phase, 5u);  // lifetimes count phases: 5 is step 2's exchange phase
    EXPECT_EQ(o.available, place_tile(m, tiles[0], false).stats.capacity);
    EXPECT_EQ(o.tiles_over, 2u);
    EXPECT_EQ(describe(o), "tile 4 needs 700000 B at step 2 (exchange), " + std::to_string(o.available) +
                               " B available (and 1 more tiles)");
  }
  tiles[4].requests = {act("c", 1000, 0, 1)};
  try {
    place_all(m, tiles, false);
    FAIL() << "expected an error";
  } catch (const DoesNotFit& e) {  // 500,000 B fit the tile's bytes, not its largest region
    EXPECT_EQ(e.overflow().tile, 2u);
    EXPECT_TRUE(e.overflow().one_piece);
    EXPECT_EQ(e.overflow().needed, 500'000u);
    EXPECT_LT(e.overflow().available, 500'000u);
    EXPECT_EQ(e.overflow().tiles_over, 1u);
  }
}

TEST(Placement, DoesNotFitMessageNamesTileLabelSizeFreeAndHole) {
  // 300,032 B of parameters packed at the top leave 124,832 B below them (+16 B of
  // alignment slack against the tail: 124,848 B free); a 100,000 B activation takes the
  // bottom during phases 10..13, so at phases 12..14 only 24,848 B are free and the largest
  // hole is 24,832 B.
  const MachineDescription& m = target::c600();
  TilePlacementInput in;
  in.tile = 713;
  in.requests = {param("layer.weights F143", 300'032), act("layer.attention.scores F16 [81x80]", 100'000, 10, 13),
                 act("layer.mlp_up.weight F143 [192x160]", 30'720, 12, 14)};
  EXPECT_EQ(error_of(m, in, false),
            "tile 713: cannot place \"layer.mlp_up.weight F143 [192x160]\" (30720 B, align 32, interleaved, "
            "step 6 (compute)..step 7 (compute)): 24848 B free in interleaved at that time, largest hole 24832 B");
}

TEST(Placement, MalformedRequestsAreInternalErrors) {
  const MachineDescription& m = target::test16();
  auto bad = [&](AllocationRequest r, std::vector<ElementConflict> c = {}) {
    TilePlacementInput in;
    in.tile = 3;
    in.requests = {act("ok", 64, 0, 0), std::move(r)};
    in.conflicts = std::move(c);
    return error_of(m, in, false, kExitInternal);
  };
  EXPECT_NE(bad(act("z", 0, 0, 0)).find("tile 3: request 1 \"z\": size is 0 B"), std::string::npos);
  EXPECT_NE(bad(act("z", 64, 0, 0, RegionNeed::any, 12)).find("alignment 12 is not a power of two"),
            std::string::npos);
  EXPECT_NE(bad(act("z", 64, 5, 4)).find("lifetime phases 5..4 is empty"), std::string::npos);
  EXPECT_NE(bad(act("z", 64, 0, 0), {{0, 2}}).find("element conflict 0/2"), std::string::npos);
  TilePlacementInput outside;
  outside.tile = 16;
  EXPECT_NE(error_of(m, outside, false, kExitInternal).find("outside the machine"), std::string::npos);
}

}  // namespace
}  // namespace tilevit::compiler
