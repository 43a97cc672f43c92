#include "cli/pipeline_commands.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/package_flags.hpp"
#include "cli/run_outputs.hpp"
#include "distributed/mpi_pipeline.hpp"
#include "formats/npy.hpp"
#include "package/verified_package.hpp"
#include "reference/compare.hpp"
#include "reference/forward.hpp"
#include "support/atomic_file.hpp"
#include "support/error.hpp"
#include "system/pipeline_device.hpp"
#include "system/pipeline_package.hpp"
#include "system/pipeline_plan_file.hpp"

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
  return system::compile_pipeline(config, model.numerics(), machine, options, search, pinned);
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

// The pipeline a run executes: the package given, or compiled by rank 0 into the output
// directory and read back from there by every rank (all run the same bytes).
struct RunPackage {
  system::CompiledPipeline pipeline;
  std::string sha, path;
};

// --micro-batches out of bounds for the batch: one line, exit 2, before any work.
void check_micro_batches(std::uint32_t micro_batches, int batch) {
  const std::string problem = system::micro_batches_problem(micro_batches, batch);
  if (!problem.empty()) throw Error("--" + problem, kExitUsage);
}

}  // namespace

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
  std::ostream& out = r.package_file == "-" ? std::cerr : std::cout;
  if (r.json) {
    out << (r.package_file == "-" ? j.dump() : j.dump(1)) << "\n";  // on stderr: its only line
    return kExitOk;
  }
  print_pipeline(out, j);
  if (!r.package_file.empty()) out << "package: " << r.package_file << "\n";  // as a one-chip compile
  out << "package_sha256: " << j["package_sha256"].get<std::string>() << "\n";
  return kExitOk;
}

