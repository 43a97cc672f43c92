#pragma once
// An independent check of a compiled program: it trusts nothing the planner computed
// and re-derives every promise from the program, the placement and the machine.
#include <string>
#include <vector>

#include "compiler/graph.hpp"
#include "compiler/lower.hpp"
#include "compiler/program.hpp"
#include "target/machine.hpp"

namespace tilevit::compiler {

struct VerifyReport {
  std::vector<std::string> violations;  // first `limit` problems, one line each
  std::uint64_t violation_count = 0;
  std::uint64_t allocations = 0, kernel_calls = 0, transfers = 0, bindings = 0;
  bool ok() const { return violation_count == 0; }
};

// Checks: allocations inside SRAM, inside one region that satisfies their need, clear of
// reserved ranges, aligned, never overlapping another allocation whose lifetime overlaps;
// every kernel call against its kind's signature (compiler/kernel_table.hpp: a kind that
// exists, dims in range, operand count, each operand's bytes from the dims, its region,
// no output into a resident weight); every kernel operand on the calling tile, in range of its allocation for every loop
// iteration and live at that superstep; GEMM output and streamed operand in different
// SRAM elements; every transfer in range on both ends, whole 32-bit words, live, and no
// two writes (or a write and a read) of one exchange phase touching the same bytes;
// bindings in range; every label and name (allocations, supersteps, ops, tensors)
// printable UTF-8.
VerifyReport verify_program(const target::MachineDescription& machine, const CompiledProgram& program,
                            const std::vector<HostBinding>& bindings, const std::vector<Tensor>& tensors,
                            bool profiling = false, std::size_t limit = 20);

}  // namespace tilevit::compiler
