#include "cli/pipeline_commands.hpp"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/package_flags.hpp"
#include "cli/plan_search_flags.hpp"
#include "job/compile_job.hpp"
#include "package/verified_package.hpp"
#include "support/atomic_file.hpp"
#include "support/error.hpp"
#include "system/pipeline_package.hpp"
#include "system/pipeline_plan_file.hpp"
#include "target/model_validation.hpp"

namespace tilevit::cli {
namespace {

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string count_text(std::uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// A stage's plan search in a few words: what it gained over the heuristic plan.
std::string search_text(const nlohmann::json& s) {
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.4f", s["result_vs_baseline"].get<double>());
  return "; searched: " + count_text(s["candidates_compiled"].get<std::uint64_t>(), "candidate", "candidates") + ", " +
         std::to_string(s["baseline_cycles"].get<std::uint64_t>()) + " -> " +
         std::to_string(s["result_cycles"].get<std::uint64_t>()) + " cycles (" + ratio + "x), stopped: " +
         s["stopped"].get<std::string>();
}

}  // namespace

void print_pipeline(std::ostream& out, const nlohmann::json& j) {
  out << j["model"].get<std::string>() << " on " << j["pipeline"]["chips"] << " x " << j["machine"].get<std::string>()
      << " (" << j["pipeline"]["plan"].get<std::string>() << ")\n";
  for (const auto& s : j["pipeline"]["stages"])
    out << "stage on chip " << s["chip"] << ": layers " << s["first_layer"] << "-"
        << s["first_layer"].get<int>() + s["layers"].get<int>() - 1 << (s["embeds"].get<bool>() ? " + embedding" : "")
        << (s["pools"].get<bool>() ? " + head" : "") << ", " << s["estimated_cycles"] << " cycles, SRAM peak "
        << s["peak_tile_bytes"] << " B per tile"
        << (s.contains("gemm_tile_bytes_cap")
                ? " (GEMM grids under a " + std::to_string(s["gemm_tile_bytes_cap"].get<std::uint64_t>()) + " B cap to fit)"
                : std::string())
        << (s.contains("search") ? search_text(s["search"]) : std::string()) << "\n";
  for (const auto& l : j["pipeline"]["links"])
    out << "link chip " << l["from_chip"] << " -> " << l["to_chip"] << ": " << l["bytes"] << " B, " << l["cycles"]
        << " cycles (latency " << l["latency_cycles"] << ", uncalibrated)\n";
  const auto& p = j["pipeline"];
  char line[512];
  std::snprintf(line, sizeof line,
                "latency of one micro-batch (batch %d): %llu cycles = %.3f ms (links %.2f%%)\n"
                "one call of %s, %s: %llu cycles = %.3f ms, %.1f images/s\n"
                "streaming without end: one micro-batch every %llu cycles (stage %u the slowest), %.1f images/s\n",
                j["batch"].get<int>(), (unsigned long long)p["latency_cycles"].get<std::uint64_t>(),
                p["latency_ms"].get<double>(), 100 * p["link_share"].get<double>(),
                count_text(p["micro_batches"].get<std::uint64_t>(), "micro-batch", "micro-batches").c_str(),
                count_text(p["images_per_call"].get<std::uint64_t>(), "image", "images").c_str(),
                (unsigned long long)p["makespan_cycles"].get<std::uint64_t>(), p["makespan_ms"].get<double>(),
                p["call_images_per_second"].get<double>(), (unsigned long long)p["interval_cycles"].get<std::uint64_t>(),
                p["bottleneck_stage"].get<unsigned>(), p["throughput_images_per_second"].get<double>());
  out << line;
  if (!p.contains("heuristic")) return;
  const auto& h = p["heuristic"];
  std::snprintf(line, sizeof line,
                "with the heuristic plan per stage: latency %llu cycles, one call %llu cycles, interval %llu cycles, "
                "%.1f images/s streaming\n",
                (unsigned long long)h["latency_cycles"].get<std::uint64_t>(),
                (unsigned long long)h["makespan_cycles"].get<std::uint64_t>(),
                (unsigned long long)h["interval_cycles"].get<std::uint64_t>(), h["throughput_images_per_second"].get<double>());
  out << line;
}

// The pipeline compiled for `model`: balanced and searched, or pinned by `plan_file`.
system::CompiledPipeline compile_for(const ModelOptions& model, const std::string& machine_option,
                                     const compiler::CompileOptions& options, const system::StageSearchOptions& search,
                                     const std::string& plan_file) {
  const target::MachineDescription machine = target::machine_from_option(machine_option);
  const model::ViTConfig config = model.config();
  const auto pinned = plan_file.empty() ? std::vector<system::StagePlan>{}
                                        : system::read_pipeline_plan_file(plan_file, config, machine);
  progress("compiling " + config.name + " (" + layers_text(config.layers) + ", batch " + std::to_string(config.batch) +
           ") as a pipeline over " + std::to_string(machine.system.chips) + " x " + machine.name);
  return job::compile_pipeline_planned(config, model.numerics(), machine, options, search, pinned, plan_file);
}

// --optimization-report on a pipeline: one plan search report per stage, in pipeline order.
void write_search_report(const std::string& file, const system::CompiledPipeline& p) {
  if (file.empty()) return;
  nlohmann::json stages = nlohmann::json::array();
  for (const system::PipelineStage& s : p.stages) stages.push_back(s.search ? s.search->report : nlohmann::json(nullptr));
  write_text_atomically(file, nlohmann::json{{"stages", stages}}.dump(1) + "\n");
}

nlohmann::json describe(const system::CompiledPipeline& p, const std::string& sha) {
  const model::ViTConfig& c = p.stages.front().executable.config;
  return {{"model", c.name},         {"parameters", c.parameter_count()}, {"layers", c.layers},
          {"batch", c.batch},        {"machine", p.machine.name},         {"package_sha256", sha},
          {"pipeline", system::pipeline_json(p)}};
}

void check_micro_batches(std::uint32_t micro_batches, int batch) {
  const std::string problem = system::micro_batches_problem(micro_batches, batch);
  if (!problem.empty()) throw Error("--" + problem, kExitUsage);
}

const char* const kMicroBatchesHelp =
    "a machine of several chips: one call carries K x --batch images, streamed through the pipeline as K micro-batches "
    "of --batch (K 1..64, K x batch at most 64; recorded in the package: run --package takes the package's K)";

void refuse_micro_batches_on_one_chip() {
  throw Error("--micro-batches: the machine has one chip, no pipeline to stream micro-batches through (give --batch, "
              "or a machine of several chips, e.g. --machine c600x2)",
              kExitUsage);
}

bool is_pipeline_machine(const std::string& machine_option) {
  return target::machine_from_option(machine_option).system.chips > 1;
}

bool is_pipeline_package(const std::string& package_file) {
  if (package_file.empty()) return false;
  try {
    return system::is_pipeline(package::Container::open(package_file));
  } catch (const Error&) {
    return false;  // not a package at all: the one-chip path reports it, after its flag checks
  }
}

int compile_pipeline_command(const PipelineCompileRequest& r) {
  const auto t0 = std::chrono::steady_clock::now();
  check_micro_batches(r.micro_batches, r.model.config().batch);
  system::CompiledPipeline p = compile_for(r.model, r.machine_option, r.options, r.search, r.plan_file);
  p.micro_batches = r.micro_batches;
  write_search_report(r.search_report_file, p);
  if (!r.write_plan.empty()) write_text_atomically(r.write_plan, system::pipeline_plan_file_text(p));
  const auto bytes = system::encode_pipeline(p).bytes();
  if (!r.package_file.empty()) write_bytes_atomically(r.package_file, bytes);
  nlohmann::json j = describe(p, package::sha256_hex(bytes));
  j["package_bytes"] = bytes.size();
  if (!r.package_file.empty()) j["package"] = r.package_file;
  if (!r.plan_file.empty()) j["plan"] = r.plan_file;
  if (!r.write_plan.empty()) j["plan_written"] = r.write_plan;
  j["compile_seconds"] = since(t0);
  j["model_validation"] = target::model_validation_json();
  std::ostream& out = r.package_file == "-" ? std::cerr : std::cout;
  if (r.json) {
    out << (r.package_file == "-" ? j.dump() : j.dump(1)) << "\n";  // on stderr: its only line
    return kExitOk;
  }
  print_pipeline(out, j);
  if (!r.package_file.empty()) out << "package: " << r.package_file << "\n";  // as a one-chip compile
  out << "package_sha256: " << j["package_sha256"].get<std::string>() << "\n";
  out << target::model_validation_line() << "\n";
  return kExitOk;
}

}  // namespace tilevit::cli
