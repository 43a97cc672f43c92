#include <gtest/gtest.h>

#include <cstring>
#include <omp.h>

#include <bit>
#include <cmath>
#include <random>

#include "numerics/device_kernels.hpp"
#include "numerics/device_math.hpp"
#include "numerics/fp16.hpp"
#include "numerics/fp8.hpp"

using namespace tilevit::numerics;

namespace {

// The definition in docs/NUMERICS.md written out naively: sequential FP32 sum of exact
// products, FP16 rounding after every `panel` steps and at the end.
float gemm_by_definition(const std::vector<float>& a, const std::vector<float>& b, int k_dim, int n_dim, int row,
                         int col, int panel, bool round_output) {
  float t = 0;
  for (int k = 0; k < k_dim; ++k) {
    const float product = a[row * k_dim + k] * b[k * n_dim + col];
    t = t + product;
    if (panel > 0 && ((k + 1) % panel == 0 || k + 1 == k_dim)) t = round_fp16(t);
  }
  return round_output ? round_fp16(t) : t;
}

std::vector<float> random_fp8(std::size_t n, std::mt19937& rng, int scale) {
  std::normal_distribution<float> dist(0.0f, 0.5f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  fp8_round(v.data(), n, Fp8Format::F143, scale);
  return v;
}

}  // namespace

TEST(DeviceGemm, MatchesDefinitionWithTailsAndPanels) {
  std::mt19937 rng(1);
  for (auto [m, n, k] : {std::tuple{5, 37, 70}, {4, 16, 32}, {9, 50, 129}, {1, 3, 1}}) {
    const auto a = random_fp8(static_cast<std::size_t>(m) * k, rng, -1);
    const auto b = random_fp8(static_cast<std::size_t>(k) * n, rng, -1);
    for (int panel : {0, 32}) {
      for (bool round_output : {false, true}) {
        std::vector<float> c(static_cast<std::size_t>(m) * n);
        device_gemm(DeviceGemm{m, n, k, a.data(), k, b.data(), n, c.data(), n, panel, round_output});
        for (int i = 0; i < m; ++i)
          for (int j = 0; j < n; ++j)
            ASSERT_EQ(c[i * n + j], gemm_by_definition(a, b, k, n, i, j, panel, round_output))
                << m << "x" << n << "x" << k << " panel " << panel << " at " << i << "," << j;
      }
    }
  }
}

TEST(DeviceGemm, PanelRoundingLosesSmallContributions) {
  // 1.0 in the first panel and 2^-12 in three later panels: each panel's FP16 rounding
  // drops the 2^-12, FP32 accumulation keeps 3 * 2^-12 and rounds to 1 + 2^-10.
  const int k = 97;
  std::vector<float> a(k, 0.0f), b(k, 1.0f);
  a[0] = 1.0f;
  a[32] = a[64] = a[96] = std::ldexp(1.0f, -12);
  float panelled = 0, fp32 = 0;
  device_gemm(DeviceGemm{1, 1, k, a.data(), k, b.data(), 1, &panelled, 1, 32, true});
  device_gemm(DeviceGemm{1, 1, k, a.data(), k, b.data(), 1, &fp32, 1, 0, true});
  EXPECT_EQ(panelled, 1.0f);
  EXPECT_EQ(fp32, 1.0f + std::ldexp(1.0f, -10));
}

TEST(DeviceGemm, IndependentOfThreadCount) {
  std::mt19937 rng(2);
  const int m = 33, n = 300, k = 160;
  const auto a = random_fp8(static_cast<std::size_t>(m) * k, rng, 0);
  const auto b = random_fp8(static_cast<std::size_t>(k) * n, rng, 0);
  std::vector<float> c1(static_cast<std::size_t>(m) * n), c2(c1.size());
  omp_set_num_threads(1);
  device_gemm(DeviceGemm{m, n, k, a.data(), k, b.data(), n, c1.data(), n, 32, true});
  omp_set_num_threads(2);
  device_gemm(DeviceGemm{m, n, k, a.data(), k, b.data(), n, c2.data(), n, 32, true});
  EXPECT_EQ(c1, c2);
}

// Every instruction-set path, register-tile shape, row/column remainder, leading
// dimension and inner chunking (inner > 384) gives the definition's bits.
TEST(DeviceGemm, EveryPathMatchesDefinition) {
  std::mt19937 rng(3);
  for (auto [m, n, k] : {std::tuple{27, 64, 160}, {19, 48, 288}, {13, 33, 72}, {7, 183, 72}, {17, 72, 183}, {3, 17, 700},
                         {1, 16, 64}, {12, 1, 5}, {25, 130, 40}, {6, 80, 50}, {11, 65, 33}, {4, 144, 20}}) {
    const auto a = random_fp8(static_cast<std::size_t>(m) * k, rng, -1);
    const auto b = random_fp8(static_cast<std::size_t>(k) * (n + 3), rng, -1);  // ldb = n + 3
    for (auto path : {GemmPath::avx512, GemmPath::avx2, GemmPath::scalar}) {
      force_gemm_path(path);
      for (int panel : {0, 32}) {
        std::vector<float> c(static_cast<std::size_t>(m) * (n + 1), -7.0f);  // ldc = n + 1: the gap is untouched
        device_gemm(DeviceGemm{m, n, k, a.data(), k, b.data(), n + 3, c.data(), n + 1, panel, panel > 0});
        for (int i = 0; i < m; ++i) {
          ASSERT_EQ(c[static_cast<std::size_t>(i) * (n + 1) + n], -7.0f);
          for (int j = 0; j < n; ++j) {
            float t = 0;
            for (int kk = 0; kk < k; ++kk) {
              t = t + a[static_cast<std::size_t>(i) * k + kk] * b[static_cast<std::size_t>(kk) * (n + 3) + j];
              if (panel > 0 && ((kk + 1) % panel == 0 || kk + 1 == k)) t = round_fp16(t);
            }
            ASSERT_EQ(c[static_cast<std::size_t>(i) * (n + 1) + j], t)
                << "path " << int(path) << " " << m << "x" << n << "x" << k << " panel " << panel << " at " << i << "," << j;
          }
        }
      }
    }
    force_gemm_path(GemmPath::automatic);
  }
}

// device_add on binary16 bits equals device_add on their values, in place too: every
// 11th binary16 pattern (NaNs, infinities, subnormals, signed zeros) against random ones.
TEST(DeviceAdd, Fp16BitsEqualFloatAdd) {
  std::mt19937 rng(9);
  std::vector<std::uint16_t> a, b;
  for (std::uint32_t h = 0; h < 65536; h += 11) a.push_back(static_cast<std::uint16_t>(h)), b.push_back(static_cast<std::uint16_t>(rng()));
  a.push_back(0x7C00), b.push_back(0xFC00);  // inf + -inf; odd length: a scalar tail
  std::vector<float> fa(a.size()), fb(b.size()), want(a.size());
  from_fp16_bits(a.data(), fa.data(), a.size());
  from_fp16_bits(b.data(), fb.data(), b.size());
  device_add(fa.data(), fb.data(), want.data(), want.size());
  std::vector<std::uint16_t> got(a.size()), in_place = a;
  device_add_fp16(a.data(), b.data(), got.data(), got.size());
  device_add_fp16(in_place.data(), b.data(), in_place.data(), in_place.size());
  // NaN's payload is whichever operand the compiler puts first (addition commutes), in
  // either form; NaN stays NaN.
  auto same = [](std::uint16_t x, std::uint16_t y) { return x == y || (std::isnan(fp16_value(x)) && std::isnan(fp16_value(y))); };
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_TRUE(same(got[i], fp16_bits(want[i]))) << "a " << a[i] << " b " << b[i] << ": " << got[i] << " vs " << fp16_bits(want[i]);
    ASSERT_TRUE(same(in_place[i], got[i]));
  }
}

