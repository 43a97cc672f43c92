#pragma once
// The compiler driver: graph -> lowered program -> placed program, with the figures a
// user asks first (per-tile memory, supersteps, exchange, estimated cycles).
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "compiler/graph.hpp"
#include "compiler/lower.hpp"
#include "compiler/placement.hpp"
#include "compiler/profiling.hpp"
#include "compiler/step_costs.hpp"
#include "target/machine.hpp"

namespace tilevit::compiler {

struct CompileStats : ProgramSummary {
  std::uint32_t peak_tile_bytes = 0, largest_hole_min = 0;
  std::uint64_t gemm_tile_bytes_cap = 0;  // the cap the grids were chosen under (0: none)
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
  Plan plan;                            // every lever as compiled: W, every GEMM and attention op's grid
  std::vector<TileMemoryStats> memory;  // per tile
  CompileStats stats;
};

// The compile pipeline's passes, in the order they run (compile.cpp): `tilevit compile
// --list-passes`, and the names --dump-after takes.
struct PassInfo {
  const char* name;  // "schedule-exchange"
  const char* what;  // one line
};
std::span<const PassInfo> compile_passes();
// Called after every pass with the program as it leaves it (a compile that re-plans under
// a GEMM cap runs the passes again: the last call of a pass is the final program's).
using PassObserver = std::function<void(const PassInfo& pass, const CompiledProgram& program)>;

// Runs the passes on `graph`. When placement finds a tile over its SRAM and no cap was
// given, the chosen GEMM grids are re-chosen under a per-tile byte cap: the largest
// GEMM's bytes (gemm_tile_bytes) less the worst tile's shortfall, tightened again while
// a tile is still short (at most 4 rounds; a round that does not shrink the shortfall
// doubles the next step). Models that fit are compiled exactly as before; one that still
// does not fit throws the last DoesNotFit.
CompiledModel compile_model(const Graph& graph, const target::MachineDescription& machine, const CompileOptions& options,
                            const PassObserver& after_pass = {});

// The memory statistics of every tile of a placed program (from its allocations and their
// addresses; placement.hpp defines the figures). Throws Error(kExitBadInput) naming the
// tile when an allocation lies on a tile the machine does not have.
std::vector<TileMemoryStats> tile_memory_stats(const target::MachineDescription& machine, const CompiledProgram& program,
                                               bool profiling);

}  // namespace tilevit::compiler
