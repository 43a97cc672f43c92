#include "compiler/profiling.hpp"

#include <algorithm>
#include <set>
#include <string>

#include "compiler/program_walk.hpp"
#include "support/error.hpp"

namespace tilevit::compiler {

std::string_view to_string(Granularity g) {
  switch (g) {
    case Granularity::graph: return "graph";
    case Granularity::phase: return "phase";
    case Granularity::kernel: return "kernel";
  }
  return "?";
}

Granularity granularity_from_string(std::string_view name) {
  for (Granularity g : {Granularity::graph, Granularity::phase, Granularity::kernel})
    if (to_string(g) == name) return g;
  throw Error("unknown profile granularity \"" + std::string(name) + "\" (expected graph, phase or kernel)",
              kExitUsage);
}

std::vector<std::uint64_t> profile_records_per_tile(const CompiledProgram& p, std::uint32_t tiles,
                                                    const ProfilingOptions& options) {
  std::vector<std::uint64_t> records(tiles, 0);
  if (!options.enabled) return records;
  if (options.detail.granularity == Granularity::graph) {
    std::fill(records.begin(), records.end(), 1);
    return records;
  }
  const std::uint32_t detailed = std::min(options.detail.iterations_in_detail, p.loop_count);
  const bool kernel = options.detail.granularity == Granularity::kernel;
  for (std::uint32_t s = 0; s < p.steps.size(); ++s) {
    const Superstep& step = p.steps[s];
    const std::uint64_t times = in_loop(p, s) ? detailed : 1;
    if (times == 0) continue;
    std::vector<std::uint64_t> per_step(tiles, 0);
    std::vector<bool> computes(tiles, false);
    // Tiles out of range are skipped here: the verifier reports them, a count must not throw.
    for (const KernelCall& c : step.compute) {
      if (c.tile >= tiles) continue;
      if (kernel) ++per_step[c.tile];
      computes[c.tile] = true;
    }
    std::vector<bool> copies(tiles, false);  // a tile's local copies: one call after its kernels
    for (const LocalCopy& c : step.local_copies)
      if (c.tile < tiles) copies[c.tile] = true;
    for (std::uint32_t t = 0; t < tiles; ++t)
      per_step[t] += kernel ? (copies[t] ? 1 : 0) : (computes[t] || copies[t] ? 1 : 0);
    if (!step.exchange.empty()) {
      std::vector<std::set<std::uint32_t>> waves(tiles);  // waves each tile takes part in
      for (const Transfer& x : step.exchange) {
        if (x.source.tile < tiles) waves[x.source.tile].insert(x.wave);
        for (const Endpoint& d : x.destinations)
          if (d.tile < tiles) waves[d.tile].insert(x.wave);
      }
      for (std::uint32_t t = 0; t < tiles; ++t)
        per_step[t] += 1 + (kernel ? waves[t].size() : (waves[t].empty() ? 0 : 1));  // sync + exchange
    }
    for (std::uint32_t t = 0; t < tiles; ++t) records[t] += per_step[t] * times;
  }
  if (detailed < p.loop_count && p.loop_end > p.loop_begin)
    for (auto& r : records) ++r;  // the repeat-remainder record
  return records;
}

}  // namespace tilevit::compiler
