#include "compiler/compile.hpp"

#include <algorithm>
#include <map>

#include "compiler/distribution.hpp"
#include "support/error.hpp"
#include "target/kernel_costs.hpp"

namespace tilevit::compiler {

std::uint64_t estimate_call_cycles(const target::MachineDescription& m, const KernelCall& c) {
  using target::Precision;
  const auto& d = c.dims;
  switch (c.kind) {
    case KernelKind::gemm_fp8: return target::gemm_cycles(m, Precision::fp8, d[0], d[1], d[2]);
    case KernelKind::gemm_fp16: return target::gemm_cycles(m, Precision::fp16, d[0], d[1], d[2]);
    case KernelKind::reduce_add: return target::reduce_add_cycles(m, d[0], d[1]);
    case KernelKind::bias_add: return target::add_cycles(m, std::uint64_t(d[0]) * d[1]);
    case KernelKind::add: return target::add_cycles(m, d[0]);
    case KernelKind::layernorm: return target::layernorm_cycles(m, d[0], d[1]);
    case KernelKind::gelu: return target::gelu_cycles(m, d[0]);
    case KernelKind::cast_fp8: return target::cast_fp16_fp8_cycles(m, d[0]);
    case KernelKind::attention_scores:
      return target::gemm_cycles(m, Precision::fp16, d[0], d[2], d[1]) + target::add_cycles(m, std::uint64_t(d[0]) * d[1]);
    case KernelKind::attention_values:
      return target::softmax_cycles(m, d[0], d[1]) + target::gemm_cycles(m, Precision::fp16, d[0], d[1], d[2]);
    case KernelKind::attention_combine:
      return target::reduce_add_cycles(m, std::uint64_t(d[0]) * (d[1] + 1), d[2]) +
             target::add_cycles(m, std::uint64_t(d[0]) * d[1]);
  }
  return 0;
}

std::vector<std::uint64_t> tile_compute_cycles(const target::MachineDescription& m, const Superstep& s) {
  // Measured kernel cycles include their launch (docs/COST_MODEL.md): no launch term here.
  std::vector<std::uint64_t> busy(m.tiles, 0);
  for (const KernelCall& c : s.compute) busy.at(c.tile) += estimate_call_cycles(m, c);
  return busy;
}

std::vector<std::vector<std::uint64_t>> tile_wave_cycles(const target::MachineDescription& m, const Superstep& s) {
  std::uint32_t waves = 0;
  for (const Transfer& t : s.exchange) waves = std::max(waves, t.wave + 1);
  std::vector<std::vector<std::uint64_t>> sent(waves, std::vector<std::uint64_t>(m.tiles, 0)),
      received(waves, std::vector<std::uint64_t>(m.tiles, 0));
  for (const Transfer& t : s.exchange) {
    sent[t.wave].at(t.source.tile) += t.bytes;
    for (const Endpoint& d : t.destinations) received[t.wave].at(d.tile) += t.bytes;
  }
  for (std::uint32_t w = 0; w < waves; ++w)
    for (std::uint32_t t = 0; t < m.tiles; ++t)
      sent[w][t] = std::max((sent[w][t] + m.exchange_send_bytes_per_cycle - 1) / m.exchange_send_bytes_per_cycle,
                            (received[w][t] + m.exchange_receive_bytes_per_cycle - 1) / m.exchange_receive_bytes_per_cycle);
  return sent;
}

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

StepCost estimate_step(const target::MachineDescription& m, const Superstep& s) {
  StepCost cost;
  const auto busy = tile_compute_cycles(m, s);
  cost.compute = busy.empty() ? 0 : *std::max_element(busy.begin(), busy.end());
  if (!s.exchange.empty()) {
    // Waves run one after another; a wave lasts as long as its busiest endpoint.
    for (const auto& wave : tile_wave_cycles(m, s)) cost.exchange += *std::max_element(wave.begin(), wave.end());
    cost.sync = m.sync_cycles;
  }
  return cost;
}

CompiledModel compile_model(const Graph& graph, const target::MachineDescription& machine, const CompileOptions& options) {
  const LoweringOptions lowering{options.exchange_stream_words, options.profiling, options.pins};
  CompiledModel out{graph, lower(graph, machine, lowering), {}, {}};
  CompiledProgram& p = out.lowered.program;

  // Per-tile placement inputs; remember where each allocation went.
  std::vector<TilePlacementInput> inputs(machine.tiles);
  std::vector<std::uint32_t> index_in_tile(p.allocations.size());
  for (std::uint32_t t = 0; t < machine.tiles; ++t) inputs[t].tile = t;
  for (std::size_t i = 0; i < p.allocations.size(); ++i) {
    auto& in = inputs[p.allocations[i].tile];
    index_in_tile[i] = static_cast<std::uint32_t>(in.requests.size());
    in.requests.push_back(p.allocations[i].request);
  }
  for (const ElementConflict& c : out.lowered.conflicts_by_allocation)
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
  std::vector<bool> used(machine.tiles, false);
  for (const Allocation& a : p.allocations) {
    if (a.request.kind == AllocationKind::parameter) s.weight_bytes += a.request.bytes;
    if (a.request.label == "support.exchange_tables")
      s.exchange_table_bytes_max = std::max(s.exchange_table_bytes_max, a.request.bytes);
  }
  for (const Tensor& t : graph.tensors)
    if (t.kind == TensorKind::parameter) s.unique_weight_bytes += t.bytes();
    else if (t.kind == TensorKind::sequence) s.unique_weight_bytes += t.bytes() * graph.loop_count;
  s.supersteps = static_cast<std::uint32_t>(p.steps.size());
  for (std::uint32_t i = 0; i < p.steps.size(); ++i) {
    const Superstep& step = p.steps[i];
    const std::uint64_t repeat = (i >= p.loop_begin && i < p.loop_end) ? p.loop_count : 1;
    const StepCost c = estimate_step(machine, step);
    s.estimated_compute_cycles += repeat * c.compute;
    s.estimated_exchange_cycles += repeat * c.exchange;
    s.estimated_sync_cycles += repeat * c.sync;
    s.executed_supersteps += static_cast<std::uint32_t>(repeat);
    s.kernel_calls += step.compute.size();
    s.transfers += step.exchange.size();
    for (const KernelCall& k : step.compute) used[k.tile] = true;
    for (const Transfer& t : step.exchange) s.exchange_bytes += repeat * t.bytes * t.destinations.size();
  }
  s.estimated_cycles = s.estimated_compute_cycles + s.estimated_exchange_cycles + s.estimated_sync_cycles;
  s.tiles_used = static_cast<std::uint32_t>(std::count(used.begin(), used.end(), true));
  return out;
}

}  // namespace tilevit::compiler
