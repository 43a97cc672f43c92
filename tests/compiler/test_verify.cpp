// The verifier as a table of planted mistakes: each mutation of a correct program of the
// small model, and the message the verifier must give for it (naming tile and superstep
// where the mistake has one).
#include <gtest/gtest.h>

#include <functional>
#include <chrono>
#include <stdexcept>

#include "small_model.hpp"
#include "verify_probes.hpp"

using namespace tilevit;

namespace {

struct ProgramMutation {
  std::string name;
  std::function<void(compiler::CompiledProgram&)> mutate;
  std::string expected;  // a fragment of some violation
};

compiler::KernelCall& first_call(compiler::CompiledProgram& p, compiler::KernelKind kind) {
  for (auto& s : p.steps)
    for (auto& c : s.compute)
      if (c.kind == kind) return c;
  throw std::runtime_error("no such kernel in the small model");
}
compiler::KernelCall& first_gemm(compiler::CompiledProgram& p) { return first_call(p, compiler::KernelKind::gemm_fp8); }
compiler::Allocation& allocation_of(compiler::CompiledProgram& p, const compiler::Operand& o) {
  return p.allocations[o.allocation];
}

std::vector<ProgramMutation> placement_and_exchange_mutations() {
  using P = compiler::CompiledProgram;
  return {
      {"output onto its live input",
       [](P& p) {
         auto& g = first_gemm(p);
         allocation_of(p, g.operands[2]).address = allocation_of(p, g.operands[0]).address;
       },
       "overlap in address while both live"},
      {"operand past its allocation", [](P& p) { first_gemm(p).operands[1].offset += 4096; }, "reaches byte"},
      {"kernel on another tile", [](P& p) { first_gemm(p).tile = (first_gemm(p).tile + 1) % 16; }, "which lives on tile"},
      {"transfer not whole words",
       [](P& p) {
         for (auto& s : p.steps)
           if (!s.exchange.empty()) return void(s.exchange[0].bytes -= 2);
       },
       "not whole 32-bit words"},
      {"allocation in a reserved range", [](P& p) { p.allocations[0].address = 0x50000; }, "reserved range"},
      {"label not UTF-8", [](P& p) { p.allocations[0].request.label = "w\xff"; },
       "the label of allocation 0 is not printable UTF-8 (byte 1 of 2)"},
      {"superstep label with a control character", [](P& p) { p.steps[1].label = "\n"; },
       "the label of superstep 1 is not printable UTF-8 (byte 0 of 1)"},
      {"use outside the lifetime",
       [](P& p) {
         auto& r = allocation_of(p, first_gemm(p).operands[0]).request;
         r.first = r.last = 0;
       },
       "outside its lifetime"},
      {"kernel operand living only from the exchange phase",
       [](P& p) {
         // The GEMM's gathered operand, first written by the previous step's exchange, now
         // claimed to start at its own step's exchange: the kernel reads it before that.
         for (std::uint32_t s = 0; s < p.steps.size(); ++s)
           for (auto& c : p.steps[s].compute)
             if (c.kind == compiler::KernelKind::gemm_fp8) {
               allocation_of(p, c.operands[0]).request.first = compiler::exchange_phase(s);
               return;
             }
       },
       "in its compute phase, outside its lifetime step"},
      {"input bound after the first step",
       [](P& p) {
         for (auto& a : p.allocations)
           if (a.request.label.rfind("image.patches", 0) == 0) a.request.first = 1;
       },
       "the host writes it before step 0"},
      {"output released before the end",
       [](P& p) {
         std::uint32_t last = 0;
         for (const auto& a : p.allocations)
           if (!compiler::is_whole_program(a.request.kind)) last = std::max(last, a.request.last);
         for (auto& a : p.allocations)
           if (!compiler::is_whole_program(a.request.kind) && a.request.last == last) a.request.last = 0;
       },
       "the host reads it after the last step"},
      {"output into a resident weight",
       [](P& p) {
         // A one-row bias_add writing its own bias vector: every operand the signature's bytes.
         auto& c = first_call(p, compiler::KernelKind::bias_add);
         c.dims[0] = 1;
         c.operands[0].bytes = c.operands[1].bytes;
         c.operands[2] = c.operands[1];
       },
       "operand 2 (out) writes the resident weight"},
      {"loop past the program", [](P& p) { p.loop_end = static_cast<std::uint32_t>(p.steps.size()) + 1; },
       "do not fit the program"},
      // Fuzz finding P2 (issue 34 rebuilt it): the device refused the scale only when it ran.
      {"FP8 cast scale outside the format", [](P& p) { first_call(p, compiler::KernelKind::cast_fp8).scale = 0x7ffffff8; },
       "cast_fp8 FP8 scale 2147483640 is outside [-31, 31]"},
  };
}

void expect_violation(const compiler::CompiledModel& m, const std::string& name, const std::string& expected,
                      const std::string& prefix = "") {
  const auto report = test_support::verify_on_test16(m);
  ASSERT_FALSE(report.ok()) << name << ": not found";
  bool found = false;
  for (const auto& v : report.violations)
    found |= v.find(expected) != std::string::npos && v.rfind(prefix, 0) == 0;
  EXPECT_TRUE(found) << name << ": \"" << prefix << "...\" with \"" << expected << "\" not in: " << report.violations.front();
}

}  // namespace

TEST(Verify, TheCompiledProgramIsClean) { EXPECT_TRUE(test_support::verify_on_test16(test_support::compile_small()).ok()); }

TEST(Verify, EachPlantedMistakeIsReported) {
  const auto compiled = test_support::compile_small();
  for (const auto& mutation : placement_and_exchange_mutations()) {
    auto broken = compiled;
    mutation.mutate(broken.executable.program);
    expect_violation(broken, mutation.name, mutation.expected);
  }
}

// A call against its kind's signature: the message names tile, superstep and operand.
TEST(Verify, EachSignatureProbeNamesTileStepAndOperand) {
  const auto compiled = test_support::compile_small();
  const auto [step, index] = test_support::first_probe_gemm(compiled.executable.program);
  ASSERT_NE(step, UINT32_MAX);
  const std::uint32_t tile = compiled.executable.program.steps[step].compute[index].tile;
  const std::string where = "tile " + std::to_string(tile) + ", superstep " + std::to_string(step) + " (";
  for (const auto& probe : test_support::gemm_call_mutations()) {
    auto broken = compiled;
    probe.mutate(broken.executable.program.steps[step].compute[index]);
    expect_violation(broken, probe.name, probe.expected, where);
  }
}

// Fuzz finding: 16,000 allocations at one address made verify build a message for each
// of 128 million overlapping pairs (seconds). Messages are built only up to the limit,
// and the pair sweep stops after a bounded number of pairs.
TEST(Verify, ManyOverlappingAllocationsAreCountedQuickly) {
  auto m = test_support::compile_small();
  auto& allocations = m.executable.program.allocations;
  const compiler::Allocation first = allocations.front();
  for (int i = 0; i < 4000; ++i) allocations.push_back(first);
  const auto start = std::chrono::steady_clock::now();
  const auto report = test_support::verify_on_test16(m);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  ASSERT_FALSE(report.ok());
  EXPECT_LE(report.violations.size(), 21u);  // the limit, plus the note that checking stopped
  EXPECT_GT(report.violation_count, 1'000'000u);
  EXPECT_NE(report.violations.front().find("overlap in address while both live"), std::string::npos)
      << report.violations.front();
  bool stopped = false;
  for (const auto& v : report.violations) stopped = stopped || v.find("stopped checking") != std::string::npos;
  EXPECT_TRUE(stopped);
}
