#include "profile/memory_over_time.hpp"

#include <algorithm>

#include "compiler/placement.hpp"

namespace tilevit::profile {

MemoryOverTime memory_over_time(const compiler::CompiledProgram& program, std::uint32_t tiles,
                                const std::function<std::uint32_t(std::uint32_t)>& label_of) {
  const auto& allocations = program.allocations;
  std::vector<bool> landing(allocations.size(), false);
  for (const auto& step : program.steps)
    for (const auto& x : step.exchange)
      for (const auto& d : x.destinations)
        if (d.allocation < landing.size()) landing[d.allocation] = true;
  auto purpose_of = [&](std::uint32_t i) {
    switch (allocations[i].request.kind) {
      case compiler::AllocationKind::parameter: return MemoryPurpose::weights;
      case compiler::AllocationKind::activation: return landing[i] ? MemoryPurpose::exchange : MemoryPurpose::activations;
      case compiler::AllocationKind::scratch: return MemoryPurpose::scratch;
      case compiler::AllocationKind::support: return MemoryPurpose::support;
    }
    return MemoryPurpose::support;
  };
  const std::uint32_t steps = static_cast<std::uint32_t>(program.steps.size());
  const std::uint32_t phases = 2 * steps;
  auto live_span = [&](std::uint32_t i) {  // [first, last] in phases, clamped to the program
    const auto& r = allocations[i].request;
    if (compiler::is_whole_program(r.kind) || phases == 0) return std::pair<std::uint32_t, std::uint32_t>{0, phases ? phases - 1 : 0};
    return std::pair<std::uint32_t, std::uint32_t>{std::min(r.first, phases - 1), std::min(r.last, phases - 1)};
  };
  // Live bytes by purpose per phase: difference arrays, for the chip and for each tile's total.
  std::vector<std::array<std::int64_t, kMemoryPurposes>> chip_diff(phases + 1);
  std::vector<std::vector<std::uint32_t>> by_tile(tiles);
  for (std::uint32_t i = 0; i < allocations.size(); ++i) {
    const auto [first, last] = live_span(i);
    const std::int64_t bytes = allocations[i].request.bytes;
    const auto p = static_cast<std::size_t>(purpose_of(i));
    chip_diff[first][p] += bytes, chip_diff[last + 1][p] -= bytes;
    if (allocations[i].tile < tiles) by_tile[allocations[i].tile].push_back(i);
  }
  MemoryOverTime m;
  for (const auto& step : program.steps) m.step_labels.push_back(step.label);
  std::int64_t best = -1;
  std::vector<std::int64_t> tile_diff(phases + 1);
  for (std::uint32_t t = 0; t < tiles; ++t) {
    std::fill(tile_diff.begin(), tile_diff.end(), 0);
    for (const std::uint32_t i : by_tile[t]) {
      const auto [first, last] = live_span(i);
      tile_diff[first] += allocations[i].request.bytes, tile_diff[last + 1] -= allocations[i].request.bytes;
    }
    std::int64_t live = 0;
    for (std::uint32_t ph = 0; ph < phases; ++ph)
      if ((live += tile_diff[ph]) > best) best = live, m.fullest_tile = t, m.peak_phase = ph;
  }
  std::vector<std::array<std::int64_t, kMemoryPurposes>> fullest_diff(phases + 1);
  const std::vector<std::uint32_t> on_fullest = tiles ? by_tile[m.fullest_tile] : std::vector<std::uint32_t>{};
  for (const std::uint32_t i : on_fullest) {
    const auto [first, last] = live_span(i);
    const auto p = static_cast<std::size_t>(purpose_of(i));
    fullest_diff[first][p] += allocations[i].request.bytes, fullest_diff[last + 1][p] -= allocations[i].request.bytes;
  }
  std::array<std::int64_t, kMemoryPurposes> chip_live{}, tile_live{};
  std::array<std::uint64_t, kMemoryPurposes> chip_phase{};
  std::array<std::uint32_t, kMemoryPurposes> tile_phase{};
  auto total = [](const auto& a) { std::uint64_t s = 0; for (const auto v : a) s += std::uint64_t(v); return s; };
  for (std::uint32_t ph = 0; ph < phases; ++ph) {
    for (std::size_t p = 0; p < kMemoryPurposes; ++p) {
      chip_phase[p] = std::uint64_t(chip_live[p] += chip_diff[ph][p]);
      tile_phase[p] = std::uint32_t(tile_live[p] += fullest_diff[ph][p]);
    }
    if (ph % 2 == 0) {  // the step's compute phase
      m.fullest.push_back(tile_phase), m.chip.push_back(chip_phase);
      continue;
    }
    if (total(tile_phase) > total(m.fullest.back())) m.fullest.back() = tile_phase;
    if (total(chip_phase) > total(m.chip.back())) m.chip.back() = chip_phase;
  }
  m.peak_step = m.peak_phase / 2;
  m.peak_bytes = std::uint32_t(std::max<std::int64_t>(best, 0));
  for (const std::uint32_t i : on_fullest) {
    const auto [first, last] = live_span(i);
    if (first <= m.peak_phase && m.peak_phase <= last)
      m.largest.push_back({label_of(i), purpose_of(i), allocations[i].request.bytes, allocations[i].address});
  }
  std::stable_sort(m.largest.begin(), m.largest.end(), [](const MemoryAtPeak& a, const MemoryAtPeak& b) { return a.bytes > b.bytes; });
  if (m.largest.size() > 10) m.largest.resize(10);
  return m;
}

}  // namespace tilevit::profile
