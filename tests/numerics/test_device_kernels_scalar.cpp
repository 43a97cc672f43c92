// The kernels' definitions (the scalar path, device_kernels_scalar.cpp) against
// docs/NUMERICS.md written out again here, and the properties the definitions promise:
// FP8 codes, transposed A and binary16 in or out give the same values as floats. The other
// paths are held to the definitions bit for bit by test_device_gemm.cpp and
// test_device_kernels.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <tuple>
#include <vector>

#include "kernel_path_test.hpp"
#include "numerics/device_kernels.hpp"
#include "numerics/device_math.hpp"
#include "numerics/fp8.hpp"

using namespace tilevit::numerics;
using namespace tilevit::numerics::testing;

namespace {

class Definitions : public ::testing::Test {
 private:
  ScopedKernelPath scalar_{KernelPath::scalar};
};

// Sequential FP32 sum of exact products, FP16 rounding after every `panel` steps and at
// the end; A is m x k (lda k), B k x n (ldb).
float gemm_element_as_documented(const std::vector<float>& a, const std::vector<float>& b, int k_dim, int ldb, int row,
                                 int col, int panel, bool round_output) {
  float t = 0;
  for (int k = 0; k < k_dim; ++k) {
    const float product = a[static_cast<std::size_t>(row) * k_dim + k] * b[static_cast<std::size_t>(k) * ldb + col];
    t = t + product;
    if (panel > 0 && ((k + 1) % panel == 0 || k + 1 == k_dim)) t = round_fp16(t);
  }
  return round_output ? round_fp16(t) : t;
}

TEST_F(Definitions, GemmAsDocumented) {
  std::mt19937 rng(1);
  for (auto [m, n, k] : {std::tuple{5, 37, 70}, {4, 16, 32}, {9, 50, 129}, {1, 3, 1}, {3, 17, 700}, {12, 1, 5}}) {
    const int ldb = n + 3, ldc = n + 1;
    const auto a = random_fp8(static_cast<std::size_t>(m) * k, rng);
    const auto b = random_fp8(static_cast<std::size_t>(k) * ldb, rng);
    for (int panel : {0, 32})
      for (bool round_output : {false, true}) {
        std::vector<float> c(static_cast<std::size_t>(m) * ldc, -7.0f);
        device_gemm(DeviceGemm{m, n, k, a.data(), k, b.data(), ldb, c.data(), ldc, panel, round_output});
        for (int i = 0; i < m; ++i) {
          ASSERT_EQ(c[static_cast<std::size_t>(i) * ldc + n], -7.0f);  // the gap of ldc is untouched
          for (int j = 0; j < n; ++j)
            ASSERT_EQ(c[static_cast<std::size_t>(i) * ldc + j], gemm_element_as_documented(a, b, k, ldb, i, j, panel, round_output))
                << m << "x" << n << "x" << k << " panel " << panel << " at " << i << "," << j;
        }
      }
  }
}

TEST_F(Definitions, PanelRoundingLosesSmallContributions) {
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

// A given as FP8 codes through the decode table (lda > inner, every code including NaN
// 0x80 and the extremes) gives the bits of A decoded first.
TEST_F(Definitions, GemmCodesThroughTheTableEqualDecodedA) {
  std::mt19937 rng(5);
  for (int scale : {-4, 0, 3}) {
    const auto table = fp8_decode_table(Fp8Format::F143, scale);
    const int m = 13, n = 20, k = 72, lda = k + 5;
    std::vector<std::uint8_t> codes(static_cast<std::size_t>(m) * lda);
    for (std::size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<std::uint8_t>(i < 256 ? i : rng());
    std::vector<float> a(codes.size());
    fp8_decode(codes.data(), a.data(), a.size(), Fp8Format::F143, scale);
    const auto b = random_fp8(static_cast<std::size_t>(k) * n, rng);
    std::vector<float> want(static_cast<std::size_t>(m) * n), got(want.size());
    device_gemm(DeviceGemm{m, n, k, a.data(), lda, b.data(), n, want.data(), n, 32, true});
    DeviceGemm g{m, n, k, nullptr, lda, b.data(), n, got.data(), n, 32, true};
    g.a_codes = codes.data(), g.a_table = table.data();
    device_gemm(g);
    EXPECT_SAME_BITS(got, want) << "scale " << scale;
  }
}

// A read transposed (element (r, k) at a[k * lda + r]) gives the bits of the row-major A.
TEST_F(Definitions, GemmTransposedAEqualsRowMajorA) {
  std::mt19937 rng(6);
  const int m = 25, n = 17, k = 40, lda_t = m + 3;
  const auto a = random_fp8(static_cast<std::size_t>(m) * k, rng);
  std::vector<float> at(static_cast<std::size_t>(k) * lda_t, NAN);
  for (int r = 0; r < m; ++r)
    for (int kk = 0; kk < k; ++kk) at[static_cast<std::size_t>(kk) * lda_t + r] = a[static_cast<std::size_t>(r) * k + kk];
  const auto b = random_fp8(static_cast<std::size_t>(k) * n, rng);
  for (int panel : {0, 32}) {
    std::vector<float> want(static_cast<std::size_t>(m) * n), got(want.size());
    device_gemm(DeviceGemm{m, n, k, a.data(), k, b.data(), n, want.data(), n, panel, panel > 0});
    DeviceGemm g{m, n, k, at.data(), lda_t, b.data(), n, got.data(), n, panel, panel > 0};
    g.a_transposed = true;
    device_gemm(g);
    EXPECT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * 4)) << "panel " << panel;
  }
}

// Binary16 output (c_fp16) gives the bits of the float result rounded to FP16, with and
// without panels; the gap of a wider ldc_fp16 is untouched.
TEST_F(Definitions, GemmFp16OutputEqualsRoundedFloatOutput) {
  std::mt19937 rng(6);
  const int m = 7, n = 19, k = 70;
  const auto a = random_fp8(static_cast<std::size_t>(m) * k, rng), b = random_fp8(static_cast<std::size_t>(k) * n, rng);
  for (int panel : {0, 32}) {
    std::vector<float> want(static_cast<std::size_t>(m) * n), scratch(want.size());
    DeviceGemm g{m, n, k, a.data(), k, b.data(), n, want.data(), n, panel, true};
    device_gemm(g);
    std::vector<std::uint16_t> got(static_cast<std::size_t>(m) * (n + 2), 0xABCD);
    g.c = scratch.data(), g.c_fp16 = got.data(), g.ldc_fp16 = n + 2, g.round_output = false;
    device_gemm(g);
    for (int i = 0; i < m; ++i) {
      EXPECT_EQ(got[static_cast<std::size_t>(i) * (n + 2) + n], 0xABCD);
      EXPECT_EQ(got[static_cast<std::size_t>(i) * (n + 2) + n + 1], 0xABCD);
      for (int j = 0; j < n; ++j)
        ASSERT_EQ(got[static_cast<std::size_t>(i) * (n + 2) + j], fp16_bits(want[static_cast<std::size_t>(i) * n + j]))
            << "panel " << panel << " at " << i << "," << j;
    }
  }
}

// device_add on binary16 bits equals device_add on their values, in place too: every
// 11th binary16 pattern (NaNs, infinities, subnormals, signed zeros) against random ones.
TEST_F(Definitions, AddOnFp16BitsEqualsAddOnValues) {
  std::mt19937 rng(9);
  std::vector<std::uint16_t> a, b;
  for (std::uint32_t h = 0; h < 65536; h += 11) a.push_back(static_cast<std::uint16_t>(h)), b.push_back(static_cast<std::uint16_t>(rng()));
  a.push_back(0x7C00), b.push_back(0xFC00);  // inf + -inf
  std::vector<float> fa(a.size()), fb(b.size()), want(a.size());
  from_fp16_bits(a.data(), fa.data(), a.size());
  from_fp16_bits(b.data(), fb.data(), b.size());
  device_add(fa.data(), fb.data(), want.data(), want.size());
  std::vector<std::uint16_t> got(a.size()), in_place = a;
  device_add_fp16(a.data(), b.data(), got.data(), got.size());
  device_add_fp16(in_place.data(), b.data(), in_place.data(), in_place.size());
  EXPECT_SAME_BITS(got, fp16_bits_of(want));
  EXPECT_SAME_BITS(in_place, got);
}

TEST_F(Definitions, AddRoundsOnce) {
  const float a = 1.0f, b = std::ldexp(1.0f, -11) * 1.5f;  // 1 + 0.75 ulp -> rounds up
  float out;
  device_add(&a, &b, &out, 1);
  EXPECT_EQ(out, 1.0f + std::ldexp(1.0f, -10));
}

// The reduction on binary16 bits equals the one on floats, including signed zeros,
// infinities and NaN.
TEST_F(Definitions, ReduceAddOnFp16BitsEqualsReduceAddOnValues) {
  std::mt19937 rng(7);
  for (int parts : {1, 2, 5, 27}) {
    const std::size_t n = 45;
    const auto values = random_fp16_with_specials(n * parts, rng, 100.0f);
    std::vector<float> sum(n);
    device_reduce_add(values.data(), parts, n, sum.data());
    const auto bits = fp16_bits_of(values);
    std::vector<std::uint16_t> got(n);
    device_reduce_add_fp16(bits.data(), parts, n, got.data());
    EXPECT_SAME_BITS(got, fp16_bits_of(sum)) << parts;
  }
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

TEST_F(Definitions, SoftmaxRowState) {
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

TEST_F(Definitions, LayerNormNormalises) {
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

// The LayerNorm row as written in docs/NUMERICS.md, element by element.
TEST_F(Definitions, LayerNormAsDocumented) {
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
    std::vector<float> out(width);
    device_layernorm_row(x.data(), g.data(), b.data(), out.data(), width, 1e-6f);
    for (int i = 0; i < width; ++i)
      ASSERT_EQ(out[i], round_fp16(((x[i] - mean) * rstd) * g[i] + b[i])) << "width " << width << " at " << i;
  }
}

TEST_F(Definitions, GeluTanhMatchesFormula) {
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

// Row maxima follow m = s > m ? s : m in key order: NaN scores never win, infinities do.
TEST_F(Definitions, AttentionRowMaximaWithSpecialValues) {
  const int queries = 11, keys = 9, d = 4;
  std::vector<float> q(queries * d, 0.0f), k(keys * d, 0.0f);
  for (int i = 0; i < queries; ++i) q[i * d] = 1.0f + static_cast<float>(i % 3);
  for (int j = 0; j < keys; ++j) k[j * d] = static_cast<float>(j) - 4.0f;
  q[2 * d + 1] = NAN;       // row 2: every score NaN
  q[9 * d + 1] = INFINITY;  // row 9: inf x k[.][1]
  k[5 * d + 1] = 1.0f;      // key 5: row 9 gets +inf there (and NaN where k[.][1] is 0)
  std::vector<float> s(queries * keys), m(queries);
  device_attention_scores(q.data(), d, k.data(), d, queries, keys, d, 0.5f, s.data(), m.data());
  for (int i = 0; i < queries; ++i) {
    float want = -INFINITY;
    for (int j = 0; j < keys; ++j) want = s[j * queries + i] > want ? s[j * queries + i] : want;
    ASSERT_EQ(std::memcmp(&m[i], &want, 4), 0) << "row " << i << ": " << m[i] << " vs " << want;
  }
  EXPECT_EQ(m[2], -INFINITY);
  EXPECT_EQ(m[9], INFINITY);
}

// Scores (key-major), maxima, probabilities, l and o as written out per element.
TEST_F(Definitions, AttentionScoresAndValuesAsDocumented) {
  std::mt19937 rng(3);
  for (auto [queries, keys] : {std::pair{1, 7}, {25, 16}, {32, 183}}) {
    const int d = 72;
    const auto q = random_fp16(queries * d, rng), k = random_fp16(keys * d, rng), v = random_fp16(keys * d, rng);
    std::vector<float> s(queries * keys), m(queries), p(s.size()), part(queries * (d + 1));
    const float scale = 0.1178511f;
    device_attention_scores(q.data(), d, k.data(), d, queries, keys, d, scale, s.data(), m.data());
    const auto scores = s;
    device_attention_values(s.data(), p.data(), m.data(), queries, keys, v.data(), d, d, part.data());
    ASSERT_EQ(s, scores);  // the scores are only read
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
        ASSERT_EQ(part[i * (d + 1) + e], o) << queries << " x " << keys << " o[" << i << "][" << e << "]";
      }
    }
  }
}

// FP8 products as written out: the FP16 accumulator rounded after every 32 products (QK^T
// over the head dims, P.V over the keys), p = F143(fp16(e)) at scale -7.
TEST_F(Definitions, FP8AttentionAsDocumented) {
  std::mt19937 rng(4);
  const int queries = 9, keys = 70, d = 72;
  auto q = random_fp16(queries * d, rng), k = random_fp16(keys * d, rng), v = random_fp16(keys * d, rng);
  for (auto* x : {&q, &k, &v}) fp8_round(x->data(), x->size(), Fp8Format::F143, -4);
  std::vector<float> s(queries * keys), m(queries), p(s.size()), part(queries * (d + 1));
  const float scale = 0.1178511f;
  device_attention_scores(q.data(), d, k.data(), d, queries, keys, d, scale, s.data(), m.data(), AttentionPrecision{true});
  device_attention_values(s.data(), p.data(), m.data(), queries, keys, v.data(), d, d, part.data(), AttentionPrecision{true});
  const auto panel_sum = [](int n, auto term) {
    float t = 0.0f;
    for (int x = 0; x < n; ++x) {
      t = std::fma(term(x).first, term(x).second, t);
      if ((x + 1) % 32 == 0 || x + 1 == n) t = round_fp16(t);
    }
    return t;
  };
  for (int i = 0; i < queries; ++i)
    for (int j = 0; j < keys; ++j)
      ASSERT_EQ(s[j * queries + i], panel_sum(d, [&](int e) { return std::pair{q[i * d + e], k[j * d + e]}; }) * scale);
  for (int i = 0; i < queries; ++i) {
    for (int j = 0; j < keys; ++j) {
      const float e = device_exp(s[j * queries + i] - m[i]);
      ASSERT_EQ(p[j * queries + i], fp8_decode(fp8_encode(round_fp16(e), Fp8Format::F143, -7), Fp8Format::F143, -7));
    }
    for (int e = 0; e < d; ++e)
      ASSERT_EQ(part[i * (d + 1) + e], panel_sum(keys, [&](int j) { return std::pair{p[j * queries + i], v[j * d + e]}; }))
          << i << " " << e;
  }
  EXPECT_EQ(kAttentionProbabilityScale, -7);
}

// The key blocks' partials combined as written out: o = 0, o = o + o_b and l = 0,
// l = l + l_b in block order, then fp16(o / l); signed zeros and an infinite partial
// included.
TEST_F(Definitions, AttentionCombineAsDocumented) {
  std::mt19937 rng(5);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (int d : {72, 13}) {
    for (int blocks : {1, 2, 4}) {
      const int rows = 5, width = d + 1;
      std::vector<float> parts(static_cast<std::size_t>(blocks) * rows * width);
      for (auto& x : parts) x = dist(rng);
      parts[0] = -0.0f, parts[1] = INFINITY;
      for (int b = 0; b < blocks; ++b) parts[(static_cast<std::size_t>(b) * rows + 1) * width + d] = 0.5f + b;  // l > 0
      std::vector<float> out(rows * d);
      device_attention_combine(parts.data(), blocks, rows, d, out.data(), d);
      std::vector<float> want(out.size());
      for (int i = 0; i < rows; ++i) {
        float l = 0.0f;
        for (int b = 0; b < blocks; ++b) l = l + parts[(static_cast<std::size_t>(b) * rows + i) * width + d];
        for (int e = 0; e < d; ++e) {
          float o = 0.0f;
          for (int b = 0; b < blocks; ++b) o = o + parts[(static_cast<std::size_t>(b) * rows + i) * width + e];
          want[i * d + e] = round_fp16(o / l);
        }
      }
      EXPECT_SAME_BITS(out, want) << d << " " << blocks;
    }
  }
}

}  // namespace