// A given as FP8 codes through the decode table (lda > inner, every code including NaN
// 0x80 and the extremes) gives the bits of A decoded first, on every path.
TEST(DeviceGemm, CodesThroughTheTableEqualDecodedA) {
  std::mt19937 rng(5);
  for (int scale : {-4, 0, 3}) {
    const auto table = fp8_decode_table(Fp8Format::F143, scale);
    for (auto [m, n, k] : {std::tuple{27, 64, 160}, {19, 48, 288}, {13, 72, 72}, {5, 17, 33}, {30, 130, 40}}) {
      const int lda = k + 5;
      std::vector<std::uint8_t> codes(static_cast<std::size_t>(m) * lda);
      for (std::size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<std::uint8_t>(i < 256 ? i : rng());
      std::vector<float> a(codes.size());
      fp8_decode(codes.data(), a.data(), a.size(), Fp8Format::F143, scale);
      const auto b = random_fp8(static_cast<std::size_t>(k) * n, rng, -1);
      for (auto path : {GemmPath::avx512, GemmPath::avx2, GemmPath::scalar}) {
        force_gemm_path(path);
        std::vector<float> want(static_cast<std::size_t>(m) * n), got(want.size());
        device_gemm(DeviceGemm{m, n, k, a.data(), lda, b.data(), n, want.data(), n, 32, true});
        DeviceGemm g{m, n, k, nullptr, lda, b.data(), n, got.data(), n, 32, true};
        g.a_codes = codes.data(), g.a_table = table.data();
        device_gemm(g);
        ASSERT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * 4))
            << "path " << int(path) << " " << m << "x" << n << "x" << k << " scale " << scale;
      }
      force_gemm_path(GemmPath::automatic);
    }
  }
}

