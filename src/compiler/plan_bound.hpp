#pragma once
// A lower bound on the modelled cycles of one call, whatever the plan: every op's
// arithmetic spread perfectly over all tiles, with no exchange, no sync and no fixed
// per-call costs. Matrix products (GEMMs, attention's QK^T and P.V) count their FLOPs at
// the machine's peak FLOP per cycle per tile of their precision ([matrix] of the machine
// file); vector work (softmax, LayerNorm, GELU, adds, casts) counts the whole op as one call
// of its kernel at the calibrated rates (target/kernel_costs.hpp) less the call's fixed
// base. The plan search reports its result's gap to it.
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/graph.hpp"
#include "target/machine.hpp"

namespace tilevit::compiler {

struct LowerBound {
  std::uint64_t cycles = 0;         // matrix_cycles + vector_cycles
  std::uint64_t matrix_cycles = 0;  // sum over ops and executions of FLOPs / (tiles x peak FLOP per cycle)
  std::uint64_t vector_cycles = 0;  // sum of the vector kernels' work / tiles
  static constexpr const char* kMethod =
      "every op's work spread evenly over all tiles, no exchange, sync or per-call base: matrix FLOPs at the "
      "machine's peak FLOP/cycle/tile of their precision, vector kernels (softmax, LayerNorm, GELU, adds, casts) "
      "as one call each at the calibrated per-row and per-vector rates";
};

LowerBound plan_lower_bound(const Graph& graph, const target::MachineDescription& machine);

// The same bound per graph operation: its work in tile-cycles over every execution of one
// call (a loop body op counted loop_count times), matrix and vector parts together. Spread
// over all tiles it is that op's share of plan_lower_bound (before rounding). Profiles record
// it (operation_bounds, docs/PROFILE_FORMAT.md) for `profile query`'s achieved/bound ratio.
struct OperationBound {
  std::string name;         // the graph op's name, as profiles name operations
  double tile_cycles = 0;
};
std::vector<OperationBound> operation_lower_bounds(const Graph& graph, const target::MachineDescription& machine);

}  // namespace tilevit::compiler
