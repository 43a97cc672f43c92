// The viewers of a run: the profile (when the package records one), model.html,
// trace.json and the memory map, next to run.json. Written after the result: a viewer that
// cannot be written is a warning, never a lost run.
#include <filesystem>
#include <functional>

#include "job/capacity.hpp"
#include "job/run_job.hpp"
#include "profile/memory_html.hpp"
#include "profile/memory_map.hpp"
#include "profile/memory_map_json.hpp"
#include "profile/memory_png.hpp"
#include "profile/profile_file.hpp"
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

profile::Profile call_profile(const RunPackage& package) {
  const compiler::Executable& chip = *package.chip;
  const model::ViTConfig& config = chip.config;
  auto p = profile::build_profile(chip.machine, chip.program, chip.program.profiling.detail);
  p.package_sha256 = package.sha256;
  p.model = config.name + ", " + layers_text(config.layers) + ", batch " + std::to_string(config.batch);
  p.plan = package.plan_origin;  // the viewers' header names it
  return p;
}

void write_views(const RunPackage& package, OutputDirectory& out, RunReport& report,
                 const std::function<void(const std::string&)>& progress) {
  auto attempt = [&](const char* name, const std::function<void(const std::string&)>& write) {
    const std::string path = out.output(name);
    try {
      write(path);
      record_output(report, name, path);
      const std::uint64_t bytes = report.outputs.back().bytes;
      if (bytes > (std::uintmax_t{30} << 20) && std::filesystem::path(name).extension() == ".html")
        progress(std::string("warning: ") + name + " is " + std::to_string(bytes >> 20) +
                 " MiB: browsers open it slowly (fewer --profile-iterations or a coarser --profile-granularity)");
    } catch (const std::exception& e) {  // Error, or a viewer's own fault: the result stands
      progress(std::string("warning: ") + name + " not written: " + e.what());
      report.warnings.push_back(std::string(name) + " not written: " + e.what());
    }
  };
  const compiler::Executable& chip = *package.chip;
  const auto& program = chip.program;
  if (program.profiling.enabled) {
    progress("writing profile, model.html, trace.json");
    const profile::Profile p = call_profile(package);
    attempt("profile.tvprof", [&](const std::string& path) { profile::write_profile(path, p); });
    attempt("model.html", [&](const std::string& path) {
      write_text_atomically(path, profile::render_timeline_html(p, profile::peaks_of(p)));
    });
    attempt("trace.json", [&](const std::string& path) { write_text_atomically(path, profile::chrome_trace_json(p)); });
  } else {
    progress("the package was built without profiling (--no-profile): no profile, model.html or trace.json");
  }
  progress("writing memory.json, memory.png, memory.html");
  const auto map = profile::build_memory_map(chip.machine, program, program.profiling.enabled);
  attempt("memory.json", [&](const std::string& path) {
    write_text_atomically(path, profile::to_json(map).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  });
  attempt("memory.png", [&](const std::string& path) { write_bytes_atomically(path, profile::render_memory_png(map)); });
  attempt("memory.html", [&](const std::string& path) { write_text_atomically(path, profile::render_memory_html(map)); });
}

}  // namespace tilevit::job
