// tilevit.compile on a machine of several chips: the model pipelined over them as
// `tilevit run --machine c600x2` compiles it (docs/SCALE_OUT.md), its package read back.
#include "package/container.hpp"
#include "python/bindings.hpp"
#include "support/error.hpp"
#include "support/threads.hpp"
#include "system/pipeline_package.hpp"
#include "system/pipeline_plan_file.hpp"

namespace tilevit::python {
namespace {

// Each stage's plan search report, when any stage was searched.
std::optional<nlohmann::json> search_reports(const system::CompiledPipeline& p) {
  nlohmann::json stages = nlohmann::json::array();
  bool searched = false;
  for (const system::PipelineStage& s : p.stages) {
    stages.push_back(s.search ? s.search->report : nlohmann::json(nullptr));
    searched = searched || s.search.has_value();
  }
  if (!searched) return std::nullopt;
  return nlohmann::json{{"stages", stages}};
}

}  // namespace

void compile_pipeline(Program& p, const model::ViTConfig& config, const model::NumericsConfig& numerics,
                      const target::MachineDescription& machine, const compiler::CompileOptions& options,
                      const PlanSpec& plan, const job::PlanSearchSettings& search, std::uint32_t micro_batches) {
  std::string problem = system::micro_batches_problem(micro_batches, config.batch);
  if (!problem.empty()) throw Error(problem.replace(0, 13, "micro_batches"), kExitUsage);
  if (plan.text && plan.stream_words)
    throw Error("exchange_stream_words: " + plan.source + " pins every stage's W (drop one)", kExitUsage);
  const system::StageSearchOptions stages{search.steps, search.seconds,
                                          static_cast<std::uint32_t>(std::max(1, host_threads())), search.progress};
  const auto pinned = plan.text ? system::parse_pipeline_plan_file(*plan.text, plan.source, config, machine)
                                 : std::vector<system::StagePlan>{};
  system::CompiledPipeline compiled =
      job::compile_pipeline_planned(config, numerics, machine, options, stages, pinned, plan.text ? plan.source : "");
  compiled.micro_batches = micro_batches;
  p.plan = nlohmann::json::parse(system::pipeline_plan_file_text(compiled));
  p.search = search_reports(compiled);
  adopt_pipeline(p, system::encode_pipeline(compiled).bytes(), "compiled pipeline");
  p.pipeline->plan = compiled.plan;  // what the package does not record, known here
  for (std::size_t s = 0; s < compiled.stages.size(); ++s) p.pipeline->stages[s].search = compiled.stages[s].search;
  p.plan_origin = compiled.plan;
}

void adopt_pipeline(Program& p, std::vector<std::byte> bytes, const std::string& name) {
  const package::Container container = package::Container::from_bytes(bytes, name);
  p.pipeline = system::decode_pipeline(container);
  p.sha256 = container.sha256_hex();
  p.bytes = std::move(bytes);
}

nlohmann::json stage_rows(const Program& p, const std::function<nlohmann::json(const compiler::Executable&)>& table) {
  if (!p.pipeline) return table(p.chip);
  nlohmann::json rows = nlohmann::json::array();
  for (std::size_t s = 0; s < p.pipeline->stages.size(); ++s)
    for (nlohmann::json& row : table(p.pipeline->stages[s].executable)) {
      row["stage"] = s;
      rows.push_back(std::move(row));
    }
  return rows;
}

std::uint64_t Program::estimated_cycles() const {
  return pipeline ? system::pipeline_figures(*pipeline).makespan_cycles : summary.estimated_cycles;
}

std::size_t Program::images_per_call() const {
  return std::size_t(first().config.batch) * (pipeline ? pipeline->micro_batches : 1);
}

}  // namespace tilevit::python
