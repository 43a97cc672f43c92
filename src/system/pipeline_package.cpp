#include "system/pipeline_package.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <nlohmann/json.hpp>

#include "compiler/verify.hpp"
#include "package/program_codec.hpp"
#include "package/verified_package.hpp"
#include "support/error.hpp"
#include "support/json_number.hpp"

namespace tilevit::system {
namespace {

constexpr std::uint32_t kMaxStages = 1024;

std::vector<std::byte> to_bytes(const std::string& text) {
  std::vector<std::byte> out(text.size());
  std::memcpy(out.data(), text.data(), text.size());
  return out;
}

std::string stage_section(std::size_t s) { return "stage." + std::to_string(s); }

// The system section: the whole machine, each stage's layers, micro-batches.
struct SystemSection {
  target::MachineDescription machine;
  std::vector<std::uint32_t> layers;  // per stage, in chip order
  std::uint32_t micro_batches = 1;
};

SystemSection read_system_section(const package::Container& c) {
  SystemSection out;
  if (c.find("system") == nullptr && c.find("machine") != nullptr)
    throw Error(c.name() + ": is a one-chip package, not a pipeline package (no \"system\" section)", kExitBadInput);
  const auto bytes = c.payload(c.require("system", 1));
  try {
    const nlohmann::json j = nlohmann::json::parse(reinterpret_cast<const char*>(bytes.data()),
                                                   reinterpret_cast<const char*>(bytes.data()) + bytes.size());
    out.machine = target::parse_machine(j.at("machine").get<std::string>(), c.name() + ": system machine");
    const auto& stages = j.at("stages");
    if (!stages.is_array() || stages.size() != out.machine.system.chips || stages.size() < 2 || stages.size() > kMaxStages)
      throw Error("expected one stage per chip of the " + std::to_string(out.machine.system.chips) + ", got " +
                  std::to_string(stages.size()));
    for (std::size_t s = 0; s < stages.size(); ++s) {
      if (json_integer<std::uint32_t>(stages[s].at("chip"), "stages.chip") != s) throw Error("stage chips out of order");
      out.layers.push_back(json_integer<std::uint32_t>(stages[s].at("layers"), "stages.layers", 1, 1u << 20));
    }
    if (j.contains("micro_batches"))  // written only above 1: one encoding per pipeline
      out.micro_batches = json_integer<std::uint32_t>(j["micro_batches"], "micro_batches", 2, kMaxMicroBatches);
  } catch (const nlohmann::json::exception& e) {
    throw Error(c.name() + ": section \"system\": " + e.what());
  } catch (const Error& e) {
    throw Error(c.name() + ": section \"system\": " + e.what());
  }
  return out;
}

void require_stage(const package::Container& c, const SystemSection& system, std::uint32_t s) {
  if (s >= system.layers.size())
    throw Error(c.name() + ": no stage " + std::to_string(s) + " in a pipeline of " +
                std::to_string(system.layers.size()));
}

// A stage must be the system's chip running its layers in pipeline order.
void check_stage_place(const package::Container& c, const SystemSection& system, std::uint32_t s,
                       const compiler::Executable& e) {
  const std::size_t n = system.layers.size();
  std::uint32_t first = 0;
  for (std::uint32_t before = 0; before < s; ++before) first += system.layers[before];
  auto fail = [&](const std::string& what) { throw Error(c.name() + ": " + stage_section(s) + ": " + what); };
  if (!(e.machine == target::one_chip(system.machine))) fail("compiled for another chip than the system's");
  if (e.stage.first_layer != first || e.program.loop_count != system.layers[s])
    fail("layers " + std::to_string(e.stage.first_layer) + " + " + std::to_string(e.program.loop_count) + ", expected " +
         std::to_string(first) + " + " + std::to_string(system.layers[s]));
  if (e.stage.embeds != (s == 0) || e.stage.pools != (s + 1 == n)) fail("embeds or pools out of pipeline order");
}

// Every stage runs stage 0's model.
void check_same_model(const package::Container& c, std::uint32_t s, const model::ViTConfig& e,
                      const model::ViTConfig& model) {
  if (e.name != model.name || e.width != model.width || e.tokens() != model.tokens() || e.batch != model.batch ||
      e.layers != model.layers)
    throw Error(c.name() + ": " + stage_section(s) + ": a different model than stage 0's");
}

}  // namespace

bool is_pipeline(const package::Container& c) { return c.find("system") != nullptr; }

package::ContainerWriter encode_pipeline(const CompiledPipeline& p) {
  package::ContainerWriter w;
  nlohmann::json stages = nlohmann::json::array();
  for (const PipelineStage& s : p.stages) stages.push_back({{"chip", s.chip}, {"layers", s.layers}});
  nlohmann::json system = {{"machine", target::to_text(p.machine)}, {"stages", stages}};
  if (p.micro_batches != 1) system["micro_batches"] = p.micro_batches;  // absent: 1, the format before micro-batches
  w.add_section("system", 1, to_bytes(system.dump(1)));
  for (std::size_t s = 0; s < p.stages.size(); ++s)
    w.add_section(stage_section(s), 1, package::encode_package(p.stages[s].executable).bytes());
  return w;
}

std::uint32_t pipeline_stage_count(const package::Container& c) {
  return static_cast<std::uint32_t>(read_system_section(c).layers.size());
}

package::Container stage_container(const package::Container& c, std::uint32_t s) {
  const auto payload = c.payload(c.require(stage_section(s), 1));
  return package::Container::from_bytes(std::vector<std::byte>(payload.begin(), payload.end()),
                                        c.name() + ": " + stage_section(s));
}

void check_pipeline_stage(const package::Container& c, std::uint32_t s, const compiler::Executable& stage) {
  const SystemSection system = read_system_section(c);
  require_stage(c, system, s);
  check_stage_place(c, system, s, stage);
}

package::VerifiedPackage decode_pipeline_stage(const package::Container& c, std::uint32_t s) {
  require_stage(c, read_system_section(c), s);  // before the stage's section is looked for
  package::VerifiedPackage stage = package::verify_package(stage_container(c, s));
  check_pipeline_stage(c, s, stage.contents);
  return stage;
}

void check_pipeline(const package::Container& c, const std::vector<compiler::Executable>& stages) {
  const SystemSection system = read_system_section(c);
  if (stages.size() != system.layers.size())
    throw Error(c.name() + ": " + std::to_string(stages.size()) + " stages, the system section " +
                std::to_string(system.layers.size()));
  for (std::uint32_t s = 0; s < stages.size(); ++s) {
    check_stage_place(c, system, s, stages[s]);
    check_same_model(c, s, stages[s].config, stages.front().config);
  }
  const std::string micro = micro_batches_problem(system.micro_batches, stages.front().config.batch);
  if (!micro.empty()) throw Error(c.name() + ": section \"system\": " + micro);
  const std::uint32_t layers = std::accumulate(system.layers.begin(), system.layers.end(), 0u);
  if (layers != static_cast<std::uint32_t>(stages.front().config.layers))
    throw Error(c.name() + ": the stages hold " + std::to_string(layers) + " layers, the model " +
                std::to_string(stages.front().config.layers));
}

CompiledPipeline decode_pipeline(const package::Container& c) {
  const SystemSection system = read_system_section(c);
  std::vector<compiler::Executable> stages;
  for (std::uint32_t s = 0; s < system.layers.size(); ++s)
    stages.push_back(package::verify_package(stage_container(c, s)).contents);
  check_pipeline(c, stages);
  CompiledPipeline p;
  p.machine = system.machine;
  p.micro_batches = system.micro_batches;
  for (std::uint32_t s = 0; s < stages.size(); ++s) {
    p.stages.push_back(PipelineStage{s, system.layers[s], std::move(stages[s]), {}, {}, {}});
    PipelineStage& stage = p.stages.back();
    static_cast<compiler::ProgramSummary&>(stage.stats) =
        compiler::summarize_program(stage.executable.machine, stage.executable.program, stage.executable.tensors);
    for (const auto& tile : compiler::tile_memory_stats(stage.executable.machine, stage.executable.program,
                                                        stage.executable.program.profiling.enabled))
      stage.stats.peak_tile_bytes = std::max(stage.stats.peak_tile_bytes, tile.peak_live);
  }
  const std::uint64_t bytes_per_boundary = stream_bytes(p.stages.front().executable.config);
  for (std::uint32_t s = 0; s + 1 < p.stages.size(); ++s)
    p.links.push_back(StageLink{s, s + 1, bytes_per_boundary, target::link_cost(p.machine, s, s + 1, bytes_per_boundary)});
  return p;
}

LoadedPipeline load_pipeline(const std::string& path) {
  const package::Container c = package::Container::open(path);
  return {decode_pipeline(c), c.sha256_hex()};
}

}  // namespace tilevit::system