// A read transposed (a_transposed: element (r, k) at a[k * lda + r]) gives the bits of the
// row-major A, on every path, register-tile shape and tail, with and without panels.
TEST(DeviceGemm, TransposedAEqualsRowMajorA) {
  std::mt19937 rng(6);
  for (auto [m, n, k] : {std::tuple{32, 72, 183}, {25, 72, 180}, {27, 64, 160}, {19, 48, 288}, {5, 17, 33}, {1, 80, 7}}) {
    const auto a = random_fp8(static_cast<std::size_t>(m) * k, rng, -1);
    const int lda_t = m + 3;
    std::vector<float> at(static_cast<std::size_t>(k) * lda_t, NAN);
    for (int r = 0; r < m; ++r)
      for (int kk = 0; kk < k; ++kk) at[static_cast<std::size_t>(kk) * lda_t + r] = a[static_cast<std::size_t>(r) * k + kk];
    const auto b = random_fp8(static_cast<std::size_t>(k) * n, rng, -1);
    for (auto path : {GemmPath::avx512, GemmPath::avx2, GemmPath::scalar}) {
      force_gemm_path(path);
      for (int panel : {0, 32}) {
        std::vector<float> want(static_cast<std::size_t>(m) * n), got(want.size());
        device_gemm(DeviceGemm{m, n, k, a.data(), k, b.data(), n, want.data(), n, panel, panel > 0});
        DeviceGemm g{m, n, k, at.data(), lda_t, b.data(), n, got.data(), n, panel, panel > 0};
        g.a_transposed = true;
        device_gemm(g);
        ASSERT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * 4))
            << "path " << int(path) << " " << m << "x" << n << "x" << k << " panel " << panel;
      }
    }
    force_gemm_path(GemmPath::automatic);
  }
}

