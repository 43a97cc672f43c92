#include "compiler/compile.hpp"

#include <algorithm>

#include "compiler/distribution.hpp"
#include "compiler/exchange_schedule.hpp"
#include "compiler/exchange_waves.hpp"
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

// What the passes work on: the lowered program, then its placement and figures.
struct PassState {
  const Graph& graph;
  const target::MachineDescription& machine;
  const CompileOptions& options;
  Lowered lowered;
  std::vector<TileMemoryStats> memory;
  CompileStats stats;
};

// Places every tile's allocations (throws DoesNotFit when a tile is over its SRAM).
void place(PassState& s) {
  CompiledProgram& p = s.lowered.program;
  std::vector<TilePlacementInput> inputs(s.machine.tiles);
  std::vector<std::uint32_t> index_in_tile(p.allocations.size());
  for (std::uint32_t t = 0; t < s.machine.tiles; ++t) inputs[t].tile = t;
  for (std::size_t i = 0; i < p.allocations.size(); ++i) {
    auto& in = inputs[p.allocations[i].tile];
    index_in_tile[i] = static_cast<std::uint32_t>(in.requests.size());
    in.requests.push_back(p.allocations[i].request);
  }
  for (const ElementConflict& c : s.lowered.conflicts_by_allocation)
    inputs[p.allocations[c.a].tile].conflicts.push_back(ElementConflict{index_in_tile[c.a], index_in_tile[c.b]});
  const std::vector<TilePlacement> placed = place_all(s.machine, inputs, s.options.profiling.enabled);
  for (std::size_t i = 0; i < p.allocations.size(); ++i)
    p.allocations[i].address = placed[p.allocations[i].tile].address[index_in_tile[i]];
  s.stats.largest_hole_min = UINT32_MAX;
  for (std::uint32_t t = 0; t < s.machine.tiles; ++t) {
    s.memory.push_back(placed[t].stats);
    if (!inputs[t].requests.empty()) {
      s.stats.peak_tile_bytes = std::max(s.stats.peak_tile_bytes, placed[t].stats.peak_live);
      s.stats.largest_hole_min = std::min(s.stats.largest_hole_min, placed[t].stats.largest_hole_at_peak);
    }
  }
}

void summarise(PassState& s) {
  static_cast<ProgramSummary&>(s.stats) = summarize_program(s.machine, s.lowered.program, s.graph.tensors);
  s.stats.gemm_tile_bytes_cap = s.options.gemm_tile_bytes_cap;
}

struct Pass {
  PassInfo info;
  void (*run)(PassState&);
};

// The compile pipeline, in order: the one place that says what runs when.
constexpr Pass kPasses[] = {
    {{"lower-ops", "every op to supersteps: kernel calls, transfers, allocations with their uses, host bindings"},
     [](PassState& s) { s.lowered = lower(s.graph, s.machine, s.options); }},
    {{"close-lifetimes", "allocations used across the loop live through it; unused ones in their step"},
     [](PassState& s) { close_lifetimes(s.lowered); }},
    {{"split-local-copies", "data a tile already holds is copied by its workers, not looped back"},
     [](PassState& s) { split_local_copies(s.lowered.program); }},
    {{"schedule-waves", "each exchange phase in endpoint-balanced waves of at most W words per tile"},
     [](PassState& s) {
       schedule_exchange_waves(s.lowered.program, s.machine.tiles, s.options.plan.exchange_stream_words,
                               s.machine.max_transfer_words);
     }},
    {{"schedule-exchange", "every transfer's send and landing cycle, and the receivers' selects"},
     [](PassState& s) { schedule_exchange(s.lowered.program, s.machine); }},
    {{"allocate-support", "kernel code, exchange tables and profiling buffers on every tile"},
     [](PassState& s) { allocate_support(s.lowered.program, s.machine.tiles); }},
    {{"place", "an address for every allocation on its tile (fails when a tile is over its SRAM)"}, place},
    {{"summarise", "the call's figures: cycles by step cost, exchange bytes, weights, tiles used"}, summarise},
};

// One run of the pipeline under `options` (its cap included).
CompiledModel run_passes(PassState& s, const PassObserver& after_pass) {
  for (const Pass& pass : kPasses) {
    pass.run(s);
    if (after_pass) after_pass(pass.info, s.lowered.program);
  }
  return CompiledModel{Executable{s.machine, s.graph.config, s.lowered.numerics, s.graph.tensors,
                                  std::move(s.lowered.program), std::move(s.lowered.bindings), s.graph.stage},
                       std::move(s.lowered.plan), std::move(s.memory), s.stats};
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

std::span<const PassInfo> compile_passes() {
  static const std::vector<PassInfo> infos = [] {
    std::vector<PassInfo> v;
    for (const Pass& p : kPasses) v.push_back(p.info);
    return v;
  }();
  return infos;
}

CompiledModel compile_model(const Graph& graph, const target::MachineDescription& machine, const CompileOptions& options,
                            const PassObserver& after_pass) {
  constexpr int kCapRounds = 4;
  CompileOptions attempt = options;
  std::uint64_t best_short = UINT64_MAX;
  int rounds_without_progress = 0;
  for (int round = 0;; ++round) {
    PassState state{graph, machine, attempt, {}, {}, {}};
    try {
      return run_passes(state, after_pass);
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
          tighter_cap(state.lowered.largest_gemm_tile_bytes, attempt.gemm_tile_bytes_cap, short_bytes, rounds_without_progress);
      if (cap == 0) throw;
      attempt.gemm_tile_bytes_cap = cap;
    }
  }
}

}  // namespace tilevit::compiler
