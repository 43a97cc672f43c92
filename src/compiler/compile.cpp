#include "compiler/compile.hpp"

#include <algorithm>
#include <map>

#include "compiler/distribution.hpp"
#include "support/error.hpp"

namespace tilevit::compiler {

std::vector<TileMemoryStats> tile_memory_stats(const target::MachineDescription& m, const CompiledProgram& p,
                                               bool profiling) {
  std::vector<TilePlacementInput> inputs(m.tiles);
  std::vector<std::vector<std::uint32_t>> addresses(m.tiles);
  for (const Allocation& a : p.allocations) {
    if (a.tile >= m.tiles)
      throw Error("allocation \"" + a.request.label + "\" on tile " + std::to_string(a.tile) + ", outside the machine's " +
                  std::to_string(m.tiles) + " tiles");
    inputs[a.tile].requests.push_back(a.request);
    addresses[a.tile].push_back(a.address);
  }
  std::vector<TileMemoryStats> stats(m.tiles);
  for (std::uint32_t t = 0; t < m.tiles; ++t) {
    inputs[t].tile = t;
    stats[t] = memory_stats(m, inputs[t], addresses[t], profiling);
  }
  return stats;
}

CompiledModel compile_model(const Graph& graph, const target::MachineDescription& machine, const CompileOptions& options) {
  const LoweringOptions lowering{options.exchange_stream_words, options.profiling, options.pins};
  Lowered lowered = lower(graph, machine, lowering);
  CompiledModel out{Executable{machine, graph.config, lowered.numerics, graph.tensors, std::move(lowered.program),
                               std::move(lowered.bindings), graph.stage},
                    lowered.plan,
                    {},
                    {}};
  CompiledProgram& p = out.executable.program;

  // Per-tile placement inputs; remember where each allocation went.
  std::vector<TilePlacementInput> inputs(machine.tiles);
  std::vector<std::uint32_t> index_in_tile(p.allocations.size());
  for (std::uint32_t t = 0; t < machine.tiles; ++t) inputs[t].tile = t;
  for (std::size_t i = 0; i < p.allocations.size(); ++i) {
    auto& in = inputs[p.allocations[i].tile];
    index_in_tile[i] = static_cast<std::uint32_t>(in.requests.size());
    in.requests.push_back(p.allocations[i].request);
  }
  for (const ElementConflict& c : lowered.conflicts_by_allocation)
    inputs[p.allocations[c.a].tile].conflicts.push_back(ElementConflict{index_in_tile[c.a], index_in_tile[c.b]});
  const std::vector<TilePlacement> placed = place_all(machine, inputs, options.profiling.enabled);
  for (std::size_t i = 0; i < p.allocations.size(); ++i)
    p.allocations[i].address = placed[p.allocations[i].tile].address[index_in_tile[i]];

  CompileStats& s = out.stats;
  s.largest_hole_min = UINT32_MAX;
  for (std::uint32_t t = 0; t < machine.tiles; ++t) {
    out.memory.push_back(placed[t].stats);
    if (!inputs[t].requests.empty()) {
      s.peak_tile_bytes = std::max(s.peak_tile_bytes, placed[t].stats.peak_live);
      s.largest_hole_min = std::min(s.largest_hole_min, placed[t].stats.largest_hole_at_peak);
    }
  }
  static_cast<ProgramSummary&>(s) = summarize_program(machine, p, graph.tensors);
  return out;
}

}  // namespace tilevit::compiler
