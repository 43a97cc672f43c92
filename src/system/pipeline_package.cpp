#include "system/pipeline_package.hpp"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "compiler/verify.hpp"
#include "package/program_codec.hpp"
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

// A stage package, decoded and verified like any package.
compiler::Executable decode_stage(const package::Container& c, std::size_t s) {
  const auto payload = c.payload(c.require(stage_section(s), 1));
  const package::Container inner = package::Container::from_bytes(
      std::vector<std::byte>(payload.begin(), payload.end()), c.name() + ": " + stage_section(s));
  compiler::Executable e = package::decode_package(inner);
  const auto report = compiler::verify_program(e.machine, e.program, e.bindings, e.tensors, false, 1);
  if (!report.ok()) throw Error(inner.name() + ": not a valid package: " + report.violations.front());
  return e;
}

// The stages must be one model cut in order over the machine's chips.
void check_stage(const package::Container& c, const CompiledPipeline& p, const PipelineStage& stage, std::uint32_t first) {
  const std::size_t s = stage.chip, n = p.machine.system.chips;
  const compiler::Executable& e = stage.executable;
  const model::ViTConfig& model = p.stages.front().executable.config;
  auto fail = [&](const std::string& what) { throw Error(c.name() + ": " + stage_section(s) + ": " + what); };
  if (!(e.machine == target::one_chip(p.machine))) fail("compiled for another chip than the system's");
  if (e.stage.first_layer != first || e.program.loop_count != stage.layers)
    fail("layers " + std::to_string(e.stage.first_layer) + " + " + std::to_string(e.program.loop_count) + ", expected " +
         std::to_string(first) + " + " + std::to_string(stage.layers));
  if (e.stage.embeds != (s == 0) || e.stage.pools != (s + 1 == n)) fail("embeds or pools out of pipeline order");
  if (e.config.name != model.name || e.config.width != model.width || e.config.tokens() != model.tokens() ||
      e.config.batch != model.batch || e.config.layers != model.layers)
    fail("a different model than stage 0's");
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

CompiledPipeline decode_pipeline(const package::Container& c) {
  CompiledPipeline p;
  std::vector<std::uint32_t> layers;
  const auto bytes = c.payload(c.require("system", 1));
  try {
    const nlohmann::json j = nlohmann::json::parse(reinterpret_cast<const char*>(bytes.data()),
                                                   reinterpret_cast<const char*>(bytes.data()) + bytes.size());
    p.machine = target::parse_machine(j.at("machine").get<std::string>(), c.name() + ": system machine");
    const auto& stages = j.at("stages");
    if (!stages.is_array() || stages.size() != p.machine.system.chips || stages.size() < 2 || stages.size() > kMaxStages)
      throw Error("expected one stage per chip of the " + std::to_string(p.machine.system.chips) + ", got " +
                  std::to_string(stages.size()));
    for (std::size_t s = 0; s < stages.size(); ++s) {
      if (json_integer<std::uint32_t>(stages[s].at("chip"), "stages.chip") != s) throw Error("stage chips out of order");
      layers.push_back(json_integer<std::uint32_t>(stages[s].at("layers"), "stages.layers", 1, 1u << 20));
    }
    if (j.contains("micro_batches"))  // written only above 1: one encoding per pipeline
      p.micro_batches = json_integer<std::uint32_t>(j["micro_batches"], "micro_batches", 2, kMaxMicroBatches);
  } catch (const nlohmann::json::exception& e) {
    throw Error(c.name() + ": section \"system\": " + e.what());
  } catch (const Error& e) {
    throw Error(c.name() + ": section \"system\": " + e.what());
  }
  std::uint32_t first = 0;
  for (std::size_t s = 0; s < layers.size(); ++s) {
    p.stages.push_back(PipelineStage{static_cast<std::uint32_t>(s), layers[s], decode_stage(c, s), {}, {}, {}});
    PipelineStage& stage = p.stages.back();
    check_stage(c, p, stage, first);
    static_cast<compiler::ProgramSummary&>(stage.stats) =
        compiler::summarize_program(stage.executable.machine, stage.executable.program, stage.executable.tensors);
    for (const auto& tile : compiler::tile_memory_stats(stage.executable.machine, stage.executable.program,
                                                        stage.executable.program.profiling.enabled))
      stage.stats.peak_tile_bytes = std::max(stage.stats.peak_tile_bytes, tile.peak_live);
    first += layers[s];
  }
  const std::string micro = micro_batches_problem(p.micro_batches, p.stages.front().executable.config.batch);
  if (!micro.empty()) throw Error(c.name() + ": section \"system\": " + micro);
  if (first != static_cast<std::uint32_t>(p.stages.front().executable.config.layers))
    throw Error(c.name() + ": the stages hold " + std::to_string(first) + " layers, the model " +
                std::to_string(p.stages.front().executable.config.layers));
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
