// The viewers of a run: the profile (when the package records one), model.html,
// trace.json and the memory map, next to run.json. Written after the result: a viewer that
// cannot be written is a warning, never a lost run.
#include <filesystem>
#include <functional>

#include "compiler/plan_bound.hpp"
#include "job/run_job.hpp"
#include "profile/compare_html.hpp"
#include "profile/memory_html.hpp"
#include "profile/memory_map.hpp"
#include "profile/memory_map_json.hpp"
#include "profile/memory_png.hpp"
#include "profile/profile_file.hpp"
#include "profile/system_profile.hpp"
#include "profile/timeline_html.hpp"
#include "profile/trace.hpp"
#include "support/atomic_file.hpp"

namespace tilevit::job {

TileActivity tile_activity(const compiler::Executable& chip) {
  const profile::Profile totals =
      profile::build_profile(chip.machine, chip.program, compiler::ProfileDetail{compiler::Granularity::graph, 0});
  const double tile_cycles = double(totals.span) * chip.machine.tiles;
  auto share = [&](profile::SampleKind kind) { return totals.tile_cycles[std::size_t(kind)] / tile_cycles; };
  return {share(profile::SampleKind::compute), share(profile::SampleKind::idle), share(profile::SampleKind::sync),
          share(profile::SampleKind::exchange)};
}

namespace {

// Writes one viewer; a viewer that cannot be written is a warning, never a lost run.
struct ViewWriter {
  OutputDirectory& out;
  RunReport& report;
  const std::function<void(const std::string&)>& progress;

  void attempt(const std::string& name, const std::function<void(const std::string&)>& write) {
    const std::string path = out.output(name);
    try {
      write(path);
      record_output(report, name, path);
      const std::uint64_t bytes = report.outputs.back().bytes;
      if (bytes > (std::uintmax_t{30} << 20) && std::filesystem::path(name).extension() == ".html")
        progress("warning: " + name + " is " + std::to_string(bytes >> 20) +
                 " MiB: browsers open it slowly (fewer --profile-iterations or a coarser --profile-granularity)");
    } catch (const std::exception& e) {  // Error, or a viewer's own fault: the result stands
      progress("warning: " + name + " not written: " + e.what());
      report.warnings.push_back(name + " not written: " + e.what());
    }
  }

  // profile.tvprof, model.html, trace.json and, with --compare-with, compare.html.
  void profile_views(const profile::Profile& p, const RunSettings& settings) {
    progress("writing profile, model.html, trace.json");
    attempt("profile.tvprof", [&](const std::string& path) { profile::write_profile(path, p); });
    attempt("model.html", [&](const std::string& path) {
      write_text_atomically(path, profile::render_timeline_html(p, profile::peaks_of(p)));
    });
    attempt("trace.json", [&](const std::string& path) { write_text_atomically(path, profile::chrome_trace_json(p)); });
    if (settings.compare_with)  // A: the given profile, B: this run
      attempt("compare.html", [&](const std::string& path) {
        write_text_atomically(path, profile::render_compare_html(*settings.compare_with, p, settings.compare_with_name,
                                                                 "this run (" + out.output("profile.tvprof") + ")"));
      });
  }

