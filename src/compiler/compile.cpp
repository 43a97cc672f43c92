#include "compiler/compile.hpp"

#include <algorithm>

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

namespace {

// The placed program of one lowering (throws DoesNotFit when a tile is over its SRAM).
CompiledModel compile_lowered(const Graph& graph, const target::MachineDescription& machine,
                              const CompileOptions& options, Lowered lowered) {
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
  s.gemm_tile_bytes_cap = options.gemm_tile_bytes_cap;
  return out;
}

// How far the worst tile is over: bytes needed beyond those available (at least 1).
std::uint64_t shortfall(const TileOverflow& o) { return std::max<std::uint64_t>(o.needed - std::min(o.needed, o.available), 1); }

// The next cap: below the largest GEMM's bytes (or the current cap) by the shortfall, and
// by twice as much for every earlier round that did not shrink it (a small step may
// change no grid); 0 when that leaves nothing.
std::uint64_t tighter_cap(std::uint64_t largest, std::uint64_t current, std::uint64_t short_bytes,
                          int rounds_without_progress) {
  if (current != 0) largest = std::min(largest, current);
  const std::uint64_t step = short_bytes << std::min(rounds_without_progress, 20);
  return largest > step ? largest - step : 0;
}

}  // namespace

CompiledModel compile_model(const Graph& graph, const target::MachineDescription& machine, const CompileOptions& options) {
  constexpr int kCapRounds = 4;
  CompileOptions attempt = options;
  std::uint64_t best_short = UINT64_MAX;
  int rounds_without_progress = 0;
  for (int round = 0;; ++round) {
    Lowered lowered = lower(graph, machine, {attempt.exchange_stream_words, attempt.profiling, attempt.pins,
                                             attempt.gemm_tile_bytes_cap});
    const std::uint64_t largest_gemm = lowered.largest_gemm_tile_bytes;
    try {
      return compile_lowered(graph, machine, attempt, std::move(lowered));
    } catch (const DoesNotFit& e) {
      if (options.gemm_tile_bytes_cap != 0 || round == kCapRounds) throw;
      const std::uint64_t short_bytes = shortfall(e.overflow());
      if (short_bytes < best_short) {
        best_short = short_bytes;
        rounds_without_progress = 0;
      } else {
        ++rounds_without_progress;
      }
      const std::uint64_t cap =
          tighter_cap(largest_gemm, attempt.gemm_tile_bytes_cap, short_bytes, rounds_without_progress);
      if (cap == 0) throw;
      attempt.gemm_tile_bytes_cap = cap;
    }
  }
}

}  // namespace tilevit::compiler
