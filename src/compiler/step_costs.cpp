#include "compiler/step_costs.hpp"

#include <algorithm>

#include "compiler/exchange_schedule.hpp"
#include "compiler/program_walk.hpp"

namespace tilevit::compiler {

std::uint64_t estimate_call_cycles(const target::MachineDescription& m, const KernelCall& c) {
  return kernel_info(c.kind).cycles(m, c.shape());
}

std::uint64_t estimate_call_uncalibrated_cycles(const target::MachineDescription& m, const KernelCall& c) {
  return kernel_info(c.kind).uncalibrated_cycles(m, c.shape());
}

std::vector<std::uint64_t> tile_local_copy_bytes(const target::MachineDescription& m, const Superstep& s) {
  std::vector<std::uint64_t> bytes(m.tiles, 0);
  for (const LocalCopy& c : s.local_copies) bytes.at(c.tile) += c.bytes;
  return bytes;
}

std::vector<std::uint64_t> tile_compute_cycles(const target::MachineDescription& m, const Superstep& s) {
  // Measured kernel cycles include their launch (docs/COST_MODEL.md): no launch term here.
  std::vector<std::uint64_t> busy(m.tiles, 0);
  for (const KernelCall& c : s.compute) busy.at(c.tile) += estimate_call_cycles(m, c);
  if (!s.local_copies.empty()) {
    const auto copied = tile_local_copy_bytes(m, s);
    for (std::uint32_t t = 0; t < m.tiles; ++t) busy[t] += local_copy_cycles(m, copied[t]);
  }
  return busy;
}

StepCost estimate_step(const target::MachineDescription& m, const Superstep& s) {
  StepCost cost;
  const auto busy = tile_compute_cycles(m, s);
  if (!busy.empty()) {
    const auto slowest = static_cast<std::uint32_t>(std::max_element(busy.begin(), busy.end()) - busy.begin());
    cost.compute = busy[slowest];
    if (cost.compute > 0) cost.entry_skew = m.phase_entry_skew_cycles;
    for (const KernelCall& c : s.compute)
      if (c.tile == slowest) cost.compute_uncalibrated += estimate_call_uncalibrated_cycles(m, c);
    // The local copy's 288 + 8 B/cycle is a quoted rule, not a measured call.
    std::uint64_t copied = 0;
    for (const LocalCopy& c : s.local_copies)
      if (c.tile == slowest) copied += c.bytes;
    cost.compute_uncalibrated += local_copy_cycles(m, copied);
  }
  if (!s.exchange.empty()) {
    // The stored schedule: the phase lasts until its last word lands.
    cost.exchange = s.exchange_cycles;
    cost.sync = m.phase_overhead_cycles;
  }
  return cost;
}

std::vector<StepCost> step_costs(const target::MachineDescription& m, const CompiledProgram& p) {
  std::vector<StepCost> costs;
  costs.reserve(p.steps.size());
  for (const Superstep& s : p.steps) costs.push_back(estimate_step(m, s));
  return costs;
}

double ProgramSummary::calibrated_compute_share() const {
  if (estimated_compute_cycles == 0) return 1.0;
  return 1.0 - static_cast<double>(estimated_uncalibrated_cycles) / static_cast<double>(estimated_compute_cycles);
}

ProgramSummary summarize_program(const target::MachineDescription& m, const CompiledProgram& p,
                                 const std::vector<Tensor>& tensors) {
  ProgramSummary s;
  s.exchange_table_bytes.assign(m.tiles, 0);
  for (const Allocation& a : p.allocations) {
    if (a.request.kind == AllocationKind::parameter) s.weight_bytes += a.request.bytes;
    if (a.request.purpose == AllocationPurpose::exchange_tables && a.tile < m.tiles) {
      s.exchange_table_bytes[a.tile] += a.request.bytes;
      s.exchange_table_bytes_max = std::max(s.exchange_table_bytes_max, s.exchange_table_bytes[a.tile]);
    }
  }
  for (const Tensor& t : tensors)
    if (t.kind == TensorKind::parameter) s.unique_weight_bytes += t.bytes();
    else if (t.kind == TensorKind::sequence) s.unique_weight_bytes += t.bytes() * p.loop_count;
  s.supersteps = static_cast<std::uint32_t>(p.steps.size());
  std::vector<bool> used(m.tiles, false);
  for (const Superstep& step : p.steps) {
    s.kernel_calls += step.compute.size();
    s.transfers += step.exchange.size();
    for (const KernelCall& k : step.compute)
      if (k.tile < m.tiles) used[k.tile] = true;
  }
  s.tiles_used = static_cast<std::uint32_t>(std::count(used.begin(), used.end(), true));
  const std::vector<StepCost> costs = step_costs(m, p);
  walk_program(p, [&](std::uint32_t step, std::uint32_t) {
    s.estimated_compute_cycles += costs[step].compute;
    s.estimated_uncalibrated_cycles += costs[step].compute_uncalibrated;
    s.estimated_exchange_cycles += costs[step].exchange;
    s.estimated_sync_cycles += costs[step].sync + costs[step].entry_skew;
    ++s.executed_supersteps;
    for (const Transfer& t : p.steps[step].exchange) s.exchange_bytes += std::uint64_t(t.bytes) * t.destinations.size();
  });
  s.estimated_cycles = s.estimated_compute_cycles + s.estimated_exchange_cycles + s.estimated_sync_cycles;
  return s;
}

}  // namespace tilevit::compiler
