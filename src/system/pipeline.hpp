#pragma once
// A model pipelined over the chips of a multi-chip machine (docs/SCALE_OUT.md): contiguous
// layer ranges, one per chip in line order, each compiled for one chip by compile_model
// with the heuristic plan; the residual stream crosses an IPU-Link at every boundary.
// Stages are balanced by their compiled cycles; every stage must fit its chip's SRAM.
#include <cstdint>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "compiler/compile.hpp"
#include "target/system.hpp"

namespace tilevit::system {

struct PipelineStage {
  std::uint32_t chip = 0;
  std::uint32_t layers = 0;            // from executable.stage.first_layer
  compiler::Executable executable;     // for one chip (target::one_chip)
  compiler::CompileStats stats;        // its figures (cycles of one call, SRAM peak)
};

// The residual stream leaving a stage for the next one.
struct StageLink {
  std::uint32_t from_chip = 0, to_chip = 0;
  std::uint64_t bytes = 0;
  target::LinkCost cost;
};

struct CompiledPipeline {
  target::MachineDescription machine;  // the whole system
  std::vector<PipelineStage> stages;   // in pipeline order
  std::vector<StageLink> links;        // links[s]: stage s to stage s + 1
};

// Latency of one batch and throughput of batches streaming through the pipeline.
struct PipelineFigures {
  std::uint64_t latency_cycles = 0;     // every stage and link once
  std::uint64_t stage_cycles = 0;       // of which stages
  std::uint64_t link_cycles = 0;        // of which links
  std::uint64_t interval_cycles = 0;    // the slowest stage plus its outgoing link: one batch per interval
  std::uint32_t bottleneck_stage = 0;
  double latency_seconds = 0;
  double images_per_second = 0;         // batch / interval at the clock
  double link_share = 0;                // link cycles / latency cycles
};

// Layers per stage for `stages` stages that minimise the slowest stage's cycles plus
// its outgoing link: stage s costs fixed[s] + layers x per_layer[s] + link[s]; every stage
// at least one layer. Ties go to the earliest stages holding more layers.
std::vector<std::uint32_t> balance_layers(std::uint32_t layers, const std::vector<std::uint64_t>& fixed,
                                          const std::vector<std::uint64_t>& per_layer,
                                          const std::vector<std::uint64_t>& link);

// Compiles `config` over every chip of `machine` (chips > 1): an even split first, then
// the split balanced by the compiled stages' cycles. Throws Error(kExitBadInput), one
// line, when a stage does not fit its chip on any split tried, or the model has fewer
// layers than chips.
CompiledPipeline compile_pipeline(const model::ViTConfig& config, const model::NumericsConfig& numerics,
                                  const target::MachineDescription& machine, const compiler::CompileOptions& options);

// The stages and links of a compiled or loaded pipeline, as figures.
PipelineFigures pipeline_figures(const CompiledPipeline& pipeline);
// Per stage and link, and the figures: what `tilevit compile --json` reports.
nlohmann::json pipeline_json(const CompiledPipeline& pipeline);

// The numerics the whole pipeline computes with (the device-numerics reference's): the
// embedding's splits from the first stage, the head's from the last, the encoder's from
// the first. Throws Error(kExitInternal) if two stages split an encoder role differently.
model::NumericsConfig pipeline_numerics(const CompiledPipeline& pipeline);

// The residual stream's bytes at a stage boundary: batch x tokens x width FP16.
std::uint64_t stream_bytes(const model::ViTConfig& config);

}  // namespace tilevit::system
