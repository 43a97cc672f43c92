// The kernel table: one entry per kind, consistent signatures, and costs, FLOPs and
// operand bytes that follow from the named dims.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "small_model.hpp"
#include "support/error.hpp"
#include "target/kernel_costs.hpp"

using namespace tilevit;
using compiler::Dim;
using compiler::KernelKind;

TEST(KernelTable, OneEntryPerKindWithInputsThenOutputs) {
  std::set<std::string> names;
  ASSERT_EQ(compiler::kernel_table().size(), compiler::kKernelKinds);
  for (std::size_t i = 0; i < compiler::kKernelKinds; ++i) {
    const auto& info = compiler::kernel_info(static_cast<KernelKind>(i));
    EXPECT_EQ(static_cast<std::size_t>(info.kind), i);
    EXPECT_TRUE(names.insert(info.name).second) << info.name;
    EXPECT_FALSE(info.dims().empty()) << info.name;
    EXPECT_GT(info.code_bytes, 0u) << info.name;
    const std::size_t first_output = info.first_output();
    EXPECT_GT(first_output, 0u) << info.name << " reads nothing";
    EXPECT_LT(first_output, info.operands().size()) << info.name << " writes nothing";
    for (std::size_t k = first_output; k < info.operands().size(); ++k)
      EXPECT_EQ(info.operands()[k].role, compiler::OperandRole::output) << info.name << " operand " << k;
  }
  EXPECT_STREQ(compiler::kernel_name(static_cast<KernelKind>(compiler::kKernelKinds)), "?");
}

TEST(KernelTable, DimsAreGivenByNameEachExactlyOnce) {
  const auto dims = compiler::make_dims(KernelKind::gemm_fp8, {{Dim::cols, 160}, {Dim::rows, 81}, {Dim::inner, 192}});
  EXPECT_EQ(compiler::dims_text(KernelKind::gemm_fp8, dims), "81x192x160");
  const compiler::KernelShape shape(KernelKind::gemm_fp8, dims);
  EXPECT_EQ(shape[Dim::inner], 192u);
  EXPECT_THROW(shape[Dim::keys], Error);
  EXPECT_THROW(compiler::make_dims(KernelKind::gemm_fp8, {{Dim::rows, 1}, {Dim::inner, 2}}), Error);  // cols missing
  EXPECT_THROW(compiler::make_dims(KernelKind::add, {{Dim::count, 1}, {Dim::count, 2}}), Error);     // twice
  EXPECT_THROW(compiler::make_dims(KernelKind::add, {{Dim::count, 1}, {Dim::rows, 2}}), Error);      // not of the kind
}

TEST(KernelTable, CostFlopsAndBytesFollowTheDims) {
  const auto m = target::c600();
  const auto gemm = compiler::make_dims(KernelKind::gemm_fp8, {{Dim::rows, 81}, {Dim::inner, 192}, {Dim::cols, 160}});
  const compiler::KernelShape g(KernelKind::gemm_fp8, gemm);
  const auto& info = g.info();
  EXPECT_EQ(info.cycles(m, g), target::gemm_cycles(m, target::Precision::fp8, 81, 192, 160));
  EXPECT_EQ(info.flops(g), 2u * 81 * 192 * 160);
  EXPECT_EQ(info.operand_bytes(0, g), 81u * 192);      // A, FP8
  EXPECT_EQ(info.operand_bytes(1, g), 192u * 160);     // B, FP8
  EXPECT_EQ(info.operand_bytes(2, g), 81u * 160 * 2);  // C, FP16
  EXPECT_EQ(info.operands()[0].region, compiler::RegionNeed::interleaved);

  const auto values = compiler::make_dims(KernelKind::attention_values,
                                          {{Dim::queries, 8}, {Dim::keys, 80}, {Dim::head_dim, 72}, {Dim::key_blocks, 3}});
  const compiler::KernelShape v(KernelKind::attention_values, values);
  EXPECT_EQ(v.info().operand_bytes(1, v), 3u * 8 * 4);          // every block's maxima, FP32
  EXPECT_EQ(v.info().operand_bytes(3, v), 8u * (72 + 1) * 4);   // {P.V, sum} per row
  EXPECT_EQ(v.info().cycles(m, v), target::softmax_cycles(m, 8, 80) + target::gemm_cycles(m, target::Precision::fp16, 8, 80, 72));
}

