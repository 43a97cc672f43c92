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
#include "target/machine.hpp"

namespace tilevit::compiler {

struct CompileOptions {
  std::uint32_t exchange_stream_words = 1024;
  ProfilingOptions profiling;  // enabled: reserve the profiling buffers
  PlanPins pins{};             // passed to lowering (LoweringOptions::pins)
};

struct CompileStats {
  std::uint32_t tiles_used = 0;
  std::uint32_t supersteps = 0;        // in the program (the loop body counted once)
  std::uint32_t executed_supersteps = 0;  // with the loop unrolled in time
  std::uint64_t kernel_calls = 0, transfers = 0;
  std::uint64_t exchange_bytes = 0;    // received, per call (loop counted loop_count times)
  std::uint64_t weight_bytes = 0;      // resident parameter bytes, all tiles
  std::uint64_t unique_weight_bytes = 0;  // the graph's parameter bytes
  std::uint64_t estimated_cycles = 0;  // sum over executed supersteps of slowest compute + exchange + sync
  std::uint64_t estimated_compute_cycles = 0, estimated_exchange_cycles = 0, estimated_sync_cycles = 0;
  std::uint32_t peak_tile_bytes = 0, largest_hole_min = 0;
  std::uint32_t exchange_table_bytes_max = 0;
};

struct CompiledModel {
  Graph graph;
  Lowered lowered;                        // program with resolved addresses, bindings
  std::vector<TileMemoryStats> memory;    // per tile
  CompileStats stats;
};

CompiledModel compile_model(const Graph& graph, const target::MachineDescription& machine, const CompileOptions& options);

// Estimated cycles of one superstep: slowest tile's compute, then the exchange phase
// (receive-bound words at the machine's rate, multicast sent once) plus sync.
struct StepCost {
  std::uint64_t compute = 0, exchange = 0, sync = 0;
};
StepCost estimate_step(const target::MachineDescription& machine, const Superstep& step);
// The parts of that estimate per tile: each tile's compute cycles, and per exchange wave
// each tile's busy cycles (max of its sent and received bytes at the machine's rates).
std::vector<std::uint64_t> tile_compute_cycles(const target::MachineDescription& machine, const Superstep& step);
std::vector<std::vector<std::uint64_t>> tile_wave_cycles(const target::MachineDescription& machine, const Superstep& step);
std::uint64_t estimate_call_cycles(const target::MachineDescription& machine, const KernelCall& call);

// The memory statistics of every tile of a placed program (from its allocations and their
// addresses; placement.hpp defines the figures). Throws Error(kExitBadInput) naming the
// tile when an allocation lies on a tile the machine does not have.
std::vector<TileMemoryStats> tile_memory_stats(const target::MachineDescription& machine, const CompiledProgram& program,
                                               bool profiling);

}  // namespace tilevit::compiler
