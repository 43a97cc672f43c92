#pragma once
// How much of a program's modelled kernel time rests on measurements: the compute cycles
// of every executed superstep's slowest tile split by kernel kind into calibrated and
// uncalibrated cycles (KernelKindInfo::uncalibrated_cycles), and per operation and kind
// the longest call. Exchange and sync cycles come from machine rules, not kernel
// measurements, and are not part of these figures. Read by compile, run and inspect.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/kernel_table.hpp"
#include "compiler/program.hpp"
#include "target/machine.hpp"

namespace tilevit::compiler {

struct KindCoverage {
  KernelKind kind = KernelKind::add;
  std::uint64_t cycles = 0, uncalibrated_cycles = 0;  // on the slowest tiles, per call
};

struct CalibrationCoverage {
  // Sums over executed supersteps of the slowest tile's compute: equal to
  // ProgramSummary::estimated_compute_cycles and estimated_uncalibrated_cycles.
  std::uint64_t compute_cycles = 0, uncalibrated_cycles = 0;
  std::uint64_t local_copy_cycles = 0;  // part of both: data a tile moves within its own SRAM
  std::vector<KindCoverage> kinds;  // kinds with cycles, in kernel-table order
  // Calibrated share of compute_cycles in [0, 1]; 1 with no compute.
  double calibrated_share() const;
};
CalibrationCoverage calibration_coverage(const target::MachineDescription& machine, const CompiledProgram& program);

// One superstep's slowest tile (the tile estimate_step charges): its compute by kind and
// its local copy call, so that a step's figures add up to StepCost::compute.
struct StepCoverage {
  std::array<KindCoverage, kKernelKinds> kinds{};  // indexed by KernelKind
  std::uint64_t local_copy_cycles = 0;
};
StepCoverage slowest_tile_coverage(const target::MachineDescription& machine, const Superstep& step);

// One line, e.g. "kernel cycles: 98.7% calibrated of 1,234,567 (uncalibrated:
// attention_combine 12,345, attention_scores 3,456); each step's slowest tile, ...;
// exchange and sync ...": not the compute tile-cycles of all tiles `profile query` counts.
std::string coverage_text(const CalibrationCoverage& coverage);

// The longest call of one kind for one operation (over tiles and supersteps; the loop body
// once, as one layer).
struct KernelMaximum {
  std::string operation;  // graph operation, e.g. "layer.qkv"
  KernelKind kind = KernelKind::add;
  bool in_loop = false;   // the operation belongs to the per-layer loop body
  std::uint64_t calls = 0;          // of this operation and kind, over all tiles, one layer
  std::uint64_t max_cycles = 0;     // the longest call
  std::uint64_t uncalibrated_cycles = 0;  // of that call
  std::string shape;                // that call's dims ("81x192x160")
  // Of that call, the matrix-product term (the original measured it as its own GEMM
  // kernel): the whole call for the GEMM kinds, Q.K^T for attention_scores, P.V for
  // attention_values; none for the other kinds.
  std::optional<std::uint64_t> matrix_cycles;
};
// Sorted by operation, then kind.
std::vector<KernelMaximum> kernel_maxima(const target::MachineDescription& machine, const CompiledProgram& program);

// The matrix-product term of one call (see KernelMaximum::matrix_cycles).
std::optional<std::uint64_t> matrix_product_cycles(const target::MachineDescription& machine, const KernelCall& call);

}  // namespace tilevit::compiler
