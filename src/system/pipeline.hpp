#pragma once
// A model pipelined over the chips of a multi-chip machine (docs/SCALE_OUT.md): contiguous
// layer ranges, one per chip in line order, each compiled for one chip by compile_model;
// the residual stream crosses an IPU-Link at every boundary. Stages are balanced by their
// heuristic plans' cycles, then each stage's plan may be searched (compiler/plan_search.hpp);
// every stage must fit its chip's SRAM.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/compile.hpp"
#include "model/weights.hpp"
#include "target/system.hpp"

namespace tilevit::system {

// The plan search of one stage, as compile_pipeline ran it (a package does not record it).
struct StageSearch {
  std::uint64_t baseline_cycles = 0;  // the stage with the heuristic plan
  std::uint32_t steps = 0;            // candidates allowed
  std::uint32_t evaluated = 0;        // candidates compiled
  double seconds = 0, max_seconds = 0;  // its wall time and its share of --search-seconds (0: none)
  bool cut_by_time = false;
  std::string stopped;                // why it ended
  nlohmann::json report;              // compiler::plan_search_report_json
};

struct PipelineStage {
  std::uint32_t chip = 0;
  std::uint32_t layers = 0;            // from executable.stage.first_layer
  compiler::Executable executable;     // for one chip (target::one_chip)
  compiler::CompileStats stats;        // its figures (cycles of one call, SRAM peak)
  std::optional<StageSearch> search;   // when its plan was searched here
  compiler::Plan plan;                 // every lever it was compiled with (empty pins when loaded)
};

// A stage's plan as a pipeline plan file holds it (system/pipeline_plan_file.hpp).
struct StagePlan {
  std::uint32_t layers = 0;
  compiler::Plan plan;
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
  // One call carries micro_batches x batch images, streamed through the stages as
  // micro_batches micro-batches of the compiled batch (docs/SCALE_OUT.md).
  std::uint32_t micro_batches = 1;
  // Where the stages' plans came from, in a few words (pipeline_json's "plan").
  std::string plan = "as compiled into the package (a package does not record a plan search)";
};

// The plan search per stage: `steps` candidates for each stage (0: the heuristic plans).
// A --search-seconds cap is shared in order: each stage may use the time left over its
// stages left, so time a quick stage does not use passes on; a stage reached with no time
// left keeps its heuristic plan. Without a cap the result does not depend on `threads`.
struct StageSearchOptions {
  std::uint32_t steps = 0;
  double max_seconds = 0;
  std::uint32_t threads = 1;
  std::function<void(const std::string&)> progress;  // may be empty
};

// A call's micro-batches are bounded so that its images stay a test-sized host load.
constexpr std::uint32_t kMaxMicroBatches = 64;
constexpr std::uint64_t kMaxImagesPerCall = 64;
// Why `micro_batches` micro-batches of `batch` images cannot make a call ("" if they can):
// micro_batches in [1, kMaxMicroBatches] and micro_batches x batch <= kMaxImagesPerCall.
std::string micro_batches_problem(std::uint64_t micro_batches, int batch);

// Latency of the first micro-batch, makespan of one call of K micro-batches, and the
// throughput of micro-batches streaming without end.
struct PipelineFigures {
  std::uint64_t latency_cycles = 0;     // the first micro-batch: every stage and link once
  std::uint64_t stage_cycles = 0;       // of which stages
  std::uint64_t link_cycles = 0;        // of which links
  std::uint64_t interval_cycles = 0;    // the slowest stage plus its outgoing link: one micro-batch per interval
  std::uint32_t bottleneck_stage = 0;
  std::uint32_t micro_batches = 1;
  std::uint64_t images_per_call = 0;    // batch x micro_batches
  std::uint64_t makespan_cycles = 0;    // one call: pipeline_makespan of K identical micro-batches
  double latency_seconds = 0, makespan_seconds = 0;
  double call_images_per_second = 0;    // images_per_call / makespan at the clock
  double streaming_images_per_second = 0;  // batch / interval: the bound as K grows
  double link_share = 0;                // link cycles / latency cycles
};

// The exact schedule of micro-batches through a line of stages. busy[i][s]: the cycles
// stage s is occupied by micro-batch i, its compute plus its outgoing link (a stage drives
// its link: it starts its next micro-batch only once the stream has left). Micro-batch i
// arrives at stage 0 at cycle 0 and at stage s + 1 when stage s is done with it, so
//   end(s, i) = max(end(s, i - 1), end(s - 1, i)) + busy[i][s]
// and the makespan is end(last stage, last micro-batch). Throws Error(kExitInternal) on
// rows of unequal length.
std::uint64_t pipeline_makespan(const std::vector<std::vector<std::uint64_t>>& busy);
// One step of that recurrence: a stage free at `busy_until` receiving a micro-batch at
// `arrival` is done with it (and its link) at this cycle.
std::uint64_t stage_end(std::uint64_t busy_until, std::uint64_t arrival, std::uint64_t busy_cycles);

// Layers per stage for `stages` stages that minimise the slowest stage's cycles plus
// its outgoing link: stage s costs fixed[s] + layers x per_layer[s] + link[s]; every stage
// at least one layer. Ties go to the earliest stages holding more layers.
std::vector<std::uint32_t> balance_layers(std::uint32_t layers, const std::vector<std::uint64_t>& fixed,
                                          const std::vector<std::uint64_t>& per_layer,
                                          const std::vector<std::uint64_t>& link);

// Compiles `config` over every chip of `machine` (chips > 1): an even split first, then
// the split balanced by the compiled stages' cycles (the interval, which a call of any
// number of micro-batches ends on; micro_batches is left at 1 for the caller to set), then
// with search.steps > 0 every stage's plan searched from its heuristic plan, each stage
// never slower than before. With `pinned` (one per chip, from a plan file) its split and
// every stage's grids and W instead of the balancing and the heuristic plans (the search
// then starts from them). Throws Error(kExitBadInput), one line, when a stage does not
// fit its chip on any split tried, or the model has fewer layers than chips.
CompiledPipeline compile_pipeline(const model::ViTConfig& config, const model::NumericsConfig& numerics,
                                  const target::MachineDescription& machine, const compiler::CompileOptions& options,
                                  const StageSearchOptions& search = {}, const std::vector<StagePlan>& pinned = {});

// The stages and links of a compiled or loaded pipeline, as figures for its micro_batches.
PipelineFigures pipeline_figures(const CompiledPipeline& pipeline);
// The same figures had every stage taken `stage_cycles[s]` instead (e.g. its heuristic plan's).
PipelineFigures pipeline_figures(const CompiledPipeline& pipeline, const std::vector<std::uint64_t>& stage_cycles);
// Per stage and link, and the figures: what `tilevit compile --json` reports.
nlohmann::json pipeline_json(const CompiledPipeline& pipeline);

// The numerics the whole pipeline computes with (the device-numerics reference's): the
// embedding's splits from the first stage, the head's from the last, the encoder's from
// the first; and each encoder layer's splits from its stage's (a searched stage may split
// its layers' sums unlike the others: reference::DeviceNumericsModel takes both).
model::NumericsConfig pipeline_numerics(const CompiledPipeline& pipeline);
std::vector<model::NumericsConfig> pipeline_layer_numerics(const CompiledPipeline& pipeline);

// The weights chips [first_chip, end_chip) of `pipeline` hold: their stages' layers, the
// embedding with the first stage, the head with the last (what a rank loads on the host).
model::WeightPart weights_of_chips(const CompiledPipeline& pipeline, std::uint32_t first_chip, std::uint32_t end_chip);

// The residual stream's bytes at a stage boundary: batch x tokens x width FP16.
std::uint64_t stream_bytes(const model::ViTConfig& config);

}  // namespace tilevit::system