// FP8 attention products: F143 operands (half the FP16 bytes), the calibrated FP8 GEMM's
// cycles for both products, and the cast of p by the calibrated cast kernel.
TEST(KernelTable, FP8AttentionKindsCostTheFP8GemmAndTheCast) {
  const auto m = target::c600();
  const auto s = compiler::make_dims(KernelKind::attention_scores_fp8, {{Dim::queries, 81}, {Dim::keys, 80}, {Dim::head_dim, 72}});
  const compiler::KernelShape scores(KernelKind::attention_scores_fp8, s);
  EXPECT_EQ(scores.info().operand_bytes(0, scores), 81u * 72);
  EXPECT_EQ(scores.info().cycles(m, scores), target::gemm_cycles(m, target::Precision::fp8, 81, 72, 80));
  EXPECT_EQ(scores.info().uncalibrated_cycles(m, scores), 0u);
  const auto d = compiler::make_dims(KernelKind::attention_values_fp8,
                                     {{Dim::queries, 8}, {Dim::keys, 729}, {Dim::head_dim, 72}, {Dim::key_blocks, 1}});
  const compiler::KernelShape v(KernelKind::attention_values_fp8, d);
  EXPECT_EQ(v.info().operand_bytes(2, v), 729u * 72);
  EXPECT_EQ(v.info().cycles(m, v), target::softmax_cycles(m, 8, 729) + target::cast_fp16_fp8_cycles(m, 8 * 729) +
                                        target::gemm_cycles(m, target::Precision::fp8, 8, 729, 72));
  EXPECT_EQ(v.info().uncalibrated_cycles(m, v), 0u);
}

// Every call the compiler emits matches its kind's signature, operand by operand.
// (SigLIP's small model, then the tiny DINOv2 and CLIP for the other families' kinds.)
TEST(KernelTable, CompiledCallsMatchTheirSignatures) {
  std::set<KernelKind> seen;
  auto check = [&](const compiler::CompiledModel& compiled) {
    for (const auto& step : compiled.executable.program.steps)
      for (const auto& call : step.compute) {
        const auto shape = call.shape();
        ASSERT_EQ(call.operands.size(), shape.info().operands().size()) << shape.info().name;
        for (std::size_t i = 0; i < call.operands.size(); ++i)
          EXPECT_EQ(call.operands[i].bytes, shape.info().operand_bytes(i, shape)) << shape.info().name << " operand " << i;
        seen.insert(call.kind);
      }
  };
  check(test_support::compile_small());
  compiler::CompileOptions fp8;  // FP8 attention products (a plan choice)
  fp8.plan.pins.fp8_attention = {"layer.attention"};
  check(test_support::compile_small(2, fp8));
  compiler::CompileOptions fused;  // the split LayerNorm's and the FP8-output GELU's kinds
  fused.plan.pins.split_norms = {"layer.ln1", "layer.ln2"};
  fused.plan.pins.fp8_output_gelus = {"layer.mlp.gelu"};
  check(test_support::compile_small(2, fused));
  for (const char* preset : {"dinov2-tiny", "clip-tiny"})
    check(compiler::compile_model(
        compiler::build_vit_graph(model::ViTConfig::preset(preset), model::NumericsConfig::uniform(-4)), target::test16(), {}));
  EXPECT_GE(seen.size(), compiler::kKernelKinds - 1);  // every kind but perhaps gemm_fp16
}
