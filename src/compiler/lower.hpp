#pragma once
// Lowering: graph (algorithm) + machine -> per-tile supersteps with symbolic operands
// (allocation + offset), host bindings and allocation requests. The schedule decisions
// live here: GEMM grids (gemm_plan.hpp), row-split element-wise work, attention by head
// and query block, broadcast of per-layer vectors from their home tiles.
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/distribution.hpp"
#include "compiler/gemm_plan.hpp"
#include "compiler/graph.hpp"
#include "compiler/plan.hpp"
#include "compiler/program.hpp"
#include "target/machine.hpp"

namespace tilevit::compiler {

// Where the host writes (weights once, the image every call) or reads (the embedding)
// a rectangle of a graph tensor. For sequences, layer l's slice sits at
// offset + l * layer_stride, for l < layers.
struct HostBinding {
  enum class Direction : std::uint8_t { parameter, input, output };
  Direction direction = Direction::parameter;
  std::uint32_t tensor = 0;  // graph tensor id
  std::uint32_t row0 = 0, rows = 0, col0 = 0, cols = 0;
  std::uint32_t tile = 0, allocation = 0, offset = 0;
  std::uint32_t layers = 1, layer_stride = 0;
};

// What a compile is asked for: the plan (pins by op name and W; ops without a pin are
// chosen by estimate), profiling, and a cap on the chosen GEMM grids.
struct CompileOptions {
  Plan plan;
  ProfilingOptions profiling;  // enabled: reserve the profiling buffers
  // A per-tile bound on each chosen GEMM grid's bytes (gemm_plan.hpp GemmMemoryCap); 0:
  // none at first, and compile_model sets one itself when the fastest grids do not fit.
  std::uint64_t gemm_tile_bytes_cap = 0;
};

struct Lowered {
  CompiledProgram program;
  // The graph's numerics plus the splits lowering chose (GEMM inner blocks, attention key
  // blocks): what the device-numerics reference needs to compute bit for bit the same.
  model::NumericsConfig numerics;
  std::vector<HostBinding> bindings;
  std::vector<ElementConflict> conflicts_by_allocation;  // pairs of allocation indices (same tile)
  Plan plan;  // every lever as lowered, pinned or chosen: W and every op's grid (a plan file's content)
  std::uint64_t largest_gemm_tile_bytes = 0;  // the most gemm_tile_bytes of any GEMM's grid
  std::vector<std::uint32_t> created_in_step;  // per allocation: the step that made it
};

// The first pass (compile.cpp runs the rest): every op of the graph lowered to
// supersteps of kernel calls and transfers, allocations with the phases of their uses,
// host bindings. Lifetimes are closed, local copies split, the exchange scheduled and
// support allocated by the passes after it.
Lowered lower(const Graph& graph, const target::MachineDescription& machine, const CompileOptions& options);
// The passes of compile.cpp that work on a lowered program (lowering_context.cpp):
// lifetimes across the loop and of allocations never used; support allocations (kernel
// code, exchange tables, profiling samples) on every tile.
void close_lifetimes(Lowered& lowered);
void allocate_support(CompiledProgram& program, std::uint32_t tiles);

}  // namespace tilevit::compiler
