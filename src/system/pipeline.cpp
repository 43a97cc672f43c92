#include "system/pipeline.hpp"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "compiler/levers.hpp"
#include "compiler/plan_search.hpp"
#include "compiler/program_walk.hpp"
#include "support/error.hpp"

namespace tilevit::system {
namespace {

// Cycles of one iteration of the stage's loop: layers are identical, so the stage costs
// its fixed part (embedding, head, steps outside the loop) plus this per layer.
std::uint64_t loop_iteration_cycles(const target::MachineDescription& chip, const compiler::CompiledProgram& p) {
  const auto costs = compiler::step_costs(chip, p);
  std::uint64_t cycles = 0;
  for (std::uint32_t s = p.loop_begin; s < p.loop_end; ++s) cycles += costs[s].total();
  return cycles;
}

compiler::StageRange stage_range(std::uint32_t stage, std::uint32_t stages, std::uint32_t first_layer) {
  return compiler::StageRange{first_layer, stage == 0, stage + 1 == stages};
}

// Compiles every stage for `split` (layers per stage); throws the one-line capacity error
// naming the stage that does not fit.
CompiledPipeline compile_split(const model::ViTConfig& config, const model::NumericsConfig& numerics,
                               const target::MachineDescription& machine,
                               const std::vector<compiler::CompileOptions>& options, const std::vector<std::uint32_t>& split,
                               bool pinned = false) {
  const target::MachineDescription chip = target::one_chip(machine);
  CompiledPipeline out{machine, {}, {}};
  std::uint32_t first = 0;
  for (std::uint32_t s = 0; s < split.size(); ++s) {
    const auto range = stage_range(s, static_cast<std::uint32_t>(split.size()), first);
    const compiler::Graph graph = compiler::build_stage_graph(config, numerics, range, split[s]);
    try {
      if (pinned) compiler::check_plan_pins_every_op(graph, options[s].plan);  // a plan file fixes every grid
      compiler::CompiledModel compiled = compiler::compile_model(graph, chip, options[s]);
      out.stages.push_back(PipelineStage{s, split[s], std::move(compiled.executable), compiled.stats, std::nullopt, compiled.plan});
    } catch (const compiler::RefusedPin& e) {  // the stage's plan in the pipeline plan file
      throw compiler::RefusedPin("stages[" + std::to_string(s) + "].plan: " + e.why());
    } catch (const compiler::DoesNotFit& e) {
      throw Error(config.name + " (" + std::to_string(config.layers) + " layers, batch " + std::to_string(config.batch) +
                      ") does not fit " + std::to_string(machine.system.chips) + " x " + machine.name + ": stage " +
                      std::to_string(s) + " (layers " + std::to_string(first) + "-" + std::to_string(first + split[s] - 1) +
                      "): " + compiler::describe(e.overflow()),
                  kExitBadInput);
    }
    first += split[s];
  }
  const std::uint64_t bytes = stream_bytes(config);
  for (std::uint32_t s = 0; s + 1 < split.size(); ++s)
    out.links.push_back(StageLink{s, s + 1, bytes, target::link_cost(machine, s, s + 1, bytes)});
  return out;
}

// The time a stage's search may take: the cap's rest shared by the stages left; 0 (no
// cap) without a cap; nullopt when the cap is used up.
std::optional<double> stage_seconds(const StageSearchOptions& search, double elapsed, std::size_t stages_left) {
  if (search.max_seconds <= 0) return 0.0;
  const double rest = search.max_seconds - elapsed;
  if (rest <= 0) return std::nullopt;
  return rest / double(stages_left);
}

// Searches the plan of stage `s` of `p` from its heuristic plan (the baseline the search
// recompiles, so it is never slower); candidates that do not fit are skipped by the search.
void search_stage(const model::ViTConfig& config, const model::NumericsConfig& numerics, const compiler::CompileOptions& options,
                  const StageSearchOptions& search, double seconds, CompiledPipeline& p, std::uint32_t s) {
  PipelineStage& stage = p.stages[s];
  const auto range = stage_range(s, static_cast<std::uint32_t>(p.stages.size()), stage.executable.stage.first_layer);
  const compiler::Graph graph = compiler::build_stage_graph(config, numerics, range, stage.layers);
  compiler::PlanSearchOptions so;
  so.steps = search.steps;
  so.max_seconds = seconds;
  so.threads = search.threads;
  if (search.progress) so.progress = [&](const std::string& line) { search.progress("stage " + std::to_string(s) + " " + line); };
  compiler::PlanSearchResult found = compiler::search_plan(graph, target::one_chip(p.machine), options, so);
  const compiler::PlanSearchReport& r = found.report;
  stage.search = StageSearch{r.candidates.front().cycles, r.steps, r.evaluated, r.seconds, seconds, r.cut_by_time,
                             r.stopped, compiler::plan_search_report_json(r)};
  stage.executable = std::move(found.compiled.executable);
  stage.stats = found.compiled.stats;
  stage.plan = found.plan;
}

// Every stage's plan searched in pipeline order, the time cap shared (StageSearchOptions).
void search_stages(const model::ViTConfig& config, const model::NumericsConfig& numerics,
                   const std::vector<compiler::CompileOptions>& options, const StageSearchOptions& search,
                   CompiledPipeline& p) {
  const auto t0 = std::chrono::steady_clock::now();
  for (std::uint32_t s = 0; s < p.stages.size(); ++s) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const std::optional<double> seconds = stage_seconds(search, elapsed, p.stages.size() - s);
    if (!seconds) {  // the cap is used up: the heuristic plan, as compiled
      const std::uint64_t cycles = p.stages[s].stats.estimated_cycles;
      p.stages[s].search = StageSearch{cycles, search.steps, 0, 0, 0, true, "time cap: no time left for this stage", {}};
      continue;
    }
    search_stage(config, numerics, options[s], search, *seconds, p, s);
  }
  p.plan = "searched per stage, up to " + std::to_string(search.steps) + " candidates each (--optimization-steps " +
           std::to_string(search.steps) + ")";
}

std::vector<std::uint32_t> even_split(std::uint32_t layers, std::uint32_t stages) {
  std::vector<std::uint32_t> split(stages, layers / stages);
  for (std::uint32_t s = 0; s < layers % stages; ++s) ++split[s];
  return split;
}

}  // namespace

