// The verifier checks every kernel call against its kind's signature and names the tile,
// superstep and operand of what it rejects.
#include <gtest/gtest.h>

#include "small_model.hpp"
#include "verify_probes.hpp"

using namespace tilevit;

using test_support::compile_small;

namespace {
compiler::VerifyReport verify(const compiler::CompiledModel& m) { return test_support::verify_on_test16(m); }
}  // namespace

TEST(VerifySignatures, EveryProbeIsRejectedNamingTileStepAndOperand) {
  const auto compiled = compile_small();
  ASSERT_TRUE(verify(compiled).ok());
  const auto [step, index] = test_support::first_probe_gemm(compiled.executable.program);
  ASSERT_NE(step, UINT32_MAX);
  const std::uint32_t tile = compiled.executable.program.steps[step].compute[index].tile;
  const std::string where = "tile " + std::to_string(tile) + ", superstep " + std::to_string(step) + " (";
  for (const auto& probe : test_support::gemm_call_mutations()) {
    auto broken = compiled;
    probe.mutate(broken.executable.program.steps[step].compute[index]);
    const auto report = verify(broken);
    ASSERT_FALSE(report.ok()) << probe.name;
    EXPECT_EQ(report.violations.front().rfind(where, 0), 0u) << probe.name << ": " << report.violations.front();
    EXPECT_NE(report.violations.front().find(probe.expected), std::string::npos)
        << probe.name << ": " << report.violations.front();
  }
}

TEST(VerifySignatures, AnOutputWrittenIntoAResidentWeightIsRejected) {
  auto compiled = compile_small();
  auto& p = compiled.executable.program;
  // A bias_add whose output is redirected to its own bias vector, resized to match.
  for (auto& step : p.steps)
    for (auto& call : step.compute)
      if (call.kind == compiler::KernelKind::bias_add) {
        call.dims[0] = 1;  // one row: the output is exactly a bias vector's bytes
        call.operands[0].bytes = call.operands[2].bytes = call.operands[1].bytes;
        call.operands[2] = call.operands[1];
        call.operands[2].layer_stride = call.operands[1].layer_stride;
        const auto report = verify(compiled);
        ASSERT_FALSE(report.ok());
        bool named = false;
        for (const auto& v : report.violations) named |= v.find("operand 2 (out) writes the resident weight") != std::string::npos;
        EXPECT_TRUE(named) << report.violations.front();
        return;
      }
  FAIL() << "no bias_add in the small model";
}
