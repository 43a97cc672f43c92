#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "compiler/program.hpp"
#include "device/sram.hpp"

namespace tilevit::device {

// Runs one kernel call against its tile's SRAM (iteration: the loop iteration, for
// operands that walk a per-layer sequence). Throws Error naming tile, superstep and
// kernel for any access outside the tile's memory or its operand.
void execute_call(const target::MachineDescription& machine, const compiler::CompiledProgram& program,
                  std::span<std::uint8_t> sram, const compiler::KernelCall& call, std::uint32_t step,
                  std::uint32_t iteration);

}  // namespace tilevit::device
