// tilevit run: the main job. Compile (or load) a package, keep the weights resident on
// the device model, make N calls (image in, embedding out), check each embedding against
// the FP32 reference: on a machine of one chip or, stage by stage, of several (in one
// process or over MPI ranks). The job itself is job::run_job; here are the flags, the
// package to run, and what is printed (run_report).
#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <vector>

#include "cli/command.hpp"
#include "cli/model_options.hpp"
#include "cli/package_flags.hpp"
#include "cli/pipeline_commands.hpp"
#include "cli/plan_search_flags.hpp"
#include "cli/profile_options.hpp"
#include "cli/run_report.hpp"
#include "cli/validators.hpp"
#include "compiler/compile.hpp"
#include "device/device.hpp"
#include "distributed/mpi_pipeline.hpp"
#include "job/run_job.hpp"
#include "mpi/mpi_world.hpp"
#include "package/verified_package.hpp"
#include "profile/profile_file.hpp"
#include "support/atomic_file.hpp"
#include "support/error.hpp"
#include "system/pipeline_device.hpp"
#include "system/pipeline_package.hpp"
#include "target/machine.hpp"

namespace tilevit::cli {
namespace {

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// "test16", or "2 x test16" for a machine of several chips.
std::string machine_text(const target::MachineDescription& m) {
  return m.system.chips > 1 ? std::to_string(m.system.chips) + " x " + m.name : m.name;
}

struct RunCommand {
  ModelOptions model;
  ProfileFlags profiling;
  SearchFlags search;
  std::string machine_file, package_file, plan_file, lock_file, out_dir = "tilevit-out", save_embeddings;
  std::uint32_t stream_words = compiler::kDefaultStreamWords;
  std::optional<std::uint32_t> micro_batches;
  int inferences = 3;
  double lock_timeout = 60, threshold = 0.99;
  bool json = false, reference_fp32 = true, check_numerics = false, time_reference = false, mpi = false;

  CLI::App* app_ = nullptr;

  CommandAction setup(CLI::App& app) {
    app_ = &app;
    model.add_to(app);
    app.add_option("--machine", machine_file, "machine description (default: the embedded C600)");
    app.add_option("--micro-batches", micro_batches, kMicroBatchesHelp);
    app.add_option("--exchange-stream-words", stream_words, "exchange waves of at most W words")
        ->check(CLI::Range(compiler::kMinStreamWords, compiler::kMaxStreamWords))
        ->capture_default_str();
    app.add_option("--package", package_file, "run this package instead of compiling");
    app.add_option("--plan", plan_file, "compile with every GEMM and attention grid from this plan file");
    app.add_option("--inferences", inferences, "resident calls (weights uploaded once)")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
    app.add_flag("--reference-fp32,!--no-reference", reference_fp32, "check each embedding against the FP32 reference")
        ->capture_default_str();
    app.add_flag("--time-reference", time_reference,
                 "time an FP32 reference forward pass right before every call (same process and threads) and "
                 "report both medians and their ratio");
    app.add_flag("--check-numerics", check_numerics,
                 "also compare with the device-numerics reference computed with the package's GEMM and attention "
                 "splits (tilevit reference --package P): the embeddings must be bit for bit equal");
    CLI::Option* lock = app.add_option("--device-lock", lock_file, "advisory lock file held while the device is used");
    app.add_option("--lock-timeout", lock_timeout, "seconds to wait for the device lock")
        ->check(finite_real(0, 1e9))
        ->needs(lock)
        ->capture_default_str();
    app.add_option("--out", out_dir, "output directory (one run at a time; run.json lists every output's SHA-256)")
        ->capture_default_str();
    app.add_option("--save-embeddings", save_embeddings, "also write the last call's embeddings as .npy [batch, width] (per-token outputs: [batch, tokens, width])");
    app.add_option("--min-cosine", threshold,
                   "pass threshold: every cosine must be above it (run.json: min_cosine_threshold)")
        ->check(finite_real(0, 1, true))
        ->capture_default_str();
    app.add_flag("--json", json, "print one JSON object");
    app.add_option("--compare-with", compare_with,
                   "also write compare.html beside model.html: this run (B) against this profile (A), e.g. an earlier "
                   "run's profile.tvprof (docs/VIEWERS.md)");
    app.add_flag("--mpi", mpi,
                 "a machine of several chips over MPI ranks, one per chip or run of chips (under mpirun; "
                 "taken without the flag when mpirun started the process)");
    profiling.add_to(app, true);
    search.add_to(app);
    return [this] { return run(); };
  }

