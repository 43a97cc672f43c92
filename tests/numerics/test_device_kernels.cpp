// The element-wise, normalisation and attention kernels on every kernel path against
// their definitions, bit for bit, over lengths at and around every vector width, with
// special values (signed zeros, infinities, NaN, subnormals) among the inputs.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernel_path_test.hpp"
#include "numerics/device_kernels.hpp"
#include "numerics/fp8.hpp"

using namespace tilevit::numerics;
using namespace tilevit::numerics::testing;

namespace {

using DeviceKernelPaths = KernelPathTest;

TEST_P(DeviceKernelPaths, ReduceAddEqualsDefinition) {
  std::mt19937 rng(1);
  for (int parts : {1, 2, 5})
    for (int n : kEdgeSizes) {
      const auto partials = with_specials(cancelling_terms(parts, n, rng));
      const auto bits = fp16_bits_of(partials);
      const auto sum = [&] {
        std::vector<float> out(n, -7.0f);
        device_reduce_add(partials.data(), parts, n, out.data());
        return out;
      };
      const auto sum_fp16 = [&] {
        std::vector<std::uint16_t> out(n, 0xABCD);
        device_reduce_add_fp16(bits.data(), parts, n, out.data());
        return out;
      };
      EXPECT_SAME_BITS(sum(), by_definition(sum)) << parts << " x " << n;
      EXPECT_SAME_BITS(sum_fp16(), by_definition(sum_fp16)) << parts << " x " << n;
    }
}

// Into a separate output and in place over either operand.
TEST_P(DeviceKernelPaths, AddEqualsDefinition) {
  std::mt19937 rng(2);
  for (int n : kEdgeSizes) {
    const auto a = random_fp16_with_specials(n, rng), b = random_fp16(n, rng);
    const auto a_bits = fp16_bits_of(a), b_bits = fp16_bits_of(b);
    for (int into : {0, 1, 2}) {  // a separate output, a, b
      const auto add = [&] {
        std::vector<float> x = a, y = b, out(n, -7.0f);
        device_add(x.data(), y.data(), into == 0 ? out.data() : into == 1 ? x.data() : y.data(), n);
        return into == 0 ? out : into == 1 ? x : y;
      };
      const auto add_fp16 = [&] {
        std::vector<std::uint16_t> x = a_bits, y = b_bits, out(n, 0xABCD);
        device_add_fp16(x.data(), y.data(), into == 0 ? out.data() : into == 1 ? x.data() : y.data(), n);
        return into == 0 ? out : into == 1 ? x : y;
      };
      EXPECT_SAME_BITS(add(), by_definition(add)) << n << " into " << into;
      EXPECT_SAME_BITS(add_fp16(), by_definition(add_fp16)) << n << " into " << into;
    }
  }
}

TEST_P(DeviceKernelPaths, LayerNormEqualsDefinition) {
  std::mt19937 rng(3);
  for (int width : kEdgeSizes) {
    if (width == 0) continue;
    const auto x = random_fp16(width, rng, 2.0f), gamma = random_fp16(width, rng), beta = random_fp16(width, rng);
    const auto norm = [&] {
      std::vector<float> out(width + 1, -7.0f);
      device_layernorm_row(x.data(), gamma.data(), beta.data(), out.data(), width, 1e-6f);
      return out;
    };
    EXPECT_SAME_BITS(norm(), by_definition(norm)) << width;
  }
}

// The values every exp and GELU lane must get right: a dense walk over the range, the
// edges of exp's clamp and flush, and every 4099th float bit pattern (all signs,
// exponents, subnormals, infinities and NaNs).
std::vector<float> exp_walk() {
  std::vector<float> x;
  for (float v = -100.0f; v < 100.0f; v += 0.0137f) x.push_back(v);
  for (float v : {-87.0f, -87.0001f, -86.9999f, -87.25f, -87.5f, 88.0f, 88.25f, 88.5f, 0.0f, -0.0f, 1e-30f, INFINITY, -INFINITY})
    x.push_back(v);
  for (std::uint64_t u = 0; u <= 0xFFFFFFFFull; u += 4099) x.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(u)));
  return x;
}