std::uint64_t stream_bytes(const model::ViTConfig& c) { return std::uint64_t(c.batch) * c.tokens() * c.width * 2; }

std::vector<std::uint32_t> balance_layers(std::uint32_t layers, const std::vector<std::uint64_t>& fixed,
                                          const std::vector<std::uint64_t>& per_layer,
                                          const std::vector<std::uint64_t>& link) {
  const std::size_t stages = fixed.size();
  if (stages == 0 || layers < stages || per_layer.size() != stages || link.size() != stages)
    throw Error("pipeline: cannot balance " + std::to_string(layers) + " layers over " + std::to_string(stages) + " stages",
                kExitInternal);
  auto cost = [&](std::size_t s, std::uint64_t n) { return fixed[s] + n * per_layer[s] + link[s]; };
  // best[s][n]: the smallest slowest-stage cost of stages s.. holding n layers (DP, tiny sizes).
  constexpr std::uint64_t kNone = UINT64_MAX;
  std::vector<std::vector<std::uint64_t>> best(stages + 1, std::vector<std::uint64_t>(layers + 1, kNone));
  std::vector<std::vector<std::uint32_t>> take(stages, std::vector<std::uint32_t>(layers + 1, 0));
  best[stages][0] = 0;
  for (std::size_t s = stages; s-- > 0;)
    for (std::uint32_t n = 1; n <= layers; ++n)
      for (std::uint32_t k = n; k >= 1; --k) {  // more layers first: ties keep them early
        if (best[s + 1][n - k] == kNone) continue;
        const std::uint64_t c = std::max(cost(s, k), best[s + 1][n - k]);
        if (c < best[s][n]) best[s][n] = c, take[s][n] = k;
      }
  std::vector<std::uint32_t> split;
  for (std::size_t s = 0, n = layers; s < stages; ++s) {
    split.push_back(take[s][n]);
    n -= take[s][n];
  }
  return split;
}

