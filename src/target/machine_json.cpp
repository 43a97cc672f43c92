// Derived figures of a MachineDescription and its JSON form (`tilevit machine --json`).
#include <nlohmann/json.hpp>

#include "target/cost_keys.hpp"
#include "target/machine.hpp"
#include "target/system.hpp"

namespace tilevit::target {

using detail::kCostNumbers;
using detail::kGemms;

std::uint32_t MachineDescription::free_bytes_per_tile(bool profiling) const {
  std::uint32_t free = sram_size;
  for (const auto& v : reserved)
    if (v.when == ReservedWhen::always || profiling) free -= v.size;
  return free;
}

const MemoryRegion* MachineDescription::region_at(std::uint32_t address) const {
  for (const auto& g : regions)
    if (address >= g.start && address < g.end) return &g;
  return nullptr;
}

double peak_flops(const MachineDescription& m, std::uint32_t flop_per_cycle) {
  return static_cast<double>(m.tiles) * flop_per_cycle * static_cast<double>(m.clock_hz);
}

nlohmann::json to_json(const MachineDescription& m) {
  using nlohmann::json;
  json regions = json::array(), reserved = json::array();
  for (const auto& g : m.regions)
    regions.push_back({{"name", g.name},
                       {"start", g.start},
                       {"end", g.end},
                       {"element_bytes", g.element_bytes},
                       {"unit_elements", g.unit_elements},
                       {"load_bytes_per_cycle", g.load_bytes_per_cycle},
                       {"code", g.code}});
  for (const auto& v : m.reserved)
    reserved.push_back({{"name", v.name},
                        {"kind", to_string(v.kind)},
                        {"start", v.start},
                        {"size", v.size},
                        {"when", to_string(v.when)}});
  const CostCoefficients& c = m.costs;
  json costs = {{"vector_elements", c.vector_elements},
                {"worker_grain", c.worker_grain},
                {"softmax_split_segments", c.softmax_split_segments}};
  if (!c.generation.empty()) costs["generation"] = c.generation;
  for (const auto& g : kGemms) {
    const GemmCoefficients& gemm = c.*g.member;
    const std::string p(g.prefix);
    costs[p + "panel_inner"] = gemm.panel_inner;
    costs[p + "panel_columns"] = gemm.panel_columns;
    costs[p + "base"] = gemm.base;
    costs[p + "per_row"] = gemm.per_row;
    costs[p + "per_panel"] = gemm.per_panel;
  }
  for (const auto& k : kCostNumbers) costs[std::string(k.name)] = c.*k.member;
  json out = {
      {"name", m.name},
      {"tiles", m.tiles},
      {"rows", m.rows},
      {"columns", m.columns},
      {"clock_hz", m.clock_hz},
      {"launch_cycles", m.launch_cycles},
      {"workers", m.workers},
      {"sram_base", m.sram_base},
      {"sram_size", m.sram_size},
      {"vector_alignment", m.vector_alignment},
      {"matrix_alignment", m.matrix_alignment},
      {"regions", regions},
      {"reserved", reserved},
      {"exchange", {{"send_bytes_per_cycle", m.exchange_send_bytes_per_cycle},
                    {"receive_bytes_per_cycle", m.exchange_receive_bytes_per_cycle},
                    {"latency_cycles", m.latency_cycles},
                    {"latency_cycles_per_row", m.latency_cycles_per_row},
                    {"max_transfer_words", m.max_transfer_words},
                    {"source_switch_cycles", m.source_switch_cycles},
                    {"pointer_switch_cycles", m.pointer_switch_cycles},
                    {"section_join_cycles", m.section_join_cycles},
                    {"phase_overhead_cycles", m.phase_overhead_cycles},
                    {"phase_entry_skew_cycles", m.phase_entry_skew_cycles}}},
      {"matrix", {{"flop_per_cycle_fp32", m.flop_per_cycle_fp32},
                  {"flop_per_cycle_fp16", m.flop_per_cycle_fp16},
                  {"flop_per_cycle_fp8", m.flop_per_cycle_fp8}}},
      {"costs", costs},
      {"derived", {{"total_sram_bytes", static_cast<std::uint64_t>(m.tiles) * m.sram_size},
                   {"free_bytes_per_tile", m.free_bytes_per_tile(false)},
                   {"free_bytes_per_tile_profiling", m.free_bytes_per_tile(true)},
                   {"peak_flops_fp32", peak_flops(m, m.flop_per_cycle_fp32)},
                   {"peak_flops_fp16", peak_flops(m, m.flop_per_cycle_fp16)},
                   {"peak_flops_fp8", peak_flops(m, m.flop_per_cycle_fp8)}}},
  };
  if (m.system.chips > 1) out["system"] = system_json(m.system);  // one-chip JSON keeps its form
  return out;
}

}  // namespace tilevit::target
