// The compiled program through the package codec: it round-trips, still verifies, and
// its bytes do not depend on the thread count.
#include <gtest/gtest.h>
#include <omp.h>

#include "package/program_codec.hpp"
#include "small_model.hpp"

using namespace tilevit;
using test_support::compile_small;

namespace {
std::vector<std::byte> package_bytes(const compiler::CompiledModel& m) {
  return package::encode_package(m.executable).bytes();
}
}  // namespace

TEST(Compile, PackageRoundTripsAndVerifies) {
  const auto m = compile_small();
  const auto container = package::Container::from_bytes(package_bytes(m), "small.tvpkg");
  const auto c = package::decode_package(container);
  EXPECT_EQ(c.program.steps.size(), m.executable.program.steps.size());
  EXPECT_EQ(c.program.allocations.size(), m.executable.program.allocations.size());
  EXPECT_EQ(c.bindings.size(), m.executable.bindings.size());
  EXPECT_EQ(c.config.width, 144);
  EXPECT_EQ(c.machine, target::test16());
  EXPECT_TRUE(compiler::verify_program(c.machine, c.program, c.bindings, c.tensors).ok());
}

TEST(Compile, SameBytesWithOneOrTwoThreads) {
  omp_set_num_threads(1);
  const auto a = package_bytes(compile_small());
  omp_set_num_threads(2);
  const auto b = package_bytes(compile_small());
  EXPECT_EQ(a, b);
}
