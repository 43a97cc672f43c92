// device_gemm on every kernel path against its definition, bit for bit: every register-tile
// shape and remainder of rows, columns and inner extent, chunked inner extents (> 384),
// each precision's rounding, leading dimensions wider than the extents, A as floats, FP8
// codes or transposed, and C as floats or binary16.
#include <gtest/gtest.h>
#include <omp.h>

#include <array>
#include <random>
#include <string>
#include <vector>

#include "kernel_path_test.hpp"
#include "numerics/device_kernels.hpp"

using namespace tilevit::numerics;
using namespace tilevit::numerics::testing;

namespace {

enum class AStorage { floats, codes, transposed };

struct GemmShape {
  int rows, columns, inner;
};

// The roles' roundings: FP8 (FP16 after every 32-step panel), FP16 (once at the end),
// and attention's FP32 products (none).
struct Rounding {
  int panel;
  bool round_output;
};
constexpr Rounding kRoundings[] = {{32, true}, {0, true}, {0, false}};

// Shapes that walk rows, columns and the inner extent in turn over their edge values
// (strip widths 16, 64 and 64 + 16; tile heights 16, 12, 8, 6, 5, 4, 2, 1; chunks of
// 256 above 384). All stay on one thread (IndependentOfThreadCount covers the threads):
// on a busy machine the team's waiting threads would slow the tests tenfold.
std::vector<GemmShape> edge_shapes() {
  std::vector<GemmShape> shapes;
  for (int n : {1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 48, 63, 64, 65, 72, 79, 80, 81, 96, 128, 129, 144, 183, 1152})
    shapes.push_back({3, n, 17});
  for (int m : {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 15, 16, 17, 25, 31, 32, 33}) shapes.push_back({m, 72, 24});
  for (int k : {0, 1, 7, 31, 32, 33, 63, 64, 65, 72, 384, 385, 700}) shapes.push_back({3, 20, k});
  return shapes;
}

// One GEMM's operands and C (with sentinels in the gaps of wider leading dimensions).
struct GemmInputs {
  GemmShape shape;
  int pad;  // added to every leading dimension
  AStorage storage;
  std::vector<float> a, b;
  std::vector<std::uint8_t> codes;
  std::array<float, 256> table{};

  GemmInputs(GemmShape s, int pad_, AStorage storage_, std::mt19937& rng) : shape(s), pad(pad_), storage(storage_) {
    const std::size_t lda = storage == AStorage::transposed ? s.rows + pad : s.inner + pad;
    const std::size_t a_rows = storage == AStorage::transposed ? s.inner : s.rows;
    b = random_fp8(static_cast<std::size_t>(s.inner) * (s.columns + pad), rng);
    if (storage != AStorage::codes) {
      a = random_fp8(a_rows * lda, rng);
      return;
    }
    table = fp8_decode_table(Fp8Format::F143, -2);
    codes.resize(a_rows * lda);
    for (std::size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<std::uint8_t>(i < 256 ? i : rng());  // NaN too
  }

  DeviceGemm gemm(Rounding r, float* c) const {
    const GemmShape& s = shape;
    DeviceGemm g{s.rows, s.columns, s.inner, a.data(), 0, b.data(), s.columns + pad, c, s.columns + pad, r.panel, r.round_output};
    g.lda = storage == AStorage::transposed ? s.rows + pad : s.inner + pad;
    g.a_transposed = storage == AStorage::transposed;
    if (storage == AStorage::codes) g.a = nullptr, g.a_codes = codes.data(), g.a_table = table.data();
    return g;
  }

  std::size_t c_size() const { return static_cast<std::size_t>(shape.rows) * (shape.columns + pad); }

  // C as floats, its gaps still the sentinel.
  std::vector<float> run(Rounding r) const {
    std::vector<float> c(c_size(), -7.0f);
    device_gemm(gemm(r, c.data()));
    return c;
  }

  // C as binary16 bits (ldc_fp16 = columns + pad + 1), its gaps still the sentinel.
  std::vector<std::uint16_t> run_fp16(Rounding r) const {
    std::vector<float> parking(c_size());
    std::vector<std::uint16_t> bits(static_cast<std::size_t>(shape.rows) * (shape.columns + pad + 1), 0xABCD);
    DeviceGemm g = gemm(r, parking.data());
    g.c_fp16 = bits.data(), g.ldc_fp16 = shape.columns + pad + 1;
    device_gemm(g);
    return bits;
  }

  std::string describe(Rounding r) const {
    return std::to_string(shape.rows) + "x" + std::to_string(shape.columns) + "x" + std::to_string(shape.inner) + " pad " +
           std::to_string(pad) + " A " + std::to_string(static_cast<int>(storage)) + " panel " + std::to_string(r.panel) +
           " round " + std::to_string(r.round_output);
  }
};

class DeviceGemmPaths : public KernelPathTest {
 protected:
  // Every edge shape and rounding, tight and padded leading dimensions, with A stored
  // this way: C as floats and as binary16 equal the definition's.
  void check_every_shape(AStorage storage) {
    std::mt19937 rng(static_cast<unsigned>(storage) + 1);
    for (const GemmShape& shape : edge_shapes())
      for (int pad : {0, 3}) {
        const GemmInputs in(shape, pad, storage, rng);
        for (Rounding r : kRoundings) {
          EXPECT_SAME_BITS(in.run(r), by_definition([&] { return in.run(r); })) << in.describe(r);
          EXPECT_SAME_BITS(in.run_fp16(r), by_definition([&] { return in.run_fp16(r); })) << in.describe(r);
        }
      }
  }
};

TEST_P(DeviceGemmPaths, FloatAEqualsDefinition) { check_every_shape(AStorage::floats); }
TEST_P(DeviceGemmPaths, CodesAEqualsDefinition) { check_every_shape(AStorage::codes); }
TEST_P(DeviceGemmPaths, TransposedAEqualsDefinition) { check_every_shape(AStorage::transposed); }

// No rows or no columns: nothing is written.
TEST_P(DeviceGemmPaths, EmptyCIsNotWritten) {
  std::mt19937 rng(4);
  for (GemmShape shape : {GemmShape{0, 16, 8}, GemmShape{4, 0, 8}, GemmShape{0, 0, 0}}) {
    const GemmInputs in(shape, 2, AStorage::floats, rng);
    std::vector<float> c(16, -7.0f);
    device_gemm(in.gemm(kRoundings[0], c.data()));
    EXPECT_EQ(c, std::vector<float>(16, -7.0f));
  }
}

// Big GEMMs run over column strips in parallel: the thread count changes nothing.
TEST_P(DeviceGemmPaths, IndependentOfThreadCount) {
  std::mt19937 rng(2);
  const GemmInputs in({33, 300, 160}, 0, AStorage::floats, rng);
  omp_set_num_threads(1);
  const auto one = in.run(kRoundings[0]);
  omp_set_num_threads(2);
  EXPECT_EQ(in.run(kRoundings[0]), one);
  EXPECT_SAME_BITS(one, by_definition([&] { return in.run(kRoundings[0]); }));
}

TILEVIT_TEST_EVERY_KERNEL_PATH(DeviceGemmPaths);

}  // namespace
