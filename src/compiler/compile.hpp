#pragma once
// The compiler driver: graph -> lowered program -> placed program, with the figures a
// user asks first (per-tile memory, supersteps, exchange, estimated cycles).
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/graph.hpp"
#include "compiler/lower.hpp"
#include "compiler/placement.hpp"
#include "compiler/profiling.hpp"
#include "compiler/step_costs.hpp"
#include "target/machine.hpp"

namespace tilevit::compiler {

struct CompileOptions {
  std::uint32_t exchange_stream_words = 1024;
  ProfilingOptions profiling;  // enabled: reserve the profiling buffers
  PlanPins pins{};             // passed to lowering (LoweringOptions::pins)
};

struct CompileStats : ProgramSummary {
  std::uint32_t peak_tile_bytes = 0, largest_hole_min = 0;
};

// A compiled model as it runs: what a package holds (package/program_codec.hpp) and what
// the device model executes.
struct Executable {
  target::MachineDescription machine;
  model::ViTConfig config;
  model::NumericsConfig numerics;     // the graph's precisions with the splits lowering chose
  std::vector<Tensor> tensors;        // the graph's tensors (host bindings name them)
  CompiledProgram program;            // placed: every allocation has its address
  std::vector<HostBinding> bindings;
  StageRange stage;                   // the part of the model it computes (graph.hpp)
};

// The compiler's answer: the executable, and the figures of its placement.
struct CompiledModel {
  Executable executable;
  PlanPins plan;                        // the grid of every GEMM and attention op (plan_file.hpp)
  std::vector<TileMemoryStats> memory;  // per tile
  CompileStats stats;
};

CompiledModel compile_model(const Graph& graph, const target::MachineDescription& machine, const CompileOptions& options);

// The memory statistics of every tile of a placed program (from its allocations and their
// addresses; placement.hpp defines the figures). Throws Error(kExitBadInput) naming the
// tile when an allocation lies on a tile the machine does not have.
std::vector<TileMemoryStats> tile_memory_stats(const target::MachineDescription& machine, const CompiledProgram& program,
                                               bool profiling);

}  // namespace tilevit::compiler
