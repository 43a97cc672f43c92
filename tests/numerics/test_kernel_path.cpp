#include <gtest/gtest.h>

#include <string>

#include "numerics/cpu.hpp"
#include "numerics/kernel_path.hpp"

using namespace tilevit::numerics;

TEST(KernelPath, WithoutASelectionTheFastestAvailable) {
  EXPECT_EQ(kernel_path(), has_avx512() ? KernelPath::avx512 : KernelPath::avx2);
  EXPECT_EQ(kernel_path(), available_kernel_paths().back());
}

TEST(KernelPath, AvailablePathsStartWithScalar) {
  const auto paths = available_kernel_paths();
  ASSERT_EQ(paths.size(), has_avx512() ? 3u : 2u);
  EXPECT_EQ(paths[0], KernelPath::scalar);
  EXPECT_EQ(paths[1], KernelPath::avx2);
  for (KernelPath path : paths) EXPECT_NE(std::string(kernel_path_name(path)), "unknown");
}

// Selections nest: each one ends by restoring the one before, the last the CPU's choice.
TEST(KernelPath, ScopedSelectionRestoresThePreviousOne) {
  const KernelPath automatic = kernel_path();
  {
    ScopedKernelPath scalar(KernelPath::scalar);
    EXPECT_EQ(kernel_path(), KernelPath::scalar);
    {
      ScopedKernelPath avx2(KernelPath::avx2);
      EXPECT_EQ(kernel_path(), KernelPath::avx2);
    }
    EXPECT_EQ(kernel_path(), KernelPath::scalar);
  }
  EXPECT_EQ(kernel_path(), automatic);
}

// AVX-512 selected on a CPU without it runs as AVX2.
TEST(KernelPath, Avx512FallsBackToAvx2WithoutTheCpu) {
  ScopedKernelPath avx512(KernelPath::avx512);
  EXPECT_EQ(kernel_path(), has_avx512() ? KernelPath::avx512 : KernelPath::avx2);
}