// Binary16 output straight from the registers (c_fp16) gives the bits of the float result
// rounded to FP16, on every path, register-tile shape, tail, chunked inner extent (> 384),
// with and without panels, A as floats or as codes (NaN included); the gap of a wider
// ldc_fp16 is untouched.
TEST(DeviceGemm, Fp16OutputEqualsRoundedFloatOutput) {
  std::mt19937 rng(6);
  const auto table = fp8_decode_table(Fp8Format::F143, -2);
  for (auto [m, n, k] : {std::tuple{27, 64, 160}, {19, 48, 288}, {13, 33, 72}, {7, 183, 72}, {17, 72, 183}, {3, 17, 700},
                         {12, 1, 5}, {25, 130, 40}, {11, 65, 33}}) {
    std::vector<std::uint8_t> codes(static_cast<std::size_t>(m) * k);
    for (std::size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<std::uint8_t>(i < 256 ? i : rng());
    std::vector<float> a(codes.size());
    fp8_decode(codes.data(), a.data(), a.size(), Fp8Format::F143, -2);
    const auto b = random_fp8(static_cast<std::size_t>(k) * n, rng, -1);
    for (auto path : {GemmPath::avx512, GemmPath::avx2, GemmPath::scalar}) {
      force_gemm_path(path);
      for (int panel : {0, 32})
        for (bool as_codes : {false, true}) {
          std::vector<float> want(static_cast<std::size_t>(m) * n), scratch(want.size());
          DeviceGemm g{m, n, k, a.data(), k, b.data(), n, want.data(), n, panel, true};
          if (as_codes) g.a_codes = codes.data(), g.a_table = table.data();
          device_gemm(g);
          std::vector<std::uint16_t> want_bits(want.size()), got(static_cast<std::size_t>(m) * (n + 2), 0xABCD);
          to_fp16_bits(want.data(), want_bits.data(), want.size());
          g.c = scratch.data(), g.c_fp16 = got.data(), g.ldc_fp16 = n + 2, g.round_output = false;
          device_gemm(g);
          for (int i = 0; i < m; ++i) {
            ASSERT_EQ(got[static_cast<std::size_t>(i) * (n + 2) + n], 0xABCD);
            ASSERT_EQ(got[static_cast<std::size_t>(i) * (n + 2) + n + 1], 0xABCD);
            ASSERT_EQ(0, std::memcmp(&got[static_cast<std::size_t>(i) * (n + 2)], &want_bits[static_cast<std::size_t>(i) * n], n * 2))
                << "path " << int(path) << " " << m << "x" << n << "x" << k << " panel " << panel << " codes " << as_codes << " row " << i;
          }
        }
    }
    force_gemm_path(GemmPath::automatic);
  }
}

// The 16- and 8-lane exp and tanh (through GELU) equal the scalar functions bit for bit on
// every path: a dense walk over the range and every 4099th float bit pattern (all signs,
// exponents, subnormals, infinities and NaNs).
TEST(DeviceMath, VectorExpAndGeluMatchScalar) {
  std::vector<float> x;
  for (float v = -100.0f; v < 100.0f; v += 0.0137f) x.push_back(v);
  for (float v : {-87.0f, -87.0001f, -86.9999f, -87.25f, -87.5f, 88.0f, 88.25f, 88.5f, 0.0f, -0.0f, 1e-30f, INFINITY, -INFINITY})
    x.push_back(v);
  for (std::uint64_t u = 0; u <= 0xFFFFFFFFull; u += 4099) x.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(u)));
  auto same = [](float got, float want) { return std::isnan(want) ? std::isnan(got) : got == want; };
  for (GemmPath path : {GemmPath::avx512, GemmPath::avx2, GemmPath::scalar}) {
    force_gemm_path(path);
    std::vector<float> e(x.size());
    device_exp_array(x.data(), 0.25f, e.data(), x.size());
    for (std::size_t i = 0; i < x.size(); ++i) ASSERT_TRUE(same(e[i], device_exp(x[i] - 0.25f))) << "path " << int(path) << " x " << x[i];
    std::vector<float> g(x.size());
    device_gelu(x.data(), g.data(), x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      const float v = x[i];
      const float want = round_fp16((0.5f * v) * (1.0f + device_tanh(0.7978845608028654f * (v + 0.044715f * (v * v * v)))));
      ASSERT_TRUE(same(g[i], want)) << "path " << int(path) << " x " << v;
    }
  }
  force_gemm_path(GemmPath::automatic);
}

