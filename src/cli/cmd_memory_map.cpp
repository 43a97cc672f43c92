// tilevit memory-map: the exact memory map of every tile of a package, as memory.json,
// memory.png and memory.html in one output directory (docs/MEMORY_MAP.md).
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/stage_package.hpp"
#include "profile/memory_html.hpp"
#include "profile/memory_map.hpp"
#include "profile/memory_map_json.hpp"
#include "profile/memory_png.hpp"
#include "support/atomic_file.hpp"
#include "support/error.hpp"

namespace tilevit::cli {
namespace {

struct MemoryMapCommand {
  std::string path;
  std::string out_dir;
  std::optional<std::uint32_t> stage;
  bool json = false;

  CommandAction setup(CLI::App& app) {
    app.add_option("PACKAGE", path, "package file (.tvpkg)")->required();
    app.add_option("--out", out_dir, "output directory (created if missing)")->required();
    add_stage_option(app, stage);
    app.add_flag("--json", json, "print one JSON object (files, sizes, counts)");
    return [this] { return run(); };
  }

  int run() {
    namespace fs = std::filesystem;
    const StagePackage loaded = load_stage_package(path, stage);
    const compiler::Executable& c = loaded.package.contents;
    // A profiled package reserves the profiling buffers: they are part of its map.
    profile::MemoryMap map = profile::build_memory_map(c.machine, c.program, c.program.profiling.enabled);
    if (loaded.stage) map.stage = profile::MemoryMapStage{*loaded.stage, loaded.stages};

    std::error_code ec;
    if (fs::exists(out_dir, ec) && !fs::is_directory(out_dir, ec))
      throw Error(out_dir + ": --out exists and is not a directory", kExitUsage);
    fs::create_directories(out_dir, ec);
    if (ec) throw Error(out_dir + ": cannot create the output directory: " + ec.message(), kExitResource);

    const std::string json_text = profile::to_json(map).dump() + "\n";
    const std::vector<std::byte> png = profile::render_memory_png(map);
    const std::string html = profile::render_memory_html(map);
    const fs::path dir(out_dir);
    write_text_atomically((dir / "memory.json").string(), json_text);
    write_bytes_atomically((dir / "memory.png").string(), png);
    write_text_atomically((dir / "memory.html").string(), html);

    const std::uint64_t entries = map.entry_count();
    std::uint32_t fullest = 0;  // the tile with the most payload bytes live at one phase (its summary)
    for (std::uint32_t t = 0; t < map.tiles.size(); ++t)
      if (map.tiles[t].summary.peak_bytes > map.tiles[fullest].summary.peak_bytes) fullest = t;
    const std::uint32_t fullest_bytes = map.tiles.empty() ? 0 : map.tiles[fullest].summary.peak_bytes;
    const auto& over_time = map.over_time;
    const std::string peak_label = over_time.peak_step < over_time.step_labels.size() ? over_time.step_labels[over_time.peak_step] : "";
    if (json) {
      nlohmann::json j{{"out", out_dir},
                       {"tiles", c.machine.tiles},
                       {"allocations", c.program.allocations.size()},
                       {"entries", entries},
                       {"labels", map.labels.size()},
                       {"profiling", c.program.profiling.enabled},
                       {"fullest_tile", {{"tile", fullest}, {"peak_bytes", fullest_bytes}}},
                       {"peak_step", {{"step", over_time.peak_step}, {"label", peak_label}, {"bytes", over_time.peak_bytes}}},
                       {"files",
                        {{"memory.json", json_text.size()}, {"memory.png", png.size()}, {"memory.html", html.size()}}}};
      loaded.describe(j, path);
      std::cout << j.dump(1) << "\n";
    } else {
      const std::string shown = loaded.stage ? path + ", " + loaded.stage_text() : path;
      std::printf("%s: %zu allocations on %u tiles (%llu map entries, %zu labels)\n", shown.c_str(),
                  c.program.allocations.size(), c.machine.tiles, static_cast<unsigned long long>(entries),
                  map.labels.size());
      std::printf("fullest tile %u: %u B live at its peak, step %u (%s)\n", fullest, fullest_bytes, over_time.peak_step,
                  peak_label.c_str());
      std::printf("wrote %s/memory.json (%zu B), memory.png (%zu B), memory.html (%zu B)\n", out_dir.c_str(),
                  json_text.size(), png.size(), html.size());
    }
    return kExitOk;
  }
};

MemoryMapCommand command;
const CommandRegistration registration("memory-map", "write a package's per-tile memory map: memory.json, .png, .html",
                                       [](CLI::App& app) { return command.setup(app); });

}  // namespace
}  // namespace tilevit::cli
