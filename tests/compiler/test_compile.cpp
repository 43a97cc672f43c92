// The compiler end to end on the small model and the 16-tile test machine: it compiles,
// the independent verifier accepts it, the loop stays a loop (planted mistakes:
// tests/compiler/test_verify.cpp; the package codec: tests/package/test_program_codec.cpp).
#include <gtest/gtest.h>

#include <map>
#include <tuple>
#include <stdexcept>

#include "small_model.hpp"
#include "support/error.hpp"

using namespace tilevit;
using test_support::compile_small;

namespace {
compiler::VerifyReport verify(const compiler::CompiledModel& m) { return test_support::verify_on_test16(m); }
}  // namespace

TEST(Compile, SmallModelCompilesAndVerifies) {
  const auto m = compile_small();
  const auto report = verify(m);
  EXPECT_TRUE(report.ok()) << (report.violations.empty() ? "" : report.violations[0]);
  EXPECT_GT(report.kernel_calls, 0u);
  EXPECT_GT(report.transfers, 0u);
  EXPECT_LE(m.stats.tiles_used, 16u);
  EXPECT_GT(m.stats.estimated_cycles, 0u);
  EXPECT_LE(m.stats.peak_tile_bytes, target::test16().free_bytes_per_tile(false));
  // Every weight element has a home; only small vectors are replicated.
  EXPECT_GE(m.stats.weight_bytes, m.stats.unique_weight_bytes);
  EXPECT_LT(double(m.stats.weight_bytes) / double(m.stats.unique_weight_bytes), 1.2);
}

TEST(Compile, LayerLoopIsNotUnrolled) {
  const auto one = compile_small(1), two = compile_small(2);
  EXPECT_EQ(one.executable.program.steps.size(), two.executable.program.steps.size());
  EXPECT_EQ(two.executable.program.loop_count, 2u);
  EXPECT_LT(two.executable.program.loop_begin, two.executable.program.loop_end);
  // Per-layer weights are sequences walked by a stride.
  bool strided = false;
  for (const auto& s : two.executable.program.steps)
    for (const auto& c : s.compute)
      for (const auto& o : c.operands) strided |= o.layer_stride > 0;
  EXPECT_TRUE(strided);
}

TEST(Compile, ModelThatCannotFitNamesTheTile) {
  model::ViTConfig c = model::ViTConfig::so400m();
  c.layers = 1;
  try {
    compiler::compile_model(compiler::build_vit_graph(c, model::NumericsConfig::uniform(-4)), target::test16(), {});
    FAIL() << "a 1152-wide model fitted 16 tiles";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_EQ(e.exit_code(), kExitBadInput) << m;
    EXPECT_NE(m.find("tile "), std::string::npos) << m;
    EXPECT_NE(m.find("largest hole"), std::string::npos) << m;
  }
}

TEST(Compile, ExchangeWavesRespectTheStreamLimit) {
  const auto m = compile_small(2, compiler::CompileOptions{compiler::Plan{{}, 16}, {}});
  EXPECT_TRUE(verify(m).ok());
  std::uint32_t most_waves = 0;
  for (const auto& s : m.executable.program.steps) {
    most_waves = std::max(most_waves, s.waves);
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> received;
    for (const auto& t : s.exchange) {
      EXPECT_LE(t.bytes, 16u * 4);
      for (const auto& d : t.destinations) {
        const auto key = std::make_pair(t.wave, d.tile);
        received[key] += t.bytes;
        EXPECT_LE(received[key], 16u * 4);
      }
    }
  }
  EXPECT_GT(most_waves, 1u);
  // Fewer, larger waves with a larger W; the estimate never counts less than one wave.
  const auto big = compile_small(2, compiler::CompileOptions{compiler::Plan{{}, 4096}, {}});
  EXPECT_LE(big.stats.estimated_exchange_cycles, m.stats.estimated_exchange_cycles);
}

// CompileOptions::pins fix grids by op name (small_model.hpp: the grids pinned).
TEST(Compile, PinnedGridsAreUsedAndVerify) {
  const auto m = compile_small(2, test_support::pinned_splits());
  const auto report = verify(m);
  EXPECT_TRUE(report.ok()) << (report.violations.empty() ? "" : report.violations[0]);
  EXPECT_EQ(m.executable.numerics.role_inner_block(model::GemmRole::MlpDown), 32u);
  EXPECT_EQ(m.executable.numerics.attention_key_block, 1u);
  std::map<std::string, std::map<compiler::KernelKind, int>> calls;  // op -> kind -> calls
  for (const auto& s : m.executable.program.steps)
    for (const auto& c : s.compute) ++calls[m.executable.program.op_names.at(c.op)][c.kind];
  EXPECT_EQ(calls["layer.mlp.fc2"][compiler::KernelKind::gemm_fp8], 9);
  EXPECT_EQ(calls["layer.mlp.fc2"][compiler::KernelKind::reduce_add], 4);  // 4 rows, one per partial sum
  EXPECT_EQ(calls["layer.qkv"][compiler::KernelKind::gemm_fp8], 4);
  EXPECT_EQ(calls["layer.attention"][compiler::KernelKind::attention_scores], 2 * 4);  // heads x key blocks
}

