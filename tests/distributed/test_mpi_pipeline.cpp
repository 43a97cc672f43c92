// Which chips each MPI rank runs: contiguous, as even as possible, no rank without one.
#include <gtest/gtest.h>

#include "distributed/mpi_pipeline.hpp"
#include "support/error.hpp"

using namespace tilevit;

namespace {

TEST(MpiRanks, ChipsAreContiguousAndEven) {
  using Range = std::pair<std::uint32_t, std::uint32_t>;
  EXPECT_EQ(distributed::chips_of_rank(0, 1, 4), (Range{0, 4}));
  EXPECT_EQ(distributed::chips_of_rank(0, 2, 4), (Range{0, 2}));
  EXPECT_EQ(distributed::chips_of_rank(1, 2, 4), (Range{2, 4}));
  EXPECT_EQ(distributed::chips_of_rank(0, 3, 4), (Range{0, 2}));  // the first ranks take the extra chips
  EXPECT_EQ(distributed::chips_of_rank(2, 3, 4), (Range{3, 4}));
  EXPECT_EQ(distributed::rank_of_chip(3, 3, 4), 2);
  EXPECT_EQ(distributed::rank_of_chip(1, 3, 4), 0);
}

TEST(MpiRanks, MoreRanksThanChipsIsAUsageError) {
  try {
    distributed::chips_of_rank(0, 3, 2);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_STREQ(e.what(), "mpirun -np 3: more ranks than the machine's 2 chips (give at most 2)");
  }
}

}  // namespace
