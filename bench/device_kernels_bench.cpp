// The device model's hot kernels on the main job's per-tile shapes (So400m/14 on the C600,
// `tilevit compile --steps`), hot in cache, one thread: where a call's compute time goes,
// kernel by kernel, without the noise of 1 GB of tile memory. Run with repetitions and
// read the minimum (this machine is shared; the minimum is the least disturbed run):
//   ./build/bench/device_kernels_bench --benchmark_repetitions=9 --benchmark_report_aggregates_only=true
// Counters: GFLOPs (2 per multiply-add), elements per second for codecs.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "numerics/device_kernels.hpp"
#include "numerics/fp16.hpp"
#include "numerics/fp8.hpp"

namespace {

using namespace tilevit::numerics;

std::vector<std::uint8_t> random_codes(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint8_t> codes(n);
  for (auto& c : codes) {
    c = static_cast<std::uint8_t>(rng());
    if (c == 0x80) c = 0;  // no NaN: the benchmark measures the common path
  }
  return codes;
}

std::vector<float> random_fp16(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = round_fp16(dist(rng));
  return v;
}

// With --benchmark_repetitions: the minimum too (the least disturbed repetition).
double minimum(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

// One FP8 GEMM kernel call as the device model makes it (device/kernels.cpp): B decoded
// once, C stored to FP16 a block of rows at a time; range(3) = 1: A read as codes through
// the decode table (the device model's form), 0: A decoded a block at a time first.
void fp8_gemm_call(benchmark::State& state) {
  const int m = static_cast<int>(state.range(0)), k = static_cast<int>(state.range(1)), n = static_cast<int>(state.range(2));
  const bool codes = state.range(3) != 0;
  const auto a_codes = random_codes(std::size_t(m) * k, 1), b_codes = random_codes(std::size_t(k) * n, 2);
  const int block = n <= 16 ? 48 : 24;
  const auto table = fp8_decode_table(Fp8Format::F143, -4);
  std::vector<float> a(std::size_t(block) * k), b(std::size_t(k) * n), c(std::size_t(block) * n);
  std::vector<std::uint16_t> out(std::size_t(m) * n);
  for (auto _ : state) {
    fp8_decode(b_codes.data(), b.data(), b.size(), Fp8Format::F143, -4);
    for (int r0 = 0; r0 < m; r0 += block) {
      const int rows = std::min(block, m - r0);
      DeviceGemm g{rows, n, k, a.data(), k, b.data(), n, c.data(), n, 32, true};
      if (codes)
        g.a_codes = a_codes.data() + std::size_t(r0) * k, g.a_table = table.data();
      else
        fp8_decode(a_codes.data() + std::size_t(r0) * k, a.data(), std::size_t(rows) * k, Fp8Format::F143, -4);
      device_gemm(g);
      to_fp16_bits(c.data(), out.data() + std::size_t(r0) * n, std::size_t(rows) * n);
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["GFLOPs"] = benchmark::Counter(2.0 * m * k * n, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}
// qkv, out, fc1, fc2 of an encoder layer, each both ways.
BENCHMARK(fp8_gemm_call)
    ->ArgsProduct({{146}, {288}, {48}, {0, 1}})
    ->ArgsProduct({{81}, {128}, {64}, {0, 1}})
    ->ArgsProduct({{183}, {288}, {48}, {0, 1}})
    ->ArgsProduct({{243}, {160}, {64}, {0, 1}})
    ->ComputeStatistics("min", minimum);

void fp8_decode_a_block(benchmark::State& state) {
  const auto codes = random_codes(static_cast<std::size_t>(state.range(0)), 3);
  std::vector<float> out(codes.size());
  for (auto _ : state) {
    fp8_decode(codes.data(), out.data(), codes.size(), Fp8Format::F143, -4);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(fp8_decode_a_block)->Arg(24 * 288)->Arg(288 * 48)->ComputeStatistics("min", minimum);

// One head's query block against one key block (32 x 183, head dim 72).
void attention_scores(benchmark::State& state) {
  const int q_rows = 32, keys = 183, d = 72;
  const auto q = random_fp16(q_rows * d, 4), k = random_fp16(keys * d, 5);
  std::vector<float> s(q_rows * keys), m(q_rows);
  for (auto _ : state) {
    device_attention_scores(q.data(), d, k.data(), d, q_rows, keys, d, 0.1178511f, s.data(), m.data());
    benchmark::DoNotOptimize(s.data());
  }
  state.counters["GFLOPs"] = benchmark::Counter(2.0 * q_rows * keys * d, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}
BENCHMARK(attention_scores)->ComputeStatistics("min", minimum);

void attention_values(benchmark::State& state) {
  const int q_rows = 32, keys = 183, d = 72;
  const auto q = random_fp16(q_rows * d, 4), k = random_fp16(keys * d, 5), v = random_fp16(keys * d, 6);
  std::vector<float> s(q_rows * keys), m(q_rows), p(s.size()), part(q_rows * (d + 1));
  device_attention_scores(q.data(), d, k.data(), d, q_rows, keys, d, 0.1178511f, s.data(), m.data());
  for (auto _ : state) {
    device_attention_values(s.data(), p.data(), m.data(), q_rows, keys, v.data(), d, d, part.data());
    benchmark::DoNotOptimize(part.data());
  }
  state.counters["GFLOPs"] = benchmark::Counter(2.0 * q_rows * keys * d, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}
BENCHMARK(attention_values)->ComputeStatistics("min", minimum);

void attention_combine(benchmark::State& state) {
  const int rows = 32, d = 72, blocks = static_cast<int>(state.range(0));
  const auto parts = random_fp16(static_cast<std::size_t>(blocks) * rows * (d + 1), 7);
  std::vector<float> out(rows * d);
  for (auto _ : state) {
    device_attention_combine(parts.data(), blocks, rows, d, out.data(), d);
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(attention_combine)->Arg(2)->ComputeStatistics("min", minimum);

// The element-wise kernels on 24 rows of the encoder's widths (1,152; the MLP's 4,304).
constexpr int kRows = 24, kWidth = 1152, kMlpWidth = 4304;

void layernorm_rows(benchmark::State& state) {
  const auto x = random_fp16(kRows * kWidth, 8), gamma = random_fp16(kWidth, 9), beta = random_fp16(kWidth, 10);
  std::vector<float> y(x.size());
  for (auto _ : state) {
    for (int r = 0; r < kRows; ++r)
      device_layernorm_row(x.data() + r * kWidth, gamma.data(), beta.data(), y.data() + r * kWidth, kWidth, 1e-6f);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * kRows * kWidth);
}
BENCHMARK(layernorm_rows)->ComputeStatistics("min", minimum);

void gelu(benchmark::State& state) {
  const auto x = random_fp16(kRows * kMlpWidth, 11);
  std::vector<float> y(x.size());
  for (auto _ : state) {
    device_gelu(x.data(), y.data(), y.size());
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * kRows * kMlpWidth);
}
BENCHMARK(gelu)->ComputeStatistics("min", minimum);

std::vector<std::uint16_t> random_fp16_bits(std::size_t n, std::uint32_t seed) {
  const auto values = random_fp16(n, seed);
  std::vector<std::uint16_t> bits(n);
  to_fp16_bits(values.data(), bits.data(), n);
  return bits;
}

// range(0) = 1: the binary16 form (the device model's), 0: the float form (the reference's).
void add_rows(benchmark::State& state) {
  const std::size_t n = kRows * kWidth;
  const auto a = random_fp16(n, 12), b = random_fp16(n, 13);
  const auto a_bits = random_fp16_bits(n, 12), b_bits = random_fp16_bits(n, 13);
  std::vector<float> out(n);
  std::vector<std::uint16_t> out_bits(n);
  for (auto _ : state) {
    if (state.range(0) != 0)
      device_add_fp16(a_bits.data(), b_bits.data(), out_bits.data(), n);
    else
      device_add(a.data(), b.data(), out.data(), n);
    benchmark::DoNotOptimize(out.data());
    benchmark::DoNotOptimize(out_bits.data());
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(add_rows)->Arg(0)->Arg(1)->ComputeStatistics("min", minimum);

// Three partial sums of a split inner dimension; range(0) as for add_rows.
void reduce_add_rows(benchmark::State& state) {
  const std::size_t n = kRows * kWidth;
  const int parts = 3;
  const auto partials = random_fp16(n * parts, 14);
  const auto partial_bits = random_fp16_bits(n * parts, 14);
  std::vector<float> out(n);
  std::vector<std::uint16_t> out_bits(n);
  for (auto _ : state) {
    if (state.range(0) != 0)
      device_reduce_add_fp16(partial_bits.data(), parts, n, out_bits.data());
    else
      device_reduce_add(partials.data(), parts, n, out.data());
    benchmark::DoNotOptimize(out.data());
    benchmark::DoNotOptimize(out_bits.data());
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(reduce_add_rows)->Arg(0)->Arg(1)->ComputeStatistics("min", minimum);

// One attention row of 183 keys (the softmax kernel and its exp).
void softmax_row(benchmark::State& state) {
  const auto scores = random_fp16(183, 15);
  std::vector<float> s(scores.size());
  for (auto _ : state) {
    s = scores;
    benchmark::DoNotOptimize(device_softmax_row(s.data(), 183, 0.1178511f));
  }
}
BENCHMARK(softmax_row)->ComputeStatistics("min", minimum);

}  // namespace

BENCHMARK_MAIN();
