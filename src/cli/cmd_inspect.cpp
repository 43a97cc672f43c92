// tilevit inspect: what a package holds, per tile and in total.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/calibration_report.hpp"
#include "cli/command.hpp"
#include "compiler/compile.hpp"
#include "compiler/distribution.hpp"
#include "cli/stage_package.hpp"
#include "support/error.hpp"
#include "target/model_validation.hpp"

namespace tilevit::cli {
namespace {

nlohmann::json spread(std::vector<std::uint64_t> v) {
  if (v.empty()) return {{"min", 0}, {"median", 0}, {"max", 0}};
  std::sort(v.begin(), v.end());
  return {{"min", v.front()}, {"median", v[v.size() / 2]}, {"max", v.back()}};
}

struct InspectCommand {
  std::string path;
  std::optional<std::uint32_t> stage;
  bool json = false;

  CommandAction setup(CLI::App& app) {
    app.add_option("PACKAGE", path, "package file (.tvpkg)")->required();
    add_stage_option(app, stage);
    app.add_flag("--json", json, "print one JSON object");
    return [this] { return run(); };
  }

  int run() {
    const StagePackage loaded = load_stage_package(path, stage);
    const compiler::Executable& c = loaded.package.contents;
    const auto& m = c.machine;
    const auto& p = c.program;
    // Per-tile memory from the placement itself.
    std::vector<compiler::TileMemoryStats> memory;
    try {
      memory = compiler::tile_memory_stats(m, p, p.profiling.enabled);
    } catch (const Error& e) {
      throw Error(path + ": " + e.what(), e.exit_code());
    }
    std::vector<bool> has_allocations(m.tiles, false);
    for (const auto& a : p.allocations) has_allocations[a.tile] = true;
    const compiler::ProgramSummary summary = compiler::summarize_program(m, p, c.tensors);
    std::vector<std::uint64_t> kind_bytes[compiler::kAllocationKinds], peak, hole;
    const std::vector<std::uint64_t> table(summary.exchange_table_bytes.begin(), summary.exchange_table_bytes.end());
    std::uint32_t used = 0;
    for (std::uint32_t t = 0; t < m.tiles; ++t) {
      if (!has_allocations[t]) continue;
      ++used;
      const auto& stats = memory[t];
      peak.push_back(stats.peak_live);
      hole.push_back(stats.largest_hole_at_peak);
      for (std::size_t k = 0; k < compiler::kAllocationKinds; ++k) kind_bytes[k].push_back(stats.bytes_by_kind[k]);
    }
    const std::uint64_t weight_bytes = summary.weight_bytes, unique = summary.unique_weight_bytes;
    const std::uint64_t cycles = summary.estimated_cycles, exchange_words = summary.exchange_bytes / 4;
    nlohmann::json j;
    loaded.describe(j, path);
    j["machine"] = m.name;
    j["model"] = c.config.name;
    j["layers"] = c.config.layers;
    j["tiles_used"] = summary.tiles_used;  // with a kernel call, as compile counts them
    j["tiles_holding_data"] = used;        // with any allocation (weights, buffers, code, tables)
    j["supersteps"] = p.steps.size();
    j["loop"] = {{"begin", p.loop_begin}, {"end", p.loop_end}, {"count", p.loop_count}};
    j["peak_tile_bytes"] = spread(peak);
    j["largest_hole_bytes"] = spread(hole);
    for (std::size_t k = 0; k < compiler::kAllocationKinds; ++k)
      j["bytes_by_kind"][std::string(compiler::to_string(static_cast<compiler::AllocationKind>(k)))] = spread(kind_bytes[k]);
    j["exchange_words_per_call"] = exchange_words;
    j["exchange_bytes_per_call"] = summary.exchange_bytes;  // the unit compile and run report
    j["exchange_table_bytes"] = spread(table);
    j["weight_bytes"] = weight_bytes;
    j["weight_replication"] = unique ? double(weight_bytes) / double(unique) : 0.0;
    j["estimated_cycles"] = cycles;
    j["estimated_ms"] = double(cycles) / double(m.clock_hz) * 1e3;
    const auto coverage = compiler::calibration_coverage(m, p);
    j["kernel_calibration"] = coverage_json(coverage);
    j["model_validation"] = target::model_validation_json();
    j["kernel_maxima"] = kernel_maxima_json(compiler::kernel_maxima(m, p));
    if (json) {
      std::cout << j.dump(1) << "\n";
    } else {
      std::string shown = path;
      if (loaded.stage)
        shown += ", " + loaded.stage_text() + " (layers " + std::to_string(c.stage.first_layer) + "-" +
                 std::to_string(c.stage.first_layer + p.loop_count - 1) + ")";
      std::printf("%s: %s on %s (%d layers), sha256 %s\n", shown.c_str(), c.config.name.c_str(), m.name.c_str(),
                  c.config.layers, j["package_sha256"].get<std::string>().c_str());
      std::printf("tiles used %u of %u (with a kernel call; %u hold data), %zu supersteps (loop %u..%u x %u)\n",
                  summary.tiles_used, m.tiles, used, p.steps.size(), p.loop_begin, p.loop_end, p.loop_count);
      auto row = [](const char* name, const nlohmann::json& s) {
        std::printf("  %-22s min %8llu  median %8llu  max %8llu\n", name, (unsigned long long)s["min"].get<std::uint64_t>(),
                    (unsigned long long)s["median"].get<std::uint64_t>(), (unsigned long long)s["max"].get<std::uint64_t>());
      };
      std::printf("per-tile bytes at peak:\n");
      row("peak live", j["peak_tile_bytes"]);
      for (auto& [k, v] : j["bytes_by_kind"].items()) row(k.c_str(), v);
      row("largest hole", j["largest_hole_bytes"]);
      row("exchange tables", j["exchange_table_bytes"]);
      std::printf("weights %llu B resident (replication %.3f), exchange %llu B per call (%llu words)\n",
                  (unsigned long long)weight_bytes, j["weight_replication"].get<double>(),
                  (unsigned long long)summary.exchange_bytes, (unsigned long long)exchange_words);
      std::printf("estimated %llu cycles = %.3f ms at %.2f GHz\n", (unsigned long long)cycles, j["estimated_ms"].get<double>(),
                  double(m.clock_hz) * 1e-9);
      std::printf("%s\n%s\n", compiler::coverage_text(coverage).c_str(), target::model_validation_line().c_str());
    }
    return kExitOk;
  }
};

InspectCommand command;
const CommandRegistration registration("inspect", "summarise a compiled package: tiles, memory, exchange, cycles",
                                       [](CLI::App& app) { return command.setup(app); });

}  // namespace
}  // namespace tilevit::cli