namespace {

// The split balanced by the heuristic stages' cycles, compiled with the heuristic plans.
CompiledPipeline compile_balanced(const model::ViTConfig& config, const model::NumericsConfig& numerics,
                                  const target::MachineDescription& machine, const compiler::CompileOptions& options) {
  const std::uint32_t chips = machine.system.chips;
  const auto layers = static_cast<std::uint32_t>(config.layers);
  if (chips < 2) throw Error("pipeline: the machine has one chip", kExitInternal);
  if (layers < chips)
    throw Error(config.name + ": " + std::to_string(layers) + " layers cannot fill a pipeline of " + std::to_string(chips) +
                    " chips (one layer per chip at least)",
                kExitBadInput);
  const std::vector<std::uint32_t> even = even_split(layers, chips);
  const std::vector<compiler::CompileOptions> alike(chips, options);
  CompiledPipeline first = compile_split(config, numerics, machine, alike, even);
  std::vector<std::uint64_t> fixed, per_layer, link;
  for (const PipelineStage& s : first.stages) {
    const std::uint64_t iteration = loop_iteration_cycles(s.executable.machine, s.executable.program);
    per_layer.push_back(iteration);
    fixed.push_back(s.stats.estimated_cycles - iteration * s.layers);
    link.push_back(s.chip < first.links.size() ? first.links[s.chip].cost.cycles() : 0);
  }
  const std::vector<std::uint32_t> balanced = balance_layers(layers, fixed, per_layer, link);
  if (balanced == even) return first;
  try {
    return compile_split(config, numerics, machine, alike, balanced);
  } catch (const Error& e) {
    if (e.exit_code() != kExitBadInput) throw;
    return first;  // the balanced split overfills a chip: the even one fits
  }
}

}  // namespace

CompiledPipeline compile_pipeline(const model::ViTConfig& config, const model::NumericsConfig& numerics,
                                  const target::MachineDescription& machine, const compiler::CompileOptions& options,
                                  const StageSearchOptions& search, const std::vector<StagePlan>& pinned) {
  CompiledPipeline p;
  std::vector<compiler::CompileOptions> stage_options(machine.system.chips, options);
  if (pinned.empty()) {
    p = compile_balanced(config, numerics, machine, options);
    p.plan = "heuristic plan per stage (--optimization-steps 0)";
  } else {
    std::vector<std::uint32_t> split;
    for (std::size_t s = 0; s < pinned.size() && s < stage_options.size(); ++s) {
      split.push_back(pinned[s].layers);
      stage_options[s].plan = pinned[s].plan;
    }
    if (split.size() != machine.system.chips)
      throw Error("pipeline: " + std::to_string(pinned.size()) + " stage plans for " +
                      std::to_string(machine.system.chips) + " chips", kExitInternal);
    p = compile_split(config, numerics, machine, stage_options, split, true);
    p.plan = "pinned per stage by a plan file";
  }
  if (search.steps > 0) search_stages(config, numerics, stage_options, search, p);
  return p;
}

std::string micro_batches_problem(std::uint64_t micro_batches, int batch) {
  if (micro_batches < 1 || micro_batches > kMaxMicroBatches)
    return "micro-batches " + std::to_string(micro_batches) + ": expected 1 to " + std::to_string(kMaxMicroBatches);
  if (batch < 1 || micro_batches * std::uint64_t(batch) > kMaxImagesPerCall)
    return "micro-batches " + std::to_string(micro_batches) + " of batch " + std::to_string(batch) + ": " +
           std::to_string(micro_batches * std::uint64_t(std::max(batch, 0))) + " images per call, at most " +
           std::to_string(kMaxImagesPerCall);
  return "";
}

std::uint64_t stage_end(std::uint64_t busy_until, std::uint64_t arrival, std::uint64_t busy_cycles) {
  return std::max(busy_until, arrival) + busy_cycles;
}

