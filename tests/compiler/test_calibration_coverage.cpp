// Calibration coverage: the per-kind split of the modelled compute cycles adds up to the
// step cost table's figures, its text says what is uncalibrated, and the per-operation
// kernel maxima carry the matrix-product term the original measured on its own.
#include <gtest/gtest.h>

#include "compiler/calibration_coverage.hpp"
#include "compiler/step_costs.hpp"
#include "small_model.hpp"
#include "support/digits.hpp"
#include "target/kernel_costs.hpp"

using namespace tilevit;
using compiler::KernelKind;

namespace {
const compiler::KindCoverage* find_kind(const compiler::CalibrationCoverage& c, KernelKind kind) {
  for (const auto& k : c.kinds)
    if (k.kind == kind) return &k;
  return nullptr;
}
}  // namespace

TEST(CalibrationCoverage, AddsUpToTheStepCostTable) {
  const auto m = test_support::compile_small();
  const auto& p = m.executable.program;
  const auto c = compiler::calibration_coverage(target::test16(), p);
  const auto s = compiler::summarize_program(target::test16(), p, m.executable.tensors);
  EXPECT_EQ(c.compute_cycles, s.estimated_compute_cycles);
  EXPECT_EQ(c.uncalibrated_cycles, s.estimated_uncalibrated_cycles);
  EXPECT_DOUBLE_EQ(c.calibrated_share(), s.calibrated_compute_share());
  std::uint64_t cycles = 0, uncalibrated = 0;
  for (const auto& k : c.kinds) {
    EXPECT_GT(k.cycles, 0u) << compiler::kernel_name(k.kind);
    EXPECT_LE(k.uncalibrated_cycles, k.cycles) << compiler::kernel_name(k.kind);
    cycles += k.cycles;
    uncalibrated += k.uncalibrated_cycles;
  }
  // The loopbacks' local copies are the rest, all uncalibrated.
  EXPECT_GT(c.local_copy_cycles, 0u);
  EXPECT_EQ(cycles + c.local_copy_cycles, c.compute_cycles);
  EXPECT_EQ(uncalibrated + c.local_copy_cycles, c.uncalibrated_cycles);
  // The small model splits attention in key blocks: their combination has no measurement.
  const auto* combine = find_kind(c, KernelKind::attention_combine);
  ASSERT_NE(combine, nullptr);
  EXPECT_EQ(combine->uncalibrated_cycles, combine->cycles);
  EXPECT_GT(c.uncalibrated_cycles, 0u);
  EXPECT_LT(c.calibrated_share(), 1.0);
}

// test16 names no kernel generation (all uncalibrated); with the C600's generation its
// GEMMs rest on measurements and the key-block combination still does not.
TEST(CalibrationCoverage, TextNamesTheShareAndTheUncalibratedKinds) {
  auto machine = target::test16();
  machine.costs.generation = target::c600().costs.generation;
  const auto c = compiler::calibration_coverage(machine, test_support::compile_small().executable.program);
  const std::string text = compiler::coverage_text(c);
  EXPECT_EQ(text.rfind("kernel cycles: ", 0), 0u) << text;
  EXPECT_NE(text.find(percent_text(c.compute_cycles - c.uncalibrated_cycles, c.compute_cycles) + " calibrated of " +
                      with_commas(c.compute_cycles)),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("attention_combine " + with_commas(find_kind(c, KernelKind::attention_combine)->uncalibrated_cycles)),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("gemm_fp8 "), std::string::npos) << "a calibrated kind is not listed: " << text;
  EXPECT_NE(text.find("local copies " + with_commas(c.local_copy_cycles)), std::string::npos) << text;
  EXPECT_GT(c.calibrated_share(), 0.0);
  EXPECT_NE(text.find("exchange and sync"), std::string::npos) << text;
}

// A machine whose kernel generation has no measurements: every compute cycle uncalibrated.
TEST(CalibrationCoverage, NothingCalibratedReadsZeroPercent) {
  compiler::CalibrationCoverage c;
  c.compute_cycles = c.uncalibrated_cycles = 5000;
  c.kinds = {{KernelKind::gemm_fp8, 4000, 4000}, {KernelKind::add, 1000, 1000}};
  EXPECT_DOUBLE_EQ(c.calibrated_share(), 0.0);
  const std::string text = compiler::coverage_text(c);
  EXPECT_NE(text.find("0.0% calibrated of 5,000 (uncalibrated: gemm_fp8 4,000, add 1,000)"), std::string::npos) << text;
  EXPECT_DOUBLE_EQ(compiler::CalibrationCoverage{}.calibrated_share(), 1.0);  // no compute
}

TEST(CalibrationCoverage, PercentagesNeverRoundAPartAway) {
  EXPECT_EQ(percent_text(987, 1000), "98.7%");
  EXPECT_EQ(percent_text(0, 1000), "0.0%");
  EXPECT_EQ(percent_text(1000, 1000), "100.0%");
  EXPECT_EQ(percent_text(0, 0), "100.0%");
  EXPECT_EQ(percent_text(99999, 100000), ">99.9%");
  EXPECT_EQ(percent_text(1, 100000), "<0.1%");
  EXPECT_EQ(with_commas(1234567), "1,234,567");
  EXPECT_EQ(with_commas(999), "999");
}

TEST(KernelMaxima, LongestCallPerOperationAndKindWithItsMatrixTerm) {
  const auto m = test_support::compile_small();
  const auto& machine = target::test16();
  const auto& p = m.executable.program;
  const auto rows = compiler::kernel_maxima(machine, p);
  ASSERT_FALSE(rows.empty());
  bool scores = false, values = false;
  for (const auto& r : rows) {
    SCOPED_TRACE(r.operation + " " + compiler::kernel_name(r.kind));
    EXPECT_GT(r.calls, 0u);
    EXPECT_LE(r.uncalibrated_cycles, r.max_cycles);
    // No call of this operation and kind is longer.
    for (const auto& step : p.steps)
      for (const auto& call : step.compute)
        if (p.op_names[call.op] == r.operation && call.kind == r.kind) {
          EXPECT_LE(compiler::estimate_call_cycles(machine, call), r.max_cycles);
        }
    switch (r.kind) {
      case KernelKind::gemm_fp8:
      case KernelKind::gemm_fp16: EXPECT_EQ(r.matrix_cycles, r.max_cycles); break;
      case KernelKind::attention_scores:
        scores = true;
        ASSERT_TRUE(r.matrix_cycles);
        // Q.K^T alone: the row maxima are part of the measured softmax, charged in attention_values.
        EXPECT_EQ(*r.matrix_cycles, r.max_cycles);
        break;
      case KernelKind::attention_values: {
        values = true;
        ASSERT_TRUE(r.matrix_cycles);
        // softmax + P.V: the shape is queries x keys x head_dim x key_blocks
        unsigned q = 0, k = 0;
        ASSERT_EQ(std::sscanf(r.shape.c_str(), "%ux%u", &q, &k), 2) << r.shape;
        EXPECT_EQ(*r.matrix_cycles + target::softmax_cycles(machine, q, k), r.max_cycles);
        break;
      }
      default: EXPECT_FALSE(r.matrix_cycles);
    }
  }
  EXPECT_TRUE(scores && values);
}
