#include "job/compile_job.hpp"

#include <algorithm>

#include "compiler/calibration_coverage.hpp"
#include "compiler/exchange_bounds.hpp"
#include "compiler/kernel_table.hpp"
#include "compiler/levers.hpp"
#include "compiler/plan_search.hpp"
#include "compiler/program_walk.hpp"
#include "compiler/step_costs.hpp"
#include "job/capacity.hpp"
#include "support/error.hpp"
#include "support/threads.hpp"

namespace tilevit::job {

void with_plan_file_errors(const std::string& plan_file, const std::function<void()>& work) {
  try {
    work();
  } catch (const compiler::RefusedPin& e) {
    // A pin the compiler refuses is a fault of the file that pinned it: named, a bad input.
    if (plan_file.empty()) throw;
    throw Error(plan_file + ": " + e.why(), kExitBadInput);
  }
}

PlannedCompile compile_planned(const compiler::Graph& graph, const target::MachineDescription& machine,
                               const compiler::CompileOptions& options, const std::string& plan_source,
                               const PlanSearchSettings& search) {
  const compiler::PlanTarget target = compiler::plan_target(graph.config, machine);
  compiler::PlanSearchOptions so;
  so.steps = search.steps;
  so.max_seconds = search.seconds;
  so.threads = static_cast<std::uint32_t>(std::max(1, host_threads()));
  so.progress = search.progress;
  std::optional<compiler::PlanSearchResult> found;
  try {
    with_plan_file_errors(plan_source, [&] {
      if (!plan_source.empty()) compiler::check_plan_pins_every_op(graph, options.plan);  // a plan fixes every grid
      found.emplace(compiler::search_plan(graph, machine, options, so));
    });
  } catch (const compiler::DoesNotFit& e) {
    if (plan_source.empty()) throw_does_not_fit(graph, machine, options, e, search.progress);
    throw compiler::DoesNotFit(plan_source + ": the model does not fit with this plan: " + compiler::describe(e.overflow()),
                               e.overflow());
  }
  PlannedCompile out{std::move(found->compiled), compiler::PlanFile{target, found->plan}, std::nullopt};
  if (so.steps > 0 || search.report) out.report = compiler::plan_search_report_json(found->report);
  return out;
}

system::CompiledPipeline compile_pipeline_planned(const model::ViTConfig& config, const model::NumericsConfig& numerics,
                                                  const target::MachineDescription& machine,
                                                  const compiler::CompileOptions& options,
                                                  const system::StageSearchOptions& search,
                                                  const std::vector<system::StagePlan>& pinned,
                                                  const std::string& plan_source) {
  std::optional<system::CompiledPipeline> compiled;
  with_plan_file_errors(plan_source, [&] {
    compiled.emplace(system::compile_pipeline(config, numerics, machine, options, search, pinned));
  });
  return std::move(*compiled);
}

nlohmann::json steps_json(const target::MachineDescription& machine, const compiler::CompiledProgram& p) {
  nlohmann::json rows = nlohmann::json::array();
  const auto costs = compiler::step_costs(machine, p);
  for (std::size_t i = 0; i < p.steps.size(); ++i) {
    const auto& c = costs[i];
    const auto& step = p.steps[i];
    const compiler::ExchangeBounds bounds = compiler::exchange_bounds(machine, step);
    const compiler::StepCoverage slowest = compiler::slowest_tile_coverage(machine, step);
    nlohmann::json kinds = nlohmann::json::object();
    for (std::size_t k = 0; k < compiler::kKernelKinds; ++k)
      if (slowest.kinds[k].cycles > 0)
        kinds[std::string(compiler::kernel_name(static_cast<compiler::KernelKind>(k)))] = slowest.kinds[k].cycles;
    rows.push_back({{"step", i},
                    {"label", step.label},
                    {"in_loop", compiler::in_loop(p, static_cast<std::uint32_t>(i))},
                    {"kernel_calls", step.compute.size()},
                    {"entry_skew_cycles", c.entry_skew},
                    {"compute_cycles", c.compute},
                    {"compute_uncalibrated_cycles", c.compute_uncalibrated},
                    {"kind_cycles", kinds},
                    {"local_copy_cycles", slowest.local_copy_cycles},
                    {"transfers", step.exchange.size()},
                    {"waves", step.waves},
                    {"exchange_cycles", c.exchange},
                    {"sync_cycles", c.sync},
                    // the yardsticks of the schedule (exchange_bounds.hpp): payload floors (the
                    // cycles pieces occupy a tile's lane in or out), per phase and summed over
                    // its waves, and the bound the [exchange] rules add
                    {"receive_floor_cycles", bounds.receive_floor},
                    {"send_floor_cycles", bounds.send_floor},
                    {"floor_cycles", bounds.floor()},
                    {"wave_floor_cycles", bounds.wave_floor},
                    {"rule_bound_cycles", bounds.rule_bound},
                    {"local_copies", step.local_copies.size()}});
  }
  return rows;
}

nlohmann::json kernel_calls_json(const target::MachineDescription& machine, const compiler::CompiledProgram& p) {
  nlohmann::json rows = nlohmann::json::array();
  for (std::size_t i = 0; i < p.steps.size(); ++i) {
    const auto& step = p.steps[i];
    for (const compiler::KernelCall& call : step.compute) {
      const compiler::KernelShape shape = call.shape();
      rows.push_back({{"step", i},
                      {"label", step.label},
                      {"tile", call.tile},
                      {"kind", compiler::kernel_name(call.kind)},
                      {"operation", call.op < p.op_names.size() ? p.op_names[call.op] : std::string()},
                      {"dims", compiler::dims_text(call.kind, call.dims)},
                      {"cycles", compiler::estimate_call_cycles(machine, call)},
                      {"flops", shape.info().flops(shape)}});
    }
  }
  return rows;
}

}  // namespace tilevit::job
