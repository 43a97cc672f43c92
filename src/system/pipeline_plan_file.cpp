#include "system/pipeline_plan_file.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "compiler/plan_file.hpp"
#include "support/error.hpp"

namespace tilevit::system {
namespace {

using json = nlohmann::json;

compiler::PlanTarget stage_target(const model::ViTConfig& config, const target::MachineDescription& machine) {
  return compiler::plan_target(config, target::one_chip(machine));
}

// A whole number field of `j` in [1, most], or the one-line error naming it.
std::uint32_t count_in(const json& j, const char* key, std::uint64_t most, const std::string& where) {
  if (!j.contains(key) || !j.at(key).is_number_unsigned() || j.at(key).get<std::uint64_t>() < 1 ||
      j.at(key).get<std::uint64_t>() > most)
    throw Error(where + "." + key + ": expected a whole number in 1.." + std::to_string(most), kExitBadInput);
  return j.at(key).get<std::uint32_t>();
}

void only_keys(const json& j, std::initializer_list<const char*> keys, const std::string& where) {
  if (!j.is_object()) throw Error(where + ": expected an object", kExitBadInput);
  for (const auto& item : j.items()) {
    const std::string& key = item.key();  // not a structured binding: clang 14 cannot capture one
    if (std::find_if(keys.begin(), keys.end(), [&](const char* k) { return key == k; }) == keys.end())
      throw Error(where + ": unknown field \"" + key + "\"", kExitBadInput);
  }
}

}  // namespace

std::vector<StagePlan> pipeline_plan(const CompiledPipeline& p) {
  std::vector<StagePlan> plans;
  for (const PipelineStage& s : p.stages) plans.push_back({s.layers, s.plan});
  return plans;
}

std::string pipeline_plan_file_text(const CompiledPipeline& p) {
  const compiler::PlanTarget target = stage_target(p.stages.front().executable.config, p.machine);
  json stages = json::array();
  for (const StagePlan& s : pipeline_plan(p))
    stages.push_back({{"layers", s.layers},
                      {"plan", json::parse(compiler::plan_file_text({target, s.plan}))}});
  return json{{"tilevit_pipeline_plan", kPipelinePlanFileVersion}, {"chips", p.machine.system.chips}, {"stages", stages}}
             .dump(1) +
         "\n";
}

std::vector<StagePlan> read_pipeline_plan_file(const std::string& path, const model::ViTConfig& config,
                                               const target::MachineDescription& machine) {
  return parse_pipeline_plan_file(compiler::read_plan_text(path), path, config, machine);
}

std::vector<StagePlan> parse_pipeline_plan_file(const std::string& text, const std::string& path,
                                                const model::ViTConfig& config,
                                                const target::MachineDescription& machine) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw Error(path + ": not a pipeline plan file (" + std::string(e.what()) + ")", kExitBadInput);
  }
  if (!j.is_object() || !j.contains("tilevit_pipeline_plan") || j.at("tilevit_pipeline_plan") != kPipelinePlanFileVersion)
    throw Error(path + ": not a pipeline plan file of version " + std::to_string(kPipelinePlanFileVersion) +
                    " (tilevit_pipeline_plan; a one-chip plan cannot pin a pipeline)",
                kExitBadInput);
  only_keys(j, {"tilevit_pipeline_plan", "chips", "stages"}, path);
  const std::uint32_t chips = count_in(j, "chips", 1u << 16, path);
  const std::size_t stages = j.contains("stages") && j.at("stages").is_array() ? j.at("stages").size() : 0;
  if (chips != machine.system.chips || stages != chips)
    throw Error(path + ": a plan of " + std::to_string(stages) + " stage(s) for " + std::to_string(chips) +
                    " chips, not for " + std::to_string(machine.system.chips) + " x " + machine.name +
                    " (one stage per chip)",
                kExitBadInput);
  const compiler::PlanTarget target = stage_target(config, machine);
  std::vector<StagePlan> plans;
  std::uint64_t layers = 0;
  for (std::size_t s = 0; s < chips; ++s) {
    const std::string where = path + ": stages[" + std::to_string(s) + "]";
    const json& stage = j.at("stages").at(s);
    only_keys(stage, {"layers", "plan"}, where);
    const std::uint32_t n = count_in(stage, "layers", std::uint64_t(config.layers), where);
    if (!stage.contains("plan")) throw Error(where + ".plan: missing", kExitBadInput);
    const compiler::PlanFile plan = compiler::parse_plan_file(stage.at("plan").dump(), where + ".plan", 1u << 20);
    compiler::check_plan_target(plan, target, where + ".plan");
    if (!plan.pins_stream_words)
      throw Error(where + ".plan: exchange_stream_words missing (a version 1 plan)", kExitBadInput);
    plans.push_back({n, plan.plan});
    layers += n;
  }
  if (layers != std::uint64_t(config.layers))
    throw Error(path + ": the stages hold " + std::to_string(layers) + " layers, the model " +
                    std::to_string(config.layers),
                kExitBadInput);
  return plans;
}

}  // namespace tilevit::system