TEST(DeviceMath, ExpAndTanhAccuracy) {
  for (float x = -80.0f; x < 80.0f; x += 0.01137f) {
    const double want = std::exp(static_cast<double>(x));
    EXPECT_NEAR(device_exp(x) / want, 1.0, 4e-7) << x;
  }
  EXPECT_EQ(device_exp(0.0f), 1.0f);
  EXPECT_EQ(device_exp(-100.0f), 0.0f);
  for (float x = -12.0f; x < 12.0f; x += 0.00731f) EXPECT_NEAR(device_tanh(x), std::tanh(double(x)), 3e-7) << x;
}

TEST(DeviceKernels, SoftmaxRowState) {
  std::vector<float> s = {1.0f, 3.0f, -2.0f, 3.0f, 0.5f};
  const float l = device_softmax_row(s.data(), 5, 0.5f);
  double expected_l = 0;
  for (float v : {1.0f, 3.0f, -2.0f, 3.0f, 0.5f}) expected_l += std::exp(0.5 * v - 1.5);
  EXPECT_NEAR(l, expected_l, 1e-6);
  EXPECT_EQ(s[1], 1.0f);
  EXPECT_EQ(s[3], 1.0f);
  EXPECT_EQ(s[0], round_fp16(device_exp(0.5f - 1.5f)));
  for (float p : s) EXPECT_EQ(p, round_fp16(p));
}

TEST(DeviceKernels, LayerNormNormalises) {
  const int w = 144;
  std::vector<float> x(w), gamma(w, 1.0f), beta(w, 0.0f), y(w);
  for (int i = 0; i < w; ++i) x[i] = round_fp16(3.0f + std::sin(i * 0.7f) * 2.0f);
  device_layernorm_row(x.data(), gamma.data(), beta.data(), y.data(), w, 1e-6f);
  double mean = 0, sq = 0;
  for (float v : y) mean += v;
  mean /= w;
  for (float v : y) sq += (v - mean) * (v - mean);
  EXPECT_NEAR(mean, 0.0, 1e-3);
  EXPECT_NEAR(std::sqrt(sq / w), 1.0, 2e-3);
  for (float v : y) EXPECT_EQ(v, round_fp16(v));
}

// The LayerNorm row as written in docs/NUMERICS.md, element by element, on every path
// (the normalisation runs 16, 8 or 1 elements at a time), widths with and without tails.
TEST(DeviceKernels, LayerNormMatchesDefinitionOnEveryPath) {
  std::mt19937 rng(8);
  std::normal_distribution<float> dist(0.5f, 2.0f);
  for (int width : {1152, 37, 8, 1}) {
    std::vector<float> x(width), g(width), b(width);
    for (auto* v : {&x, &g, &b})
      for (auto& e : *v) e = round_fp16(dist(rng));
    float sum = 0.0f;
    for (float e : x) sum = sum + e;
    const float mean = sum / static_cast<float>(width);
    float squares = 0.0f;
    for (float e : x) squares = squares + (e - mean) * (e - mean);
    const float rstd = 1.0f / std::sqrt(squares / static_cast<float>(width) + 1e-6f);
    for (auto path : {GemmPath::avx512, GemmPath::avx2, GemmPath::scalar}) {
      force_gemm_path(path);
      std::vector<float> out(width);
      device_layernorm_row(x.data(), g.data(), b.data(), out.data(), width, 1e-6f);
      for (int i = 0; i < width; ++i)
        ASSERT_EQ(out[i], round_fp16(((x[i] - mean) * rstd) * g[i] + b[i])) << "path " << int(path) << " width " << width << " at " << i;
    }
    force_gemm_path(GemmPath::automatic);
  }
}

TEST(DeviceKernels, GeluTanhMatchesFormula) {
  std::vector<float> x, y;
  for (float v = -6.0f; v <= 6.0f; v += 0.0625f) x.push_back(v);
  y.resize(x.size());
  device_gelu(x.data(), y.data(), x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    const double want = 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
    EXPECT_NEAR(y[i], want, std::max(1e-6, std::fabs(want) * 1e-3)) << v;
    EXPECT_EQ(y[i], round_fp16(y[i]));
  }
}