TEST_P(DeviceKernelPaths, ExpAndGeluEqualDefinitionOverTheFloats) {
  const auto x = exp_walk();
  const auto exp = [&] {
    std::vector<float> out(x.size());
    device_exp_array(x.data(), 0.25f, out.data(), out.size());
    return out;
  };
  const auto gelu = [&] {
    std::vector<float> out(x.size());
    device_gelu(x.data(), out.data(), out.size());
    return out;
  };
  EXPECT_SAME_BITS(exp(), by_definition(exp));
  EXPECT_SAME_BITS(gelu(), by_definition(gelu));
}

// Every length's tail, in a separate output (nothing written beyond) and in place.
TEST_P(DeviceKernelPaths, ExpAndGeluEqualDefinitionAtEveryLength) {
  std::mt19937 rng(4);
  for (int n : kEdgeSizes) {
    const auto x = random_fp16_with_specials(n, rng, 3.0f);
    for (bool in_place : {false, true}) {
      const auto exp = [&] {
        std::vector<float> in = x, out(n + 1, -7.0f);
        device_exp_array(in.data(), -1.5f, in_place ? in.data() : out.data(), n);
        return in_place ? in : out;
      };
      const auto gelu = [&] {
        std::vector<float> in = x, out(n + 1, -7.0f);
        device_gelu(in.data(), in_place ? in.data() : out.data(), n);
        return in_place ? in : out;
      };
      EXPECT_SAME_BITS(exp(), by_definition(exp)) << n << " in place " << in_place;
      EXPECT_SAME_BITS(gelu(), by_definition(gelu)) << n << " in place " << in_place;
    }
  }
}

TEST_P(DeviceKernelPaths, SoftmaxAndNormaliseRowsEqualDefinition) {
  std::mt19937 rng(5);
  for (int n : kEdgeSizes) {
    const auto s = random_fp16_with_specials(n, rng, 4.0f);
    const auto softmax = [&] {
      std::vector<float> row = s;
      row.push_back(device_softmax_row(row.data(), n, 0.1178511f));
      return row;
    };
    EXPECT_SAME_BITS(softmax(), by_definition(softmax)) << n;
    for (float l : {183.25f, 0.0f}) {
      const auto normalise = [&] {
        std::vector<float> out(n + 1, -7.0f);
        device_normalise_row(s.data(), l, out.data(), n);
        return out;
      };
      EXPECT_SAME_BITS(normalise(), by_definition(normalise)) << n << " l " << l;
    }
  }
}

// One head's attention over one key block: Q, K, V of FP16 values with special values in
// the first rows (head dim d, rows padded to ld).
struct AttentionInputs {
  int queries, keys, d, ld;
  std::vector<float> q, k, v;

  AttentionInputs(int queries_, int keys_, int d_, int ld_, std::mt19937& rng)
      : queries(queries_), keys(keys_), d(d_), ld(ld_), q(random_fp16_with_specials(static_cast<std::size_t>(queries) * ld, rng)),
        k(random_fp16(static_cast<std::size_t>(keys) * ld, rng)), v(random_fp16_with_specials(static_cast<std::size_t>(keys) * ld, rng)) {}

  // Q, K and V as F143 values (FP8 attention products' operands).
  void round_to_f143(int scale) {
    for (auto* x : {&q, &k, &v}) fp8_round(x->data(), x->size(), Fp8Format::F143, scale);
  }