std::uint64_t pipeline_makespan(const std::vector<std::vector<std::uint64_t>>& busy) {
  if (busy.empty()) return 0;
  std::vector<std::uint64_t> free_at(busy.front().size(), 0);  // end(s, i - 1) per stage
  for (const auto& micro_batch : busy) {
    if (micro_batch.size() != free_at.size())
      throw Error("pipeline: micro-batches through different numbers of stages", kExitInternal);
    std::uint64_t arrival = 0;
    for (std::size_t s = 0; s < micro_batch.size(); ++s) arrival = free_at[s] = stage_end(free_at[s], arrival, micro_batch[s]);
  }
  return free_at.empty() ? 0 : free_at.back();
}

PipelineFigures pipeline_figures(const CompiledPipeline& p) {
  std::vector<std::uint64_t> stage_cycles;
  for (const PipelineStage& s : p.stages) stage_cycles.push_back(s.stats.estimated_cycles);
  return pipeline_figures(p, stage_cycles);
}

PipelineFigures pipeline_figures(const CompiledPipeline& p, const std::vector<std::uint64_t>& stage_cycles) {
  if (stage_cycles.size() != p.stages.size()) throw Error("pipeline: stage cycles for another pipeline", kExitInternal);
  PipelineFigures f;
  std::vector<std::uint64_t> busy;  // per stage: compute plus outgoing link
  for (std::size_t s = 0; s < p.stages.size(); ++s) {
    const std::uint64_t stage = stage_cycles[s];
    const std::uint64_t outgoing = s < p.links.size() ? p.links[s].cost.cycles() : 0;
    f.stage_cycles += stage;
    f.link_cycles += outgoing;
    busy.push_back(stage + outgoing);
    if (stage + outgoing > f.interval_cycles) f.interval_cycles = stage + outgoing, f.bottleneck_stage = std::uint32_t(s);
  }
  f.latency_cycles = f.stage_cycles + f.link_cycles;
  f.micro_batches = p.micro_batches;
  f.makespan_cycles = pipeline_makespan(std::vector<std::vector<std::uint64_t>>(p.micro_batches, busy));
  const double clock = double(p.machine.clock_hz);
  const int batch = p.stages.empty() ? 0 : p.stages.front().executable.config.batch;
  f.images_per_call = std::uint64_t(batch) * p.micro_batches;
  f.latency_seconds = double(f.latency_cycles) / clock;
  f.makespan_seconds = double(f.makespan_cycles) / clock;
  f.call_images_per_second = f.makespan_cycles ? double(f.images_per_call) * clock / double(f.makespan_cycles) : 0;
  f.streaming_images_per_second = f.interval_cycles ? batch * clock / double(f.interval_cycles) : 0;
  f.link_share = f.latency_cycles ? double(f.link_cycles) / double(f.latency_cycles) : 0;
  return f;
}

namespace {

nlohmann::json stage_search_json(const StageSearch& s, std::uint64_t cycles) {
  return {{"steps", s.steps},
          {"candidates_compiled", s.evaluated},
          {"baseline_cycles", s.baseline_cycles},
          {"result_cycles", cycles},
          {"result_vs_baseline", s.baseline_cycles ? double(cycles) / double(s.baseline_cycles) : 1.0},
          {"seconds", s.seconds},
          {"max_seconds", s.max_seconds},
          {"cut_by_time", s.cut_by_time},
          {"stopped", s.stopped}};
}

// The pipeline's figures before the search: every stage with its heuristic plan.
nlohmann::json heuristic_figures_json(const CompiledPipeline& p) {
  std::vector<std::uint64_t> cycles;
  for (const PipelineStage& s : p.stages) cycles.push_back(s.search->baseline_cycles);
  const PipelineFigures f = pipeline_figures(p, cycles);
  return {{"latency_cycles", f.latency_cycles},
          {"interval_cycles", f.interval_cycles},
          {"bottleneck_stage", f.bottleneck_stage},
          {"throughput_images_per_second", f.streaming_images_per_second},
          {"makespan_cycles", f.makespan_cycles},
          {"call_images_per_second", f.call_images_per_second}};
}

}  // namespace