TEST(DeviceKernels, AddRoundsOnce) {
  const float a = 1.0f, b = std::ldexp(1.0f, -11) * 1.5f;  // 1 + 0.75 ulp -> rounds up
  float out;
  device_add(&a, &b, &out, 1);
  EXPECT_EQ(out, 1.0f + std::ldexp(1.0f, -10));
}

// The device model's fused reduce_add (binary16 in and out) against the float kernel,
// including signed zeros, infinities, NaN and the 32/8/1-element tails.
TEST(DeviceKernels, ReduceAddFp16MatchesFloatKernel) {
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 100.0f);
  for (int parts : {1, 2, 5, 27}) {
    for (std::size_t n : {0u, 1u, 7u, 8u, 31u, 32u, 45u, 576u}) {
      std::vector<std::uint16_t> bits(n * parts);
      for (auto& b : bits) b = fp16_bits(dist(rng));
      if (bits.size() > 3) bits[0] = 0x8000, bits[1] = 0x7C00, bits[2] = 0xFC00, bits[3] = 0x7E00;
      std::vector<float> values(bits.size()), sum(n);
      from_fp16_bits(bits.data(), values.data(), values.size());
      device_reduce_add(values.data(), parts, n, sum.data());
      std::vector<std::uint16_t> want(n), got(n);
      to_fp16_bits(sum.data(), want.data(), n);
      device_reduce_add_fp16(bits.data(), parts, n, got.data());
      EXPECT_EQ(got, want) << parts << " x " << n;
    }
  }
}

// Attention scores and values against the definition written out per element: the
// scores are key-major (s[j * queries + i]) and the row maxima and sums are computed 16 or
// 8 queries side by side, which must not change a bit.
// Row maxima follow m = s > m ? s : m in key order: NaN scores never win, infinities do.
TEST(DeviceKernels, AttentionRowMaximaWithSpecialValues) {
  const int queries = 11, keys = 9, d = 4;
  std::vector<float> q(queries * d, 0.0f), k(keys * d, 0.0f);
  for (int i = 0; i < queries; ++i) q[i * d] = 1.0f + static_cast<float>(i % 3);
  for (int j = 0; j < keys; ++j) k[j * d] = static_cast<float>(j) - 4.0f;
  q[2 * d + 1] = NAN;       // row 2: every score NaN
  q[9 * d + 1] = INFINITY;  // row 9: inf x k[.][1]
  k[5 * d + 1] = 1.0f;      // key 5: row 9 gets +inf there (and NaN where k[.][1] is 0)
  for (auto path : {GemmPath::avx512, GemmPath::avx2, GemmPath::scalar}) {
    force_gemm_path(path);
    std::vector<float> s(queries * keys), m(queries);
    device_attention_scores(q.data(), d, k.data(), d, queries, keys, d, 0.5f, s.data(), m.data());
    for (int i = 0; i < queries; ++i) {
      float want = -INFINITY;
      for (int j = 0; j < keys; ++j) want = s[j * queries + i] > want ? s[j * queries + i] : want;
      ASSERT_EQ(std::memcmp(&m[i], &want, 4), 0) << "path " << int(path) << " row " << i << ": " << m[i] << " vs " << want;
    }
    EXPECT_EQ(m[2], -INFINITY);
    EXPECT_EQ(m[9], INFINITY);
  }
  force_gemm_path(GemmPath::automatic);
}