  // Scores and row maxima, then probabilities and partials (the probabilities over the
  // scores if in_place), all in one vector.
  std::vector<float> run(bool in_place, AttentionPrecision precision = {}) const {
    std::vector<float> s(static_cast<std::size_t>(queries) * keys), m(queries), p(s.size()), part(queries * (d + 1));
    device_attention_scores(q.data(), ld, k.data(), ld, queries, keys, d, 0.1178511f, s.data(), m.data(), precision);
    std::vector<float> all = s;
    all.insert(all.end(), m.begin(), m.end());
    device_attention_values(s.data(), in_place ? s.data() : p.data(), m.data(), queries, keys, v.data(), ld, d, part.data(),
                            precision);
    all.insert(all.end(), in_place ? s.begin() : p.begin(), in_place ? s.end() : p.end());
    all.insert(all.end(), part.begin(), part.end());
    return all;
  }
};

TEST_P(DeviceKernelPaths, AttentionScoresAndValuesEqualDefinition) {
  std::mt19937 rng(6);
  // At most 33 x 27 x 72 multiply-adds per GEMM: one thread (see test_device_gemm.cpp).
  for (int queries : {1, 7, 8, 9, 15, 16, 17, 25, 32, 33})
    for (int keys : {1, 7, 16, 17, 27})
      for (auto [d, ld] : {std::pair{72, 72}, std::pair{72, 80}, std::pair{13, 13}}) {
        const AttentionInputs in(queries, keys, d, ld, rng);
        for (bool in_place : {false, true})
          EXPECT_SAME_BITS(in.run(in_place), by_definition([&] { return in.run(in_place); }))
              << queries << " x " << keys << " d " << d << " ld " << ld << " in place " << in_place;
      }
}

// FP8 products: F143 operands, panel-rounded sums over 72 head dims and over more than
// one K32 panel of keys, p cast to F143.
TEST_P(DeviceKernelPaths, FP8AttentionScoresAndValuesEqualDefinition) {
  std::mt19937 rng(8);
  for (int queries : {1, 8, 9, 17, 33})
    for (int keys : {1, 31, 32, 33, 70})
      for (auto [d, ld] : {std::pair{72, 72}, std::pair{72, 80}, std::pair{16, 16}}) {
        AttentionInputs in(queries, keys, d, ld, rng);
        in.round_to_f143(-4);
        for (bool in_place : {false, true})
          EXPECT_SAME_BITS(in.run(in_place, AttentionPrecision{true}),
                           by_definition([&] { return in.run(in_place, AttentionPrecision{true}); }))
              << queries << " x " << keys << " d " << d << " ld " << ld << " in place " << in_place;
      }
}

TEST_P(DeviceKernelPaths, AttentionCombineEqualsDefinition) {
  std::mt19937 rng(7);
  for (int d : {1, 3, 8, 13, 16, 17, 72})
    for (int blocks : {1, 2, 4})
      for (int rows : {1, 5}) {
        // o_b and l_b summed over the blocks; l_b moderate and positive.
        auto parts = cancelling_terms(blocks, static_cast<std::size_t>(rows) * (d + 1), rng);
        for (int i = 0; i < blocks * rows; ++i) parts[static_cast<std::size_t>(i) * (d + 1) + d] = 1.5f + static_cast<float>(i % 4);
        parts = with_specials(parts);
        const auto combine = [&] {
          std::vector<float> out(static_cast<std::size_t>(rows) * (d + 2), -7.0f);
          device_attention_combine(parts.data(), blocks, rows, d, out.data(), d + 2);
          return out;
        };
        EXPECT_SAME_BITS(combine(), by_definition(combine)) << d << " " << blocks << " " << rows;
      }
}

TILEVIT_TEST_EVERY_KERNEL_PATH(DeviceKernelPaths);

// GEMM operand buffers start on a 64 B line and hold the n floats asked for, whatever the
// storage held before (it only grows).
TEST(DeviceKernels, LineAlignedBuffersStartOnALine) {
  std::vector<float> storage;
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(15), std::size_t(13824), std::size_t(7)}) {
    float* p = line_aligned(storage, n);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 64, 0u) << n;
    EXPECT_GE(p, storage.data());
    EXPECT_LE(p + n, storage.data() + storage.size()) << n;
  }
}

}  // namespace
