// Profiling builds: the tiles' sample buffers are reserved only when asked for, and the
// verifier still names a bad tile of a profiled program.
#include <gtest/gtest.h>

#include <string>

#include "small_model.hpp"

using namespace tilevit;
using test_support::compile_small;

TEST(Profile, ProfilingBuildReservesSpaceAndUnprofiledBuildDoesNot) {
  const auto plain = compile_small(2, {});
  const auto profiled = compile_small(2, {compiler::Plan{}, {true, {compiler::Granularity::kernel, 3}}});
  EXPECT_EQ(plain.executable.program.allocations.size() + 16, profiled.executable.program.allocations.size());
  EXPECT_GT(profiled.stats.peak_tile_bytes, plain.stats.peak_tile_bytes);
}

// The verifier reports a call or transfer on a tile the machine lacks; counting the
// profiling records of such a program must not throw first.
TEST(Profile, VerifierReportsBadTilesOfAProfiledProgram) {
  auto m = compile_small(2, {compiler::Plan{}, {true, {compiler::Granularity::kernel, 1}}});
  auto& program = m.executable.program;
  for (auto& s : program.steps)
    if (!s.compute.empty() && !s.exchange.empty()) {
      s.compute[0].tile = 99;
      s.exchange[0].destinations[0].tile = 77;
      break;
    }
  compiler::VerifyReport report;
  ASSERT_NO_THROW(report = compiler::verify_program(target::test16(), program, m.executable.bindings, m.executable.tensors));
  EXPECT_FALSE(report.ok());
  bool named = false;
  for (const auto& v : report.violations) named |= v.find("99") != std::string::npos;
  EXPECT_TRUE(named);
}
