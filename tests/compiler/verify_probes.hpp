#pragma once
// Programs with one kernel call broken against its kind's signature, as a damaged or
// crafted package would hold them: what the verifier (tests/compiler) and the commands
// that load packages (tests/cli) must reject.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/compile.hpp"

namespace tilevit::test_support {

struct CallMutation {
  std::string name;
  std::function<void(compiler::KernelCall&)> mutate;
  std::string expected;  // a fragment of the first violation
};

// The four probes of a GEMM call (a kind past the table, output dropped, M doubled, inputs swapped) and
// a dim out of range.
inline std::vector<CallMutation> gemm_call_mutations() {
  return {
      {"not_a_kind", [](compiler::KernelCall& c) { c.kind = static_cast<compiler::KernelKind>(compiler::kKernelKinds); },
       "kernel kind " + std::to_string(compiler::kKernelKinds) + " is not a kernel kind"},
      {"output_dropped", [](compiler::KernelCall& c) { c.operands.pop_back(); },
       "gemm_fp8 has 2 operands, its signature has 3 (A, B, C)"},
      {"rows_doubled", [](compiler::KernelCall& c) { c.dims[0] *= 2; }, "gemm_fp8 operand 0 (A) holds"},
      {"inputs_swapped", [](compiler::KernelCall& c) { std::swap(c.operands[0], c.operands[1]); },
       "gemm_fp8 operand 0 (A) holds"},
      {"inner_zero", [](compiler::KernelCall& c) { c.dims[1] = 0; }, "gemm_fp8 dim inner = 0 is outside"},
  };
}

// Where the probes apply: the first FP8 GEMM whose A and B differ in size (so swapping
// them changes both operands' bytes). Returns {step, call index}.
inline std::pair<std::uint32_t, std::size_t> first_probe_gemm(const compiler::CompiledProgram& p) {
  for (std::uint32_t s = 0; s < p.steps.size(); ++s)
    for (std::size_t i = 0; i < p.steps[s].compute.size(); ++i) {
      const auto& c = p.steps[s].compute[i];
      if (c.kind == compiler::KernelKind::gemm_fp8 && c.operands[0].bytes != c.operands[1].bytes) return {s, i};
    }
  return {UINT32_MAX, 0};
}

}  // namespace tilevit::test_support
