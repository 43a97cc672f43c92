#pragma once
// Modelled cycles of the program, step by step, and the figures of a whole call: the one
// cost table that compile statistics, the device model's cycle count, profiles and
// `inspect` all read (kernel costs from the kernel table, exchange per wave).
#include <cstdint>
#include <vector>

#include "compiler/graph.hpp"
#include "compiler/program.hpp"
#include "target/machine.hpp"

namespace tilevit::compiler {

// One superstep: slowest tile's compute (its kernels, then its local copies), then, if it
// exchanges, the phase overhead (sync and set-up) and the scheduled exchange up to its
// last landing (exchange_schedule.hpp).
struct StepCost {
  // entry_skew: the spread of the tiles' start times after the sync, before its compute
  // (MachineDescription::phase_entry_skew_cycles; a step with kernels or copies only).
  std::uint64_t entry_skew = 0, compute = 0, exchange = 0, sync = 0;
  // The part of `compute` (the slowest tile's) that no measurement covers (kernel_table.hpp).
  std::uint64_t compute_uncalibrated = 0;
  std::uint64_t total() const { return entry_skew + compute + exchange + sync; }
};
StepCost estimate_step(const target::MachineDescription& machine, const Superstep& step);
// Every step of the program, in program order (the loop body once).
std::vector<StepCost> step_costs(const target::MachineDescription& machine, const CompiledProgram& program);

// Each tile's compute cycles in a step: its kernel calls and its one local copy call.
std::vector<std::uint64_t> tile_compute_cycles(const target::MachineDescription& machine, const Superstep& step);
// Bytes each tile copies locally in a step.
std::vector<std::uint64_t> tile_local_copy_bytes(const target::MachineDescription& machine, const Superstep& step);
std::uint64_t estimate_call_cycles(const target::MachineDescription& machine, const KernelCall& call);
std::uint64_t estimate_call_uncalibrated_cycles(const target::MachineDescription& machine, const KernelCall& call);

// What one call of a program does, from its steps walked in time.
struct ProgramSummary {
  std::uint32_t tiles_used = 0;           // tiles with a kernel call
  std::uint32_t supersteps = 0;           // in the program (the loop body counted once)
  std::uint32_t executed_supersteps = 0;  // with the loop unrolled in time
  std::uint64_t kernel_calls = 0, transfers = 0;
  std::uint64_t exchange_bytes = 0;       // received, per call (loop counted loop_count times)
  std::uint64_t weight_bytes = 0;         // resident parameter bytes, all tiles
  std::uint64_t unique_weight_bytes = 0;  // the graph's parameter bytes
  std::uint64_t estimated_cycles = 0;     // sum over executed supersteps of slowest compute + exchange + sync
  // sync: the exchange phases' overheads and the compute phases' entry skews.
  std::uint64_t estimated_compute_cycles = 0, estimated_exchange_cycles = 0, estimated_sync_cycles = 0;
  // Of estimated_compute_cycles, those from kernel terms no measurement covers.
  std::uint64_t estimated_uncalibrated_cycles = 0;
  // Share of the compute cycles that come from calibrated kernels, in [0, 1] (1 with no compute).
  double calibrated_compute_share() const;
  std::uint32_t exchange_table_bytes_max = 0;
  std::vector<std::uint32_t> exchange_table_bytes;  // per tile
};
ProgramSummary summarize_program(const target::MachineDescription& machine, const CompiledProgram& program,
                                 const std::vector<Tensor>& tensors);

}  // namespace tilevit::compiler