TEST(DeviceKernels, AttentionScoresAndValuesMatchDefinition) {
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (auto path : {GemmPath::avx512, GemmPath::avx2, GemmPath::scalar})
  for (int queries : {1, 8, 25, 32}) {
    for (int keys : {7, 16, 183}) {
      force_gemm_path(path);
      const int d = 72;
      std::vector<float> q(queries * d), k(keys * d), v(keys * d);
      for (auto* t : {&q, &k, &v})
        for (auto& x : *t) x = round_fp16(dist(rng));
      std::vector<float> s(queries * keys), m(queries);
      const float scale = 0.1178511f;
      device_attention_scores(q.data(), d, k.data(), d, queries, keys, d, scale, s.data(), m.data());
      std::vector<float> p(s.size()), part(queries * (d + 1));
      const auto scores = s;
      device_attention_values(s.data(), p.data(), m.data(), queries, keys, v.data(), d, d, part.data());
      ASSERT_EQ(s, scores);  // the scores are only read
      // In place (probabilities over the scores) gives the same probabilities and partials.
      std::vector<float> in_place = s, part2(part.size());
      device_attention_values(in_place.data(), in_place.data(), m.data(), queries, keys, v.data(), d, d, part2.data());
      ASSERT_EQ(in_place, p);
      ASSERT_EQ(part2, part);
      // V with padded rows (the device model pads head dim 72 to 80) gives the same partials.
      std::vector<float> v_padded(keys * 80, NAN), part3(part.size());
      for (int j = 0; j < keys; ++j) std::copy(v.begin() + j * d, v.begin() + (j + 1) * d, v_padded.begin() + j * 80);
      device_attention_values(s.data(), p.data(), m.data(), queries, keys, v_padded.data(), 80, d, part3.data());
      ASSERT_EQ(part3, part);
      for (int i = 0; i < queries; ++i) {
        float want_m = -INFINITY, l = 0.0f;
        for (int j = 0; j < keys; ++j) {
          float t = 0.0f;
          for (int e = 0; e < d; ++e) t = std::fma(q[i * d + e], k[j * d + e], t);
          t = t * scale;
          ASSERT_EQ(s[j * queries + i], t) << i << " " << j;
          want_m = t > want_m ? t : want_m;
        }
        ASSERT_EQ(m[i], want_m) << i;
        for (int j = 0; j < keys; ++j) {
          const float e = device_exp(s[j * queries + i] - m[i]);
          l += e;
          ASSERT_EQ(p[j * queries + i], round_fp16(e)) << i << " " << j;
        }
        ASSERT_EQ(part[i * (d + 1) + d], l) << queries << " x " << keys << " row " << i;
        for (int e = 0; e < d; ++e) {
          float o = 0.0f;
          for (int j = 0; j < keys; ++j) o = std::fma(p[j * queries + i], v[j * d + e], o);
          ASSERT_EQ(part[i * (d + 1) + e], o) << "path " << int(path) << " " << queries << " x " << keys << " o[" << i << "][" << e << "]";
        }
      }
    }
  }
  force_gemm_path(GemmPath::automatic);
}

// The key blocks' partials combined as written out: o = 0, o = o + o_b and l = 0,
// l = l + l_b in block order, then fp16(o / l); head dims with and without an 8-lane tail,
// signed zeros and an infinite partial included.
TEST(DeviceKernels, AttentionCombineMatchesDefinition) {
  std::mt19937 rng(5);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (int d : {72, 13, 8, 3}) {
    for (int blocks : {1, 2, 4}) {
      const int rows = 5, width = d + 1;
      std::vector<float> parts(static_cast<std::size_t>(blocks) * rows * width);
      for (auto& x : parts) x = dist(rng);
      parts[0] = -0.0f, parts[1] = INFINITY;
      for (int b = 0; b < blocks; ++b) parts[(static_cast<std::size_t>(b) * rows + 1) * width + d] = 0.5f + b;  // l > 0
      std::vector<float> out(rows * d);
      device_attention_combine(parts.data(), blocks, rows, d, out.data(), d);
      for (int i = 0; i < rows; ++i) {
        float l = 0.0f;
        for (int b = 0; b < blocks; ++b) l = l + parts[(static_cast<std::size_t>(b) * rows + i) * width + d];
        for (int e = 0; e < d; ++e) {
          float o = 0.0f;
          for (int b = 0; b < blocks; ++b) o = o + parts[(static_cast<std::size_t>(b) * rows + i) * width + e];
          const float want = round_fp16(o / l);
          if (std::isnan(want)) {
            ASSERT_TRUE(std::isnan(out[i * d + e]));
            continue;
          }
          ASSERT_EQ(std::signbit(out[i * d + e]), std::signbit(want));
          ASSERT_EQ(out[i * d + e], want) << d << " " << blocks << " " << i << " " << e;
        }
      }
    }
  }
}

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