  // memory<suffix>.json, .png, .html.
  void memory_views(const profile::MemoryMap& map, const std::string& suffix) {
    progress("writing memory" + suffix + ".json, .png, .html");
    attempt("memory" + suffix + ".json", [&](const std::string& path) {
      write_text_atomically(path, profile::to_json(map).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    });
    attempt("memory" + suffix + ".png", [&](const std::string& path) { write_bytes_atomically(path, profile::render_memory_png(map)); });
    attempt("memory" + suffix + ".html", [&](const std::string& path) { write_text_atomically(path, profile::render_memory_html(map)); });
  }
};

std::string model_text(const model::ViTConfig& config) {
  return config.name + ", " + std::to_string(config.layers) + (config.layers == 1 ? " layer" : " layers") + ", batch " +
         std::to_string(config.batch);
}

// A chip's profile with its memory peaks and operation bounds: the bounds of the graph its
// program computes (the whole model, or a pipeline stage's part) on its machine.
profile::Profile chip_profile(const compiler::Executable& chip, const profile::MemoryMap& map) {
  auto p = profile::build_profile(chip.machine, chip.program, chip.program.profiling.detail);
  for (const auto& tile : map.tiles) p.tile_peak_bytes.push_back(tile.summary.peak_bytes);
  const compiler::Graph graph = compiler::build_stage_graph(chip.config, chip.numerics, chip.stage, chip.program.loop_count);
  for (const auto& b : compiler::operation_lower_bounds(graph, chip.machine))
    p.operation_bounds.push_back({b.name, std::uint64_t(b.tile_cycles + 0.5)});
  return p;
}

// A one-chip call's profile with its memory peaks, operation bounds, package and plan.
profile::Profile call_profile(const RunPackage& package, const profile::MemoryMap& map) {
  const compiler::Executable& chip = *package.chip;
  auto p = chip_profile(chip, map);
  p.package_sha256 = package.sha256;
  p.model = model_text(chip.config);
  p.plan = package.plan_origin;  // the viewers' header names it
  return p;
}

// Each stage's memory map, as `memory-map --stage N` makes it.
std::vector<profile::MemoryMap> stage_maps(const system::CompiledPipeline& pipeline) {
  std::vector<profile::MemoryMap> maps;
  const std::uint32_t count = static_cast<std::uint32_t>(pipeline.stages.size());
  for (std::uint32_t s = 0; s < count; ++s) {
    const compiler::Executable& chip = pipeline.stages[s].executable;
    maps.push_back(profile::build_memory_map(chip.machine, chip.program, chip.program.profiling.enabled));
    maps.back().stage = profile::MemoryMapStage{s, count};
  }
  return maps;
}

// A profiled pipeline's call (docs/SCALE_OUT.md, "Profiles"): each stage's profile (with its
// memory peaks and its own operation bounds) at the cycles the schedule runs its
// micro-batches, the links as rows of their own.
profile::Profile system_call_profile(const RunPackage& package, const std::vector<profile::MemoryMap>& maps) {
  const system::CompiledPipeline& pipeline = *package.pipeline;
  const std::uint32_t count = static_cast<std::uint32_t>(pipeline.stages.size());
  std::vector<profile::Profile> stages;
  std::vector<std::uint64_t> busy;  // per stage: its cycles plus its outgoing link
  std::vector<profile::SystemLinkRun> links;
  for (std::uint32_t s = 0; s < count; ++s) {
    const std::uint64_t link = s < pipeline.links.size() ? pipeline.links[s].cost.cycles() : 0;
    if (s < pipeline.links.size())
      links.push_back({"link chip " + std::to_string(pipeline.links[s].from_chip) + " -> " + std::to_string(pipeline.links[s].to_chip),
                       pipeline.links[s].bytes, link});
    stages.push_back(chip_profile(pipeline.stages[s].executable, maps[s]));
    busy.push_back(stages.back().span + link);
  }
  // The schedule of the call's micro-batches (system::pipeline_makespan's recurrence).
  std::vector<std::vector<std::uint64_t>> starts(pipeline.micro_batches, std::vector<std::uint64_t>(count));
  std::vector<std::uint64_t> free_at(count, 0);
  for (std::uint32_t i = 0; i < pipeline.micro_batches; ++i) {
    std::uint64_t arrival = 0;
    for (std::uint32_t s = 0; s < count; ++s) {
      starts[i][s] = std::max(free_at[s], arrival);
      arrival = free_at[s] = system::stage_end(free_at[s], arrival, busy[s]);
    }
  }
  const std::string chips = "x" + std::to_string(count);  // the system's name: "test16x2"
  const std::string& chip_name = pipeline.machine.name;
  const bool named = chip_name.size() > chips.size() && chip_name.ends_with(chips);
  auto p = profile::system_profile(named ? chip_name : chip_name + chips, stages, links, starts, free_at.back());
  p.package_sha256 = package.sha256;
  p.model = model_text(pipeline.stages.front().executable.config) + ", " + std::to_string(pipeline.micro_batches) +
            (pipeline.micro_batches == 1 ? " micro-batch" : " micro-batches") + " over " + std::to_string(count) + " chips";
  p.plan = package.plan_origin;
  return p;
}

// A pipeline's views: memory-stage<N>.* per stage and, profiled, one profile of the system.
void write_system_views(const RunPackage& package, ViewWriter& views, const RunSettings& settings) {
  const std::vector<profile::MemoryMap> maps = stage_maps(*package.pipeline);
  for (const profile::MemoryMap& map : maps) views.memory_views(map, "-stage" + std::to_string(map.stage->index));
  if (!package.pipeline->stages.front().executable.program.profiling.enabled) {
    settings.progress("the package was built without profiling (--no-profile): no profile, model.html or trace.json");
    return;
  }
  views.profile_views(system_call_profile(package, maps), settings);
}

}  // namespace

profile::Profile call_profile(const RunPackage& package) {
  if (package.pipeline) return system_call_profile(package, stage_maps(*package.pipeline));
  const compiler::Executable& chip = *package.chip;
  return call_profile(package, profile::build_memory_map(chip.machine, chip.program, chip.program.profiling.enabled));
}

void write_views(const RunPackage& package, OutputDirectory& out, RunReport& report, const RunSettings& settings) {
  ViewWriter views{out, report, settings.progress};
  if (package.pipeline) {
    write_system_views(package, views, settings);
    return;
  }
  const compiler::Executable& chip = *package.chip;
  const auto& program = chip.program;
  const auto map = profile::build_memory_map(chip.machine, program, program.profiling.enabled);
  if (program.profiling.enabled) {
    views.profile_views(call_profile(package, map), settings);
  } else {
    settings.progress("the package was built without profiling (--no-profile): no profile, model.html or trace.json");
    if (settings.compare_with) report.warnings.push_back("compare.html not written: the package records no profile");
  }
  views.memory_views(map, "");
}

}  // namespace tilevit::job
