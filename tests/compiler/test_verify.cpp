// The verifier's own limits: it stays fast and bounded whatever a crafted package holds.
#include <gtest/gtest.h>

#include <chrono>

#include "small_model.hpp"

using namespace tilevit;

// Fuzz finding: 16,000 allocations at one address made verify build a message for each
// of 128 million overlapping pairs (seconds). Messages are built only up to the limit,
// and the pair sweep stops after a bounded number of pairs.
TEST(Verify, ManyOverlappingAllocationsAreCountedQuickly) {
  auto m = test_support::compile_small();
  auto& allocations = m.lowered.program.allocations;
  const compiler::Allocation first = allocations.front();
  for (int i = 0; i < 4000; ++i) allocations.push_back(first);
  const auto start = std::chrono::steady_clock::now();
  const auto report = test_support::verify_on_test16(m);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  ASSERT_FALSE(report.ok());
  EXPECT_LE(report.violations.size(), 21u);  // the limit, plus the note that checking stopped
  EXPECT_GT(report.violation_count, 1'000'000u);
  EXPECT_NE(report.violations.front().find("overlap in address while both live"), std::string::npos)
      << report.violations.front();
  bool stopped = false;
  for (const auto& v : report.violations) stopped = stopped || v.find("stopped checking") != std::string::npos;
  EXPECT_TRUE(stopped);
}
