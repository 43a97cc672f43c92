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

struct LoweringOptions {
  std::uint32_t exchange_stream_words = 1024;
  ProfilingOptions profiling;
  PlanPins pins{};  // grids fixed by op name (gemm_plan.hpp); none: every grid chosen
  std::uint64_t gemm_tile_bytes_cap = 0;  // GemmMemoryCap for the chosen grids (0: none)
};

struct Lowered {
  CompiledProgram program;
  // The graph's numerics plus the splits lowering chose (GEMM inner blocks, attention key
  // blocks): what the device-numerics reference needs to compute bit for bit the same.
  model::NumericsConfig numerics;
  std::vector<HostBinding> bindings;
  std::vector<ElementConflict> conflicts_by_allocation;  // pairs of allocation indices (same tile)
  PlanPins plan;  // the grid every GEMM and attention op used, pinned or chosen (a plan file's content)
  std::uint64_t largest_gemm_tile_bytes = 0;  // the most gemm_tile_bytes of any GEMM's grid
};

Lowered lower(const Graph& graph, const target::MachineDescription& machine, const LoweringOptions& options);

}  // namespace tilevit::compiler