namespace {

RunPackage pipeline_for_run(const PipelineRunRequest& r, const OutputDirectory* out, const mpi::World* mpi) {
  std::string path = r.package_file;
  std::vector<std::optional<system::StageSearch>> searches;  // of the stages compiled here
  std::string plan;
  if (path.empty()) {
    path = out ? out->path("model.tvpkg") : r.out_dir + "/model.tvpkg";
    if (out) {  // rank 0, or the only process
      system::CompiledPipeline p = compile_for(r.model, r.machine_option, r.options, r.search, r.plan_file);
      p.micro_batches = r.micro_batches.value_or(1);
      write_bytes_atomically(path, system::encode_pipeline(p).bytes());
      write_search_report(r.search_report_file, p);
      for (const system::PipelineStage& s : p.stages) searches.push_back(s.search);
      plan = p.plan;
    }
    if (mpi) mpi->barrier();  // the package is written before any other rank reads it
  }
  auto loaded = system::load_pipeline(path);
  if (!plan.empty()) loaded.pipeline.plan = plan;  // what the package does not record, known here
  for (std::size_t s = 0; s < searches.size() && s < loaded.pipeline.stages.size(); ++s)
    loaded.pipeline.stages[s].search = searches[s];
  return {std::move(loaded.pipeline), loaded.sha256, path};
}

// Rank 0's checks and outputs of the calls.
struct CallsReport {
  nlohmann::json calls = nlohmann::json::array();
  std::vector<double> cosines;
  std::vector<float> last;
  bool passed = true, identical = true;
};

void check_call(CallsReport& report, const std::vector<float>& output, const std::vector<float>& fp32,
                const model::ViTConfig& config, const PipelineRunRequest& r, nlohmann::json call) {
  if (!report.last.empty()) report.identical &= output == report.last;
  report.last = output;
  bool finite = true;
  for (float v : output) finite &= std::isfinite(v);
  report.passed &= finite;
  call["finite"] = finite;
  if (r.reference_fp32) {
    const auto cmp = reference::compare_embeddings(output, fp32, config.output_values_per_image());
    call["cosines"] = cmp.cosines;  // one per image of the call, micro-batch after micro-batch
    for (double c : cmp.cosines) report.cosines.push_back(c), report.passed &= c > r.threshold;
  }
  report.calls.push_back(call);
}

// A call's cycles as rank 0 reports them: the makespan and the first micro-batch's end
// (maxima over the ranks: the last chip's), the images and their rate.
nlohmann::json call_json(int index, const system::PipelineCallResult& result, const mpi::World* mpi,
                         const system::CompiledPipeline& p) {
  const std::uint64_t cycles = mpi ? mpi->max(result.clock) : result.clock;
  const std::uint64_t first = mpi ? mpi->max(result.first_clock) : result.first_clock;
  const double seconds = double(cycles) / double(p.machine.clock_hz);
  const std::uint64_t images = std::uint64_t(p.stages.front().executable.config.batch) * p.micro_batches;
  return {{"call", index},
          {"images", images},
          {"device_cycles", cycles},
          {"device_ms", seconds * 1e3},
          {"images_per_second", seconds > 0 ? double(images) / seconds : 0.0},
          {"first_micro_batch_cycles", first},
          {"host_seconds_rank0", result.host_seconds}};
}

// The chips of the run, after what every rank checks alike before any work:
// --micro-batches against the batch, or against the package given.
std::uint32_t chips_of_run(const PipelineRunRequest& r) {
  if (r.package_file.empty()) {
    check_micro_batches(r.micro_batches.value_or(1), r.model.config().batch);
    return target::machine_from_option(r.machine_option).system.chips;
  }
  require_pipeline_package(r.package_file, r.machine_option);
  const system::CompiledPipeline p = system::load_pipeline(r.package_file).pipeline;
  if (r.micro_batches)
    require_same(r.package_file, "--micro-batches", std::to_string(*r.micro_batches), std::to_string(p.micro_batches));
  return p.machine.system.chips;
}

int run_on_ranks(const PipelineRunRequest& r, const mpi::World* mpi, std::uint32_t chips) {
  const int rank = mpi ? mpi->rank() : 0, ranks = mpi ? mpi->size() : 1;
  const auto [first_chip, end_chip] = distributed::chips_of_rank(rank, ranks, chips);
  std::unique_ptr<OutputDirectory> out;
  if (rank == 0) out = std::make_unique<OutputDirectory>(r.out_dir);
  const RunPackage package = pipeline_for_run(r, out.get(), mpi);
  const system::CompiledPipeline& p = package.pipeline;
  const model::ViTConfig& config = p.stages.front().executable.config;
  const auto images = r.model.load_images(config, std::size_t(config.batch) * p.micro_batches);
  // Rank 0's host references need the whole model; every other rank only its stages.
  const bool references = rank == 0 && (r.reference_fp32 || r.check_numerics);
  const model::ViTWeights weights =
      r.model.load_weights(config, references ? model::WeightPart{} : system::weights_of_chips(p, first_chip, end_chip));
  std::vector<float> fp32, numerics_ref;
  if (rank == 0 && r.reference_fp32) progress("FP32 reference"), fp32 = reference::forward_fp32(weights, images);
  if (rank == 0 && r.check_numerics)
    numerics_ref =
        reference::DeviceNumericsModel(weights, system::pipeline_numerics(p), system::pipeline_layer_numerics(p))
            .forward(images);

  progress("rank " + std::to_string(rank) + " of " + std::to_string(ranks) + ": chips " + std::to_string(first_chip) + " to " +
           std::to_string(end_chip - 1) + ", uploading weights");
  system::PipelineDevice dev(p, first_chip, end_chip);
  dev.upload_weights(weights);
  std::unique_ptr<distributed::MpiBoundary> boundary;
  if (mpi) boundary = std::make_unique<distributed::MpiBoundary>(*mpi, chips);
  const int last_rank = distributed::rank_of_chip(chips - 1, ranks, chips);
  const std::size_t output_values = config.output_values_per_image() * images.size();
  CallsReport report;
  for (int i = 0; i < r.inferences; ++i) {
    progress("pipeline: call " + std::to_string(i + 1) + " of " + std::to_string(r.inferences));
    const auto result = dev.run(images, boundary.get());
    const nlohmann::json call = call_json(i, result, mpi, p);
    const std::vector<float> output = mpi ? distributed::output_to_rank0(*mpi, result.output, last_rank, output_values) : result.output;
    if (rank == 0) check_call(report, output, fp32, config, r, call);
  }
  if (rank != 0) return kExitOk;

  nlohmann::json j = describe(p, package.sha);
  j["package"] = package.path;
  j["ranks"] = ranks;
  j["weights"] = r.model.weights.empty() ? "random test model, seed " + std::to_string(r.model.seed) : r.model.weights;
  j["calls"] = report.calls;
  j["device_cycles"] = report.calls[0]["device_cycles"];
  j["cycles_match_model"] = report.calls[0]["device_cycles"] == j["pipeline"]["makespan_cycles"] &&
                            report.calls[0]["first_micro_batch_cycles"] == j["pipeline"]["latency_cycles"];
  j["identical_across_calls"] = report.identical;
  j["cosines"] = report.cosines;
  j["min_cosine"] = report.cosines.empty() ? nlohmann::json(nullptr)
                                           : nlohmann::json(*std::min_element(report.cosines.begin(), report.cosines.end()));
  bool passed = report.passed && report.identical && j["cycles_match_model"].get<bool>();
  if (r.check_numerics) {
    j["bit_exact_vs_device_numerics"] = report.last == numerics_ref;
    passed &= report.last == numerics_ref;
  }
  j["passed"] = passed;
  j["outputs"] = nlohmann::json::object();
  if (r.package_file.empty()) OutputDirectory::record(j["outputs"], "model.tvpkg", package.path);
  std::vector<std::int64_t> shape = config.output_shape();
  shape[0] = std::int64_t(images.size());  // every micro-batch of the call
  formats::write_npy(out->path("embeddings.npy"), shape, report.last);
  OutputDirectory::record(j["outputs"], "embeddings.npy", out->path("embeddings.npy"));
  if (!r.save_embeddings.empty()) formats::write_npy(r.save_embeddings, shape, report.last);
  write_text_atomically(out->path("run.json"), j.dump(1) + "\n");
  if (r.json) {
    std::cout << j.dump(1) << "\n";
  } else {
    print_pipeline(std::cout, j);
    for (const auto& c : j["calls"]) {
      std::printf("call %d: %llu images, %llu cycles = %.3f ms, %.1f images/s", c["call"].get<int>() + 1,
                  (unsigned long long)c["images"].get<std::uint64_t>(),
                  (unsigned long long)c["device_cycles"].get<std::uint64_t>(), c["device_ms"].get<double>(),
                  c["images_per_second"].get<double>());
      if (c.contains("cosines"))
        for (const auto& x : c["cosines"]) std::printf(", cosine %.9f", x.get<double>());
      std::printf("\n");
    }
    if (r.check_numerics)
      std::printf("device vs device-numerics reference: %s\n",
                  j["bit_exact_vs_device_numerics"].get<bool>() ? "bit for bit equal" : "DIFFERENT");
    std::printf("%s\n", passed ? "PASS" : "FAIL");
  }
  return passed ? kExitOk : kExitFailure;
}

}  // namespace

int run_pipeline_command(const PipelineRunRequest& r) {
  if (!(r.mpi || mpi::started_by_mpirun())) return run_on_ranks(r, nullptr, chips_of_run(r));
  const mpi::World mpi;
  // Errors every rank meets alike (the machine, the package, too many ranks) end each
  // rank on its own, with MPI finalised and the usual exit code.
  const std::uint32_t chips = chips_of_run(r);
  distributed::chips_of_rank(mpi.rank(), mpi.size(), chips);
  try {
    return run_on_ranks(r, &mpi, chips);
  } catch (const Error& e) {  // one rank's error must end every rank, not leave them waiting
    std::fprintf(stderr, "tilevit: error: %s\n", e.what());
    mpi.abort(e.exit_code());
  }
}

}  // namespace tilevit::cli