  // What a package records is fixed when it is compiled: a flag asking otherwise is an error.
  void check_profiling_flags(const compiler::ProfilingOptions& built, const compiler::ProfilingOptions& asked) const {
    if (!profiling.given() || built == asked || (!built.enabled && !asked.enabled)) return;
    const auto& d = built.detail;
    const std::string iterations = d.iterations_in_detail == UINT32_MAX ? "all" : std::to_string(d.iterations_in_detail);
    throw Error(package_file + ": built " +
                    (built.enabled ? "with --profile-granularity " + std::string(compiler::to_string(d.granularity)) +
                                         " --profile-iterations " + iterations
                                   : std::string("without profiling")) +
                    ": the profiling flags cannot change it (recompile, or drop the flags)",
                kExitUsage);
  }

  // Everything that can be checked before long work, alike for one chip and several:
  // flag conflicts, outputs writable.
  void check_flags() const {
    profiling.check_consistent();
    if (save_embeddings == "-")
      throw Error("--save-embeddings -: standard output carries the report (the embeddings are in --out)", kExitUsage);
    if (!save_embeddings.empty()) check_output_writable(save_embeddings, out_dir);  // --out is created first
    if (search.report_file == "-")
      throw Error("--optimization-report -: standard output carries the run's report (give a file)", kExitUsage);
    search.check(!plan_file.empty());
    if (!reference_fp32 && app_->count("--min-cosine"))
      throw Error("--min-cosine with --no-reference: without the FP32 reference no cosine is checked (drop one)",
                  kExitUsage);
    if (!package_file.empty() && !plan_file.empty())
      throw Error("--plan with --package: a package's grids are fixed when it is compiled (drop one)", kExitUsage);
    if (!package_file.empty() && search.asked())
      throw Error("--optimization-steps or --optimization-report with --package: a package's plan is fixed when it "
                  "is compiled (drop one)",
                  kExitUsage);
  }

  // What a package fixes, alike for one chip and several (issue 34, item 1): the model
  // flags, the machine, W. `first`: the package, or a pipeline's first stage.
  void check_package_flags(const compiler::Executable& first, const target::MachineDescription& machine) const {
    check_model_flags_match(model, first, package_file);
    if (app_->count("--machine")) {
      const auto asked = target::machine_from_option(machine_file);
      require_same(package_file, "--machine",
                   machine_text(asked) + (asked == machine ? "" : " (as in " + machine_file + ")"), machine_text(machine));
    }
    if (app_->count("--exchange-stream-words"))
      require_same(package_file, "--exchange-stream-words", std::to_string(stream_words),
                   std::to_string(first.program.exchange_stream_words));
  }

  // Files the run reads: never removed as an earlier run's outputs.
  std::vector<std::string> inputs() const {
    std::vector<std::string> files = {package_file, plan_file, model.weights};
    files.insert(files.end(), model.images.begin(), model.images.end());
    return files;
  }

  // The job on a package made ready, then its verdict as the exit code.
  int execute(job::RunPackage& package, const model::ViTWeights& weights, const std::vector<std::vector<float>>& images,
              job::OutputDirectory* out, const std::function<std::unique_ptr<device::Runner>()>& make_runner, int ranks,
              bool reports) {
    job::RunSettings s;
    s.inferences = inferences;
    s.threshold = threshold;
    s.reference_fp32 = reference_fp32;
    s.check_numerics = check_numerics;
    s.time_reference = time_reference;
    s.save_embeddings = save_embeddings;
    s.device_lock = lock_file;
    s.lock_timeout = lock_timeout;
    s.reports = reports;
    s.progress = progress;
    if (compare_profile_) s.compare_with = &*compare_profile_, s.compare_with_name = compare_with;
    const std::string seed = std::to_string(model.seed);
    const RunEcho echo{!model.model_dir.empty()  ? model.model_dir
                       : model.weights.empty() ? "random test model, seed " + seed
                                               : model.weights,
                       model.images.empty() ? nlohmann::json("random, seed " + seed) : nlohmann::json(model.images),
                       model.seed, ranks};
    std::unique_ptr<RunPrinter> printer;
    if (reports) printer = std::make_unique<RunPrinter>(package, s, echo, *out, json);
    const job::RunReport report = job::run_job(package, s, {weights, images}, make_runner, out, printer.get());
    return report.verdict == job::Verdict::fail ? kExitFailure : kExitOk;
  }