TEST(Compile, PinThatDoesNotFitOrNamesNoOpIsAUsageError) {
  auto expect_rejected = [](const compiler::CompileOptions& options, const std::string& needle) {
    try {
      compile_small(1, options);
      ADD_FAILURE() << "accepted: " << needle;
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), kExitUsage) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  compiler::CompileOptions options;
  options.plan.pins.gemm["layer.mlp.fc2"] = compiler::GemmSplits{1, 10, 1};  // 288 deep: at most 9 panels
  expect_rejected(options, "for op layer.mlp.fc2: inner dimension (288) cannot be cut into 10 blocks");
  options.plan.pins.gemm = {{"layer.mlp.gelu", compiler::GemmSplits{}}};
  expect_rejected(options, "for op layer.mlp.gelu: the graph has no GEMM of that name");
  options.plan.pins.gemm.clear();
  options.plan.pins.attention["layer.atention"] = compiler::AttentionBlocks{1, 1};
  expect_rejected(options, "for op layer.atention: the graph has no attention of that name");
}

// At batch 9 on 16 tiles, two consumer blocks on one tile need the same source bytes: the
// data goes out as two sends, since one multicast can land on a tile only once (it took
// one word per cycle into that tile twice, and compile stopped with an internal error).
TEST(Compile, OneTileNeedingTheSameBytesTwiceGetsTwoSends) {
  model::ViTConfig c = model::ViTConfig::small();
  c.batch = 9;
  const auto m = compiler::compile_model(compiler::build_vit_graph(c, model::NumericsConfig::uniform(-4)),
                                         target::test16(), {});
  EXPECT_TRUE(test_support::verify_on_test16(m).ok());
  std::size_t repeated_sources = 0;
  for (const auto& step : m.executable.program.steps) {
    std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>, int> sends;
    for (const auto& t : step.exchange) {
      std::map<std::uint32_t, int> landings;
      for (const auto& d : t.destinations) EXPECT_EQ(++landings[d.tile], 1) << step.label << " tile " << d.tile;
      repeated_sources += ++sends[{t.source.tile, t.source.allocation, t.source.offset, t.bytes}] == 2;
    }
  }
  EXPECT_GT(repeated_sources, 0u);  // the case arises at this batch
}

// A model whose fastest grids do not fit (the small model, 32 layers, batch 4 on test16):
// with a cap given (none binding) it does not fit; by default compile_model re-chooses
// the GEMM grids under a per-tile cap, and the program fits and verifies clean.
TEST(Compile, ModelOverItsSramIsReplannedUnderAGemmCap) {
  model::ViTConfig c = model::ViTConfig::small();
  c.layers = c.max_layers = 32;
  c.batch = 4;
  const auto graph = compiler::build_vit_graph(c, model::NumericsConfig::uniform(-4));
  compiler::CompileOptions no_replanning;
  no_replanning.gemm_tile_bytes_cap = UINT64_MAX;
  EXPECT_THROW(compiler::compile_model(graph, target::test16(), no_replanning), compiler::DoesNotFit);
  const auto m = compiler::compile_model(graph, target::test16(), {});
  EXPECT_GT(m.stats.gemm_tile_bytes_cap, 0u);
  EXPECT_LE(m.stats.peak_tile_bytes, target::test16().free_bytes_per_tile(false));
  const auto report = verify(m);
  EXPECT_TRUE(report.ok()) << (report.violations.empty() ? "" : report.violations[0]);
  // The same cap given up front gives the same program (the plan is a function of it).
  compiler::CompileOptions capped;
  capped.gemm_tile_bytes_cap = m.stats.gemm_tile_bytes_cap;
  EXPECT_EQ(compiler::compile_model(graph, target::test16(), capped).plan.pins.gemm, m.plan.pins.gemm);
}

// A model that fits is compiled without a cap: nothing changes for it.
TEST(Compile, ModelThatFitsHasNoGemmCap) { EXPECT_EQ(compile_small().stats.gemm_tile_bytes_cap, 0u); }