nlohmann::json pipeline_json(const CompiledPipeline& p) {
  nlohmann::json stages = nlohmann::json::array(), links = nlohmann::json::array();
  for (const PipelineStage& s : p.stages) {
    stages.push_back({{"chip", s.chip},
                      {"first_layer", s.executable.stage.first_layer},
                      {"layers", s.layers},
                      {"embeds", s.executable.stage.embeds},
                      {"pools", s.executable.stage.pools},
                      {"estimated_cycles", s.stats.estimated_cycles},
                      {"peak_tile_bytes", s.stats.peak_tile_bytes},
                      {"tiles_used", s.stats.tiles_used},
                      {"weight_bytes", s.stats.weight_bytes}});
    // Known when compiled here (a package does not record it): the stage's fastest grids
    // did not fit and were chosen under this per-tile cap.
    if (s.stats.gemm_tile_bytes_cap != 0) stages.back()["gemm_tile_bytes_cap"] = s.stats.gemm_tile_bytes_cap;
    if (s.search) stages.back()["search"] = stage_search_json(*s.search, s.stats.estimated_cycles);
  }
  for (const StageLink& l : p.links)
    links.push_back({{"from_chip", l.from_chip},
                     {"to_chip", l.to_chip},
                     {"bytes", l.bytes},
                     {"hops", l.cost.hops},
                     {"latency_cycles", l.cost.latency_cycles},
                     {"transfer_cycles", l.cost.transfer_cycles},
                     {"cycles", l.cost.cycles()}});
  const PipelineFigures f = pipeline_figures(p);
  nlohmann::json out = {{"chips", p.machine.system.chips},
          {"plan", p.plan},
          {"stages", stages},
          {"links", links},
          {"link_latency_calibrated", false},
          {"latency_cycles", f.latency_cycles},
          {"latency_ms", f.latency_seconds * 1e3},
          {"stage_cycles", f.stage_cycles},
          {"link_cycles", f.link_cycles},
          {"link_share", f.link_share},
          {"interval_cycles", f.interval_cycles},
          {"bottleneck_stage", f.bottleneck_stage},
          {"throughput_images_per_second", f.streaming_images_per_second},
          {"micro_batches", f.micro_batches},
          {"images_per_call", f.images_per_call},
          {"makespan_cycles", f.makespan_cycles},
          {"makespan_ms", f.makespan_seconds * 1e3},
          {"call_images_per_second", f.call_images_per_second}};
  if (!p.stages.empty() && p.stages.front().search) out["heuristic"] = heuristic_figures_json(p);
  return out;
}

model::NumericsConfig pipeline_numerics(const CompiledPipeline& p) {
  model::NumericsConfig n = p.stages.front().executable.numerics;
  const model::NumericsConfig& last = p.stages.back().executable.numerics;
  for (int r = static_cast<int>(model::GemmRole::MapQuery); r < model::kGemmRoleCount; ++r)
    n.inner_block[r] = last.inner_block[r];
  n.map_attention_key_block = last.map_attention_key_block;
  return n;
}

model::WeightPart weights_of_chips(const CompiledPipeline& p, std::uint32_t first_chip, std::uint32_t end_chip) {
  const auto& first = p.stages.at(first_chip).executable;
  const auto& last = p.stages.at(end_chip - 1);
  return model::WeightPart{static_cast<int>(first.stage.first_layer),
                           static_cast<int>(last.executable.stage.first_layer + last.layers), first.stage.embeds,
                           last.executable.stage.pools};
}

std::vector<model::NumericsConfig> pipeline_layer_numerics(const CompiledPipeline& p) {
  std::vector<model::NumericsConfig> layers;
  for (const PipelineStage& s : p.stages) layers.insert(layers.end(), s.layers, s.executable.numerics);
  return layers;
}

}  // namespace tilevit::system