  // A machine of one chip.
  int run_one_chip(const compiler::ProfilingOptions& profiling_options) {
    if (mpi) throw Error("--mpi: the machine has one chip (give a machine of several, e.g. --machine c600x2)", kExitUsage);
    if (micro_batches) refuse_micro_batches_on_one_chip();
    if (mpi::mpirun_ranks() > 1)
      throw Error("mpirun -np " + std::to_string(mpi::mpirun_ranks()) +
                      ": the machine has one chip, run in one process (drop mpirun, or give a machine of several chips "
                      "with --mpi)",
                  kExitUsage);
    job::OutputDirectory out(out_dir, inputs());
    job::RunPackage package;
    if (!package_file.empty()) {  // loaded and verified; the flags given must match it
      auto loaded = package::load_verified_package(package_file);
      check_profiling_flags(loaded.contents.program.profiling, profiling_options);
      check_package_flags(loaded.contents, loaded.contents.machine);
      chip_ = std::move(loaded.contents);
      package.path = package_file;
      package.sha256 = loaded.sha256;
    }
    const model::ViTConfig config = chip_ ? chip_->config : model.config();
    if (!model.images.empty() && static_cast<int>(model.images.size()) != config.batch)
      throw Error("the package takes " + std::to_string(config.batch) + " images per call; " +
                      std::to_string(model.images.size()) + " --image given",
                  kExitUsage);
    const auto images = model.load_images(config);
    progress("loading weights");
    const model::ViTWeights weights = model.load_weights(config);  // checked before the compile
    if (!chip_) {  // compiled into --out, then loaded and verified from there: the package must stand alone
      const auto t0 = std::chrono::steady_clock::now();
      const auto machine = target::machine_from_option(machine_file);
      progress("compiling " + config.name + " (" + layers_text(config.layers) + ", batch " +
               std::to_string(config.batch) + ") for " + machine.name);
      const PlannedCompile planned = compile_planned(compiler::build_vit_graph(config, model.numerics()), machine,
                                                     {compiler::Plan{{}, stream_words}, profiling_options}, plan_file, search);
      package.path = out.output("model.tvpkg");
      write_bytes_atomically(package.path, package::encode_package(planned.compiled.executable).bytes());
      package.compile_seconds = since(t0);
      package.written_here = true;
      package.optimization = planned.report;
      auto loaded = package::load_verified_package(package.path);
      chip_ = std::move(loaded.contents);
      package.sha256 = loaded.sha256;
    }
    package.chip = &*chip_;
    package.plan_origin = job::plan_origin(package.optimization, plan_file, package_file);
    return execute(package, weights, images, &out, [&] { return std::make_unique<device::Device>(*chip_); }, 1, true);
  }

  // A machine of several chips, or a pipeline's package, before any work: what every
  // rank checks alike (an error here ends each rank on its own). The chips of the run.
  std::uint32_t check_several(const mpi::World* world) {

    std::uint32_t chips = 0;
    if (!package_file.empty()) {
      if (app_->count("--machine")) require_pipeline_package(package_file, machine_file);
      auto loaded = system::load_pipeline(package_file);
      pipeline_ = std::move(loaded.pipeline);
      check_profiling_flags(pipeline_->stages.front().executable.program.profiling, profiling.options());
      check_package_flags(pipeline_->stages.front().executable, pipeline_->machine);
      if (micro_batches)
        require_same(package_file, "--micro-batches", std::to_string(*micro_batches),
                     std::to_string(pipeline_->micro_batches));
      package_sha_ = loaded.sha256;
      chips = pipeline_->machine.system.chips;
    } else {
      check_micro_batches(micro_batches.value_or(1), model.config().batch);
      chips = target::machine_from_option(machine_file).system.chips;
    }
    distributed::chips_of_rank(world ? world->rank() : 0, world ? world->size() : 1, chips);
    return chips;
  }

