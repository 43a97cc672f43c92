#include "compiler/calibration_coverage.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <tuple>

#include "compiler/exchange_schedule.hpp"
#include "compiler/program_walk.hpp"
#include "compiler/step_costs.hpp"
#include "support/digits.hpp"
#include "target/kernel_costs.hpp"

namespace tilevit::compiler {
// The slowest tile's compute of one step, by kind, and its local copies: the tile
// estimate_step charges (the first of the slowest), so the sums equal the step cost table's.
StepCoverage slowest_tile_coverage(const target::MachineDescription& m, const Superstep& s) {
  StepCoverage out;
  const auto busy = tile_compute_cycles(m, s);
  if (busy.empty()) return out;
  const auto slowest = static_cast<std::uint32_t>(std::max_element(busy.begin(), busy.end()) - busy.begin());
  for (const KernelCall& c : s.compute) {
    if (c.tile != slowest) continue;
    KindCoverage& k = out.kinds[static_cast<std::size_t>(c.kind)];
    k.cycles += estimate_call_cycles(m, c);
    k.uncalibrated_cycles += estimate_call_uncalibrated_cycles(m, c);
  }
  std::uint64_t copied = 0;
  for (const LocalCopy& c : s.local_copies)
    if (c.tile == slowest) copied += c.bytes;
  out.local_copy_cycles = local_copy_cycles(m, copied);
  return out;
}

double CalibrationCoverage::calibrated_share() const {
  if (compute_cycles == 0) return 1.0;
  return 1.0 - static_cast<double>(uncalibrated_cycles) / static_cast<double>(compute_cycles);
}

CalibrationCoverage calibration_coverage(const target::MachineDescription& m, const CompiledProgram& p) {
  std::vector<StepCoverage> per_step;
  per_step.reserve(p.steps.size());
  for (const Superstep& s : p.steps) per_step.push_back(slowest_tile_coverage(m, s));
  std::array<KindCoverage, kKernelKinds> total{};
  CalibrationCoverage out;
  walk_program(p, [&](std::uint32_t step, std::uint32_t) {
    for (std::size_t k = 0; k < kKernelKinds; ++k) {
      total[k].cycles += per_step[step].kinds[k].cycles;
      total[k].uncalibrated_cycles += per_step[step].kinds[k].uncalibrated_cycles;
    }
    out.local_copy_cycles += per_step[step].local_copy_cycles;
  });
  // A local copy's 288 + 8 B/cycle is a quoted rule, not a measured call: uncalibrated.
  out.compute_cycles = out.uncalibrated_cycles = out.local_copy_cycles;
  for (std::size_t k = 0; k < kKernelKinds; ++k) {
    total[k].kind = static_cast<KernelKind>(k);
    out.compute_cycles += total[k].cycles;
    out.uncalibrated_cycles += total[k].uncalibrated_cycles;
    if (total[k].cycles > 0) out.kinds.push_back(total[k]);
  }
  return out;
}

std::string coverage_text(const CalibrationCoverage& c) {
  std::string parts;
  for (const KindCoverage& k : c.kinds)
    if (k.uncalibrated_cycles > 0)
      parts += (parts.empty() ? "" : ", ") + std::string(kernel_name(k.kind)) + " " + with_commas(k.uncalibrated_cycles);
  if (c.local_copy_cycles > 0)
    parts += (parts.empty() ? "" : ", ") + std::string("local copies ") + with_commas(c.local_copy_cycles);
  return "kernel cycles: " + percent_text(c.compute_cycles - c.uncalibrated_cycles, c.compute_cycles) +
         " calibrated of " + with_commas(c.compute_cycles) + (parts.empty() ? "" : " (uncalibrated: " + parts + ")") +
         "; each step's slowest tile, as the modelled cycles (profile query: compute tile-cycles of all tiles); "
         "exchange and sync cycles come from machine rules, not counted here";
}

std::optional<std::uint64_t> matrix_product_cycles(const target::MachineDescription& m, const KernelCall& call) {
  const KernelShape s = call.shape();
  using target::Precision;
  switch (call.kind) {
    case KernelKind::gemm_fp8:
    case KernelKind::gemm_fp16: return estimate_call_cycles(m, call);
    // The attention kinds' matrix products as kernel_table.cpp composes them.
    case KernelKind::attention_scores:
    case KernelKind::attention_scores_fp8:
      return target::gemm_cycles(m, call.kind == KernelKind::attention_scores ? Precision::fp16 : Precision::fp8,
                                 s[Dim::queries], s[Dim::head_dim], s[Dim::keys]);
    case KernelKind::attention_values:
    case KernelKind::attention_values_fp8:
      return target::gemm_cycles(m, call.kind == KernelKind::attention_values ? Precision::fp16 : Precision::fp8,
                                 s[Dim::queries], s[Dim::keys], s[Dim::head_dim]);
    default: return std::nullopt;
  }
}

std::vector<KernelMaximum> kernel_maxima(const target::MachineDescription& m, const CompiledProgram& p) {
  std::map<std::tuple<std::string, KernelKind>, KernelMaximum> rows;
  for (std::uint32_t i = 0; i < p.steps.size(); ++i)
    for (const KernelCall& c : p.steps[i].compute) {
      const std::string& op = p.op_names.at(c.op);
      KernelMaximum& r = rows[{op, c.kind}];
      r.operation = op;
      r.kind = c.kind;
      r.in_loop = in_loop(p, i);
      ++r.calls;
      const std::uint64_t cycles = estimate_call_cycles(m, c);
      if (r.calls > 1 && cycles <= r.max_cycles) continue;  // the first of the longest calls
      r.max_cycles = cycles;
      r.uncalibrated_cycles = estimate_call_uncalibrated_cycles(m, c);
      r.shape = dims_text(c.kind, c.dims);
      r.matrix_cycles = matrix_product_cycles(m, c);
    }
  std::vector<KernelMaximum> out;
  out.reserve(rows.size());
  for (auto& [key, r] : rows) out.push_back(std::move(r));
  return out;
}

}  // namespace tilevit::compiler