  // The pipeline stage by stage, in this process or over MPI ranks (docs/SCALE_OUT.md):
  // rank 0 compiles into --out, every rank reads that package back (all run the same
  // bytes); rank 0 computes the references and reports.
  int run_several(const mpi::World* world, std::uint32_t chips) {
    const int rank = world ? world->rank() : 0, ranks = world ? world->size() : 1;
    std::unique_ptr<job::OutputDirectory> out;
    if (rank == 0) out = std::make_unique<job::OutputDirectory>(out_dir, inputs());
    job::RunPackage package;
    // Rank 0's host references need the whole model; every other rank only its stages.
    const bool references = rank == 0 && (reference_fp32 || check_numerics);
    std::optional<model::ViTWeights> weights;
    if (!pipeline_) {
      const model::ViTConfig config = model.config();
      if (references || !world) progress("loading weights"), weights = model.load_weights(config);  // before the compile
      package.path = out ? out->output("model.tvpkg") : out_dir + "/model.tvpkg";
      std::vector<std::optional<system::StageSearch>> searches;  // of the stages compiled here
      std::string plan;
      if (out) {
        const auto t0 = std::chrono::steady_clock::now();
        system::CompiledPipeline p =
            compile_for(model, machine_file, {compiler::Plan{{}, stream_words}, profiling.options(), {}},
                        search.for_stages(!plan_file.empty()), plan_file);
        p.micro_batches = micro_batches.value_or(1);
        write_bytes_atomically(package.path, system::encode_pipeline(p).bytes());
        write_search_report(search.report_file, p);
        for (const system::PipelineStage& s : p.stages) searches.push_back(s.search);
        plan = p.plan;
        package.compile_seconds = since(t0);
        package.written_here = true;
      }
      if (world) world->barrier();  // the package is written before any other rank reads it
      auto loaded = system::load_pipeline(package.path);
      pipeline_ = std::move(loaded.pipeline);
      package_sha_ = loaded.sha256;
      if (!plan.empty()) pipeline_->plan = plan;  // what the package does not record, known here
      for (std::size_t s = 0; s < searches.size() && s < pipeline_->stages.size(); ++s)
        pipeline_->stages[s].search = searches[s];
    } else {
      package.path = package_file;
    }
    package.sha256 = package_sha_;
    package.pipeline = &*pipeline_;
    package.plan_origin = pipeline_->plan;
    const system::CompiledPipeline& p = *pipeline_;
    const model::ViTConfig& config = p.stages.front().executable.config;
    const auto images = model.load_images(config, std::size_t(config.batch) * p.micro_batches);
    const auto [first_chip, end_chip] = distributed::chips_of_rank(rank, ranks, chips);
    if (!weights)
      weights = model.load_weights(config, references ? model::WeightPart{} : system::weights_of_chips(p, first_chip, end_chip));
    progress("rank " + std::to_string(rank) + " of " + std::to_string(ranks) + ": chips " + std::to_string(first_chip) +
             " to " + std::to_string(end_chip - 1));
    auto make_runner = [&]() -> std::unique_ptr<device::Runner> {
      if (world) return std::make_unique<distributed::MpiPipelineRunner>(*world, p);
      return std::make_unique<system::PipelineDevice>(p, 0, chips);
    };
    return execute(package, *weights, images, out.get(), make_runner, ranks, rank == 0);
  }

  int run() {
    model.apply_threads();
    const compiler::ProfilingOptions profiling_options = profiling.options();  // bad flags fail before any work
    check_flags();
    if (!compare_with.empty()) {  // read before the output directory is cleared: it may hold the file
      if (!profiling_options.enabled)
        throw Error("--compare-with with --no-profile: the comparison needs this run's profile (drop one)", kExitUsage);
      compare_profile_ = profile::read_profile(compare_with);
    }
    if (!is_pipeline_machine(machine_file) && !is_pipeline_package(package_file)) return run_one_chip(profiling_options);
    if (!(mpi || mpi::started_by_mpirun())) return run_several(nullptr, check_several(nullptr));
    const mpi::World world;
    const std::uint32_t chips = check_several(&world);
    try {
      return run_several(&world, chips);
    } catch (const Error& e) {  // one rank's error must end every rank, not leave them waiting
      std::fprintf(stderr, "tilevit: error: %s\n", e.what());
      if (json && world.rank() == 0)
        std::cout << nlohmann::json{{"error", e.what()}, {"exit_code", e.exit_code()}}.dump() << std::endl;
      world.abort(e.exit_code());
    }
  }

  std::optional<compiler::Executable> chip_;             // what runs: one chip's package,
  std::optional<system::CompiledPipeline> pipeline_;     // or a pipeline's
  std::string package_sha_;
  std::string compare_with;
  std::optional<profile::Profile> compare_profile_;
};

RunCommand command;
const CommandRegistration registration("run", "compile, run N resident calls on the device model, check vs FP32",
                                       [](CLI::App& app) { return command.setup(app); });

}  // namespace
}  // namespace tilevit::cli
