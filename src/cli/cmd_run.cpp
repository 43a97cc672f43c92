// tilevit run: the main job. Compile (or load) a package, keep the weights resident on
// the device model, make N calls (image in, embedding out), check each embedding against
// the FP32 reference.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <functional>
#include <numeric>
#include <optional>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "cli/calibration_report.hpp"
#include "cli/command.hpp"
#include "cli/model_options.hpp"
#include "cli/package_flags.hpp"
#include "cli/pipeline_commands.hpp"
#include "cli/plan_search_flags.hpp"
#include "cli/profile_options.hpp"
#include "cli/run_outputs.hpp"
#include "cli/validators.hpp"
#include "compiler/compile.hpp"
#include "compiler/plan_file.hpp"
#include "device/device.hpp"
#include "profile/memory_html.hpp"
#include "profile/memory_map.hpp"
#include "profile/memory_map_json.hpp"
#include "profile/memory_png.hpp"
#include "profile/profile_file.hpp"
#include "profile/timeline_html.hpp"
#include "profile/trace.hpp"
#include "formats/npy.hpp"
#include "package/verified_package.hpp"
#include "reference/compare.hpp"
#include "reference/forward.hpp"
#include "support/atomic_file.hpp"
#include "support/error.hpp"
#include "support/median.hpp"
#include "support/threads.hpp"
#include "target/machine.hpp"

namespace tilevit::cli {
namespace {

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// An advisory lock on a file, held while the device model is in use.
class DeviceLock {
 public:
  DeviceLock(const std::string& path, double timeout_seconds) {
    if (path.empty()) return;
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw Error(path + ": cannot open device lock", kExitResource);
    const auto t0 = std::chrono::steady_clock::now();
    bool said = false;
    while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      if (since(t0) >= timeout_seconds) {
        ::close(fd_);
        throw Error(path + ": device lock held by another process for " + std::to_string(timeout_seconds) + " s",
                    kExitResource);
      }
      if (!said) progress("waiting for device lock " + path);
      said = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ~DeviceLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }

 private:
  int fd_ = -1;
};

struct RunCommand {
  ModelOptions model;
  ProfileFlags profiling;
  SearchFlags search;
  std::string machine_file, package_file, plan_file, lock_file, out_dir = "tilevit-out", save_embeddings;
  std::uint32_t stream_words = 1024;
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
    app.add_option("--exchange-stream-words", stream_words, "exchange waves of at most W words")->capture_default_str();
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
    app.add_flag("--mpi", mpi,
                 "a machine of several chips over MPI ranks, one per chip or run of chips (under mpirun; "
                 "taken without the flag when mpirun started the process)");
    profiling.add_to(app, true);
    search.add_to(app);
    return [this] { return run(); };
  }

  // The profile (when the package records one) and the memory map, next to run.json.
  // Written after the result: a viewer that cannot be written is a warning, never a lost run.
  void write_views(const OutputDirectory& out, const compiler::Executable& contents, const std::string& sha,
                   const model::ViTConfig& config, const std::string& plan, nlohmann::json& report) {
    nlohmann::json& files = report["outputs"];
    auto attempt = [&](const char* name, const std::function<void(const std::string&)>& write) {
      const std::string path = out.path(name);
      try {
        write(path);
        OutputDirectory::record(files, name, path);
        const auto bytes = files[name]["bytes"].get<std::uint64_t>();
        if (bytes > (std::uintmax_t{30} << 20) && std::filesystem::path(name).extension() == ".html")
          progress(std::string("warning: ") + name + " is " + std::to_string(bytes >> 20) +
                   " MiB: browsers open it slowly (fewer --profile-iterations or a coarser --profile-granularity)");
      } catch (const std::exception& e) {  // Error, or a viewer's own fault: the result stands
        progress(std::string("warning: ") + name + " not written: " + e.what());
        report["warnings"].push_back(std::string(name) + " not written: " + e.what());
      }
    };
    const auto& program = contents.program;
    if (program.profiling.enabled) {
      progress("writing profile, model.html, trace.json");
      auto p = profile::build_profile(contents.machine, program, program.profiling.detail);
      p.package_sha256 = sha;
      p.model = config.name + ", " + layers_text(config.layers) + ", batch " + std::to_string(config.batch);
      p.plan = plan;  // the viewers' header names it
      attempt("profile.tvprof", [&](const std::string& path) { profile::write_profile(path, p); });
      attempt("model.html", [&](const std::string& path) {
        write_text_atomically(path, profile::render_timeline_html(p, profile::peaks_of(p)));
      });
      attempt("trace.json", [&](const std::string& path) { write_text_atomically(path, profile::chrome_trace_json(p)); });
    } else {
      progress("the package was built without profiling (--no-profile): no profile, model.html or trace.json");
      for (const char* stale : {"profile.tvprof", "model.html", "trace.json"})
        std::filesystem::remove(out.path(stale));  // of an older run
    }
    progress("writing memory.json, memory.png, memory.html");
    const auto map = profile::build_memory_map(contents.machine, program, program.profiling.enabled);
    attempt("memory.json", [&](const std::string& path) {
      write_text_atomically(path, profile::to_json(map).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    });
    attempt("memory.png", [&](const std::string& path) { write_bytes_atomically(path, profile::render_memory_png(map)); });
    attempt("memory.html", [&](const std::string& path) { write_text_atomically(path, profile::render_memory_html(map)); });
  }

  // The package to run: --package (loaded and verified; the model flags given must match
  // it), or compiled for `config` and written to --out, then loaded and verified from
  // there: the package must stand alone.
  struct Loaded {
    compiler::Executable contents;
    std::string sha, path;
    double compile_seconds = 0;
    std::optional<nlohmann::json> optimization;  // the plan search's report
  };
  // Where the package's plan came from, in a few words: the search (and what it gained),
  // a plan file, a given package, or the heuristic. Not part of the profile's identity:
  // two runs of one package compare equal (profile diff).
  std::string plan_origin(const Loaded& package) const {
    if (package.optimization && package.optimization->at("steps").get<std::uint32_t>() > 0) {
      const auto& r = *package.optimization;
      char ratio[32];
      std::snprintf(ratio, sizeof ratio, "%.4f", r.at("result_vs_baseline").get<double>());
      return "searched, " + std::to_string(r.at("candidates_compiled").get<std::uint32_t>()) + " candidates, " + ratio +
             "x the heuristic plan's cycles" + (plan_file.empty() ? "" : ", from " + plan_file);
    }
    if (!plan_file.empty()) return "pinned by " + plan_file;
    if (!package_file.empty()) return "as compiled into " + package_file;
    return "heuristic (--optimization-steps 0)";
  }

  Loaded load_given_package(const compiler::ProfilingOptions& profiling_options) {
    if (!plan_file.empty())
      throw Error("--plan with --package: a package's grids are fixed when it is compiled (drop one)", kExitUsage);
    if (search.asked())
      throw Error("--optimization-steps or --optimization-report with --package: a package's plan is fixed when it "
                  "is compiled (drop one)",
                  kExitUsage);
    auto loaded = package::load_verified_package(package_file);
    const compiler::Executable& c = loaded.contents;
    check_profiling_flags(c.program.profiling, profiling_options);
    check_model_flags_match(model, c, package_file);
    if (app_->count("--machine")) {
      const auto machine = target::machine_from_option(machine_file);
      require_same(package_file, "--machine", machine.name + (machine == c.machine ? "" : " (as in " + machine_file + ")"),
                   c.machine.name);
    }
    if (app_->count("--exchange-stream-words"))
      require_same(package_file, "--exchange-stream-words", std::to_string(stream_words),
                   std::to_string(c.program.exchange_stream_words));
    return {std::move(loaded.contents), loaded.sha256, package_file, 0, std::nullopt};
  }
  Loaded compile_package(const model::ViTConfig& config, const compiler::ProfilingOptions& profiling_options,
                         const OutputDirectory& out) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto machine = target::machine_from_option(machine_file);
    progress("compiling " + config.name + " (" + layers_text(config.layers) + ", batch " +
             std::to_string(config.batch) + ") for " + machine.name);
    const PlannedCompile planned = compile_planned(compiler::build_vit_graph(config, model.numerics()), machine,
                                                   {stream_words, profiling_options}, plan_file, search);
    const auto& compiled = planned.compiled;
    const std::string path = out.path("model.tvpkg");
    write_bytes_atomically(path, package::encode_package(compiled.executable).bytes());
    const double seconds = since(t0);
    auto loaded = package::load_verified_package(path);
    return {std::move(loaded.contents), loaded.sha256, path, seconds, planned.report};
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

  // The calls: each timed, checked for finite values and against the FP32 reference.
  struct Calls {
    nlohmann::json report = nlohmann::json::array();
    std::vector<double> cosines;
    std::vector<float> last;
    bool passed = true, identical = true;
  };
  Calls run_calls(device::Device& dev, const model::ViTWeights& weights, const std::vector<std::vector<float>>& images,
                  const std::vector<float>& fp32, const model::ViTConfig& config, std::uint64_t clock_hz) {
    Calls out;
    std::vector<float> first;
    for (int i = 0; i < inferences; ++i) {
      // Interleaved with the calls, so that both see the same load on a shared machine.
      const double reference_ms = time_reference ? timed_reference(weights, images, fp32, i) : 0;
      progress("device: call " + std::to_string(i + 1) + " of " + std::to_string(inferences));
      device::CallTiming timing;
      out.last = dev.run(images, &timing);
      if (i == 0) first = out.last;
      out.identical &= out.last == first;
      nlohmann::json call{{"call", i},
                          {"device_cycles", timing.device_cycles},
                          {"device_ms", double(timing.device_cycles) / double(clock_hz) * 1e3},
                          {"host_ms", {{"upload", timing.upload_seconds * 1e3},
                                       {"execute", timing.execute_seconds * 1e3},
                                       {"download", timing.download_seconds * 1e3}}}};
      if (time_reference) call["reference_ms"] = reference_ms;
      bool finite = true;
      for (float v : out.last) finite &= std::isfinite(v);
      out.passed &= finite;
      call["finite"] = finite;
      if (reference_fp32) {
        const auto cmp = reference::compare_embeddings(out.last, fp32, config.output_values_per_image());
        call["cosines"] = cmp.cosines;
        for (double c : cmp.cosines) {
          out.cosines.push_back(c);
          out.passed &= c > threshold;
        }
      }
      out.report.push_back(call);
    }
    return out;
  }

  // One FP32 forward pass timed before call i (ms); it must equal the first one.
  double timed_reference(const model::ViTWeights& weights, const std::vector<std::vector<float>>& images,
                         const std::vector<float>& fp32,
                         int i) const {
    progress("FP32 reference, timed, before call " + std::to_string(i + 1));
    const auto r0 = std::chrono::steady_clock::now();
    const auto embedding = reference::forward_fp32(weights, images);
    const double ms = since(r0) * 1e3;
    if (reference_fp32 && embedding != fp32)  // the reference is deterministic: a difference is a fault
      throw Error("FP32 reference: the timed forward pass before call " + std::to_string(i + 1) + " differs from the first one",
                  kExitInternal);
    return ms;
  }

  // Host time per call, and with --time-reference the medians next to the reference's.
  void report_host_times(nlohmann::json& report, const nlohmann::json& calls) const {
    std::vector<double> host_ms;  // per call: upload + execute + download
    for (const auto& c : calls)
      host_ms.push_back(c["host_ms"]["upload"].get<double>() + c["host_ms"]["execute"].get<double>() +
                        c["host_ms"]["download"].get<double>());
    report["host_ms_per_call"] = std::accumulate(host_ms.begin(), host_ms.end(), 0.0) / inferences;
    if (!time_reference) return;
    std::vector<double> reference;
    for (const auto& c : calls) reference.push_back(c["reference_ms"].get<double>());
    const double host = median(host_ms), ref = median(reference);
    report["host_ms_median"] = host;
    report["reference_ms_median"] = ref;
    report["host_vs_reference"] = host / ref;
  }

  // Where the modelled cycles go, over all tiles: the totals of a whole-call profile.
  static nlohmann::json tile_activity_share(const compiler::Executable& contents) {
    const profile::Profile totals =
        profile::build_profile(contents.machine, contents.program, compiler::ProfileDetail{compiler::Granularity::graph, 0});
    nlohmann::json activity;
    const double tile_cycles = double(totals.span) * contents.machine.tiles;
    for (profile::SampleKind kind : {profile::SampleKind::compute, profile::SampleKind::idle, profile::SampleKind::sync,
                                     profile::SampleKind::exchange})
      activity[std::string(profile::to_string(kind))] = totals.tile_cycles[std::size_t(kind)] / tile_cycles;
    return activity;
  }

  void print_text(const nlohmann::json& report, const model::ViTConfig& config, const std::string& machine,
                  const std::string& coverage) const {
    std::printf("%s, %d layer%s, batch %d on %s; package %s\n", config.name.c_str(), config.layers,
                config.layers == 1 ? "" : "s", config.batch, machine.c_str(),
                report["package_sha256"].get<std::string>().substr(0, 16).c_str());
    for (const auto& c : report["calls"]) {
      std::printf("call %d of %d: device %llu cycles = %.3f ms; host upload %.1f ms, execute %.1f ms, download %.1f ms",
                  c["call"].get<int>() + 1, inferences, (unsigned long long)c["device_cycles"].get<std::uint64_t>(),
                  c["device_ms"].get<double>(), c["host_ms"]["upload"].get<double>(), c["host_ms"]["execute"].get<double>(),
                  c["host_ms"]["download"].get<double>());
      if (c.contains("cosines"))
        for (const auto& x : c["cosines"]) std::printf(", cosine %.9f", x.get<double>());
      std::printf("\n");
    }
    if (check_numerics)
      std::printf("device vs device-numerics reference (the package's splits): %s\n",
                  report["bit_exact_vs_device_numerics"].get<bool>() ? "bit for bit equal" : "DIFFERENT");
    if (time_reference)
      std::printf("host speed: call median %.1f ms, FP32 reference median %.1f ms (timed before each call), ratio %.2f\n",
                  report["host_ms_median"].get<double>(), report["reference_ms_median"].get<double>(),
                  report["host_vs_reference"].get<double>());
    const auto& activity = report["tile_activity_share"];
    std::printf("tile time: compute %.1f%%, idle %.1f%%, sync %.1f%%, exchange %.1f%%\n",
                100 * activity["compute"].get<double>(), 100 * activity["idle"].get<double>(),
                100 * activity["sync"].get<double>(), 100 * activity["exchange"].get<double>());
    std::printf("%s\n", coverage.c_str());
    if (!report["cosines"].empty())
      std::printf("min cosine %.9f (threshold %g)\n", report["min_cosine"].get<double>(), threshold);
    std::printf("%s\n", report["passed"].get<bool>() ? "PASS" : "FAIL");
    std::fflush(stdout);  // the verdict is out before the viewers are written
  }

  // Everything that can be checked before long work: flag conflicts, outputs writable.
  void check_flags() const {
    profiling.check_consistent();
    if (save_embeddings == "-")
      throw Error("--save-embeddings -: standard output carries the report (the embeddings are in --out)", kExitUsage);
    if (!save_embeddings.empty()) check_output_writable(save_embeddings, out_dir);  // --out is created first
    if (search.report_file == "-")
      throw Error("--optimization-report -: standard output carries the run's report (give a file)", kExitUsage);
    search.check(!plan_file.empty());
  }

  // What the run was asked to do, for run.json: enough to repeat it.
  nlohmann::json settings(const Loaded& package) const {
    const auto& c = package.contents;
    return {{"package", package.path},
            {"model", c.config.name},
            {"layers", c.config.layers},
            {"batch", c.config.batch},
            {"machine", c.machine.name},
            {"package_sha256", package.sha},
            {"numerics", c.numerics.describe()},
            {"weights", model.weights.empty() ? "random test model, seed " + std::to_string(model.seed) : model.weights},
            {"images", model.images.empty() ? nlohmann::json("random, seed " + std::to_string(model.seed))
                                            : nlohmann::json(model.images)},
            {"seed", model.seed},
            {"threads", host_threads()},
            {"min_cosine_threshold", threshold},
            {"compile_seconds", package.compile_seconds}};
  }

  // A machine of several chips, or a pipeline's package: stage by stage, in this process or
  // over MPI ranks (docs/SCALE_OUT.md).
  int run_pipeline() const {
    if (profiling.given() || time_reference || !lock_file.empty())
      throw Error("--profile-*, --time-reference, --device-lock: not for a machine of several chips", kExitUsage);
    if (!package_file.empty() && (search.asked() || !plan_file.empty()))
      throw Error("--plan, --optimization-steps or --optimization-report with --package: a package's plan is fixed "
                  "when it is compiled (drop one)",
                  kExitUsage);
    return run_pipeline_command({model, machine_file, package_file, out_dir, save_embeddings, {stream_words, {}, {}},
                                 inferences, threshold, reference_fp32, check_numerics, json, mpi, micro_batches,
                                 search.for_stages(!plan_file.empty()), search.report_file, plan_file});
  }

  int run() {
    model.apply_threads();
    const compiler::ProfilingOptions profiling_options = profiling.options();  // bad flags fail before any work
    check_flags();
    if (is_pipeline_machine(machine_file) || is_pipeline_package(package_file)) return run_pipeline();
    if (mpi) throw Error("--mpi: the machine has one chip (give a machine of several, e.g. --machine c600x2)", kExitUsage);
    if (micro_batches) refuse_micro_batches_on_one_chip();
    const OutputDirectory out(out_dir);
    // Inputs before long work: the package or the configuration to compile, the images.
    std::optional<Loaded> given;
    if (!package_file.empty()) given = load_given_package(profiling_options);
    const model::ViTConfig config = given ? given->contents.config : model.config();
    if (!model.images.empty() && static_cast<int>(model.images.size()) != config.batch)
      throw Error("the package takes " + std::to_string(config.batch) + " images per call; " +
                      std::to_string(model.images.size()) + " --image given",
                  kExitUsage);
    const auto images = model.load_images(config);
    const Loaded package = given ? std::move(*given) : compile_package(config, profiling_options, out);
    const compiler::Executable& contents = package.contents;

    progress("loading weights");
    const model::ViTWeights weights = model.load_weights(config);
    std::vector<float> fp32, numerics_ref;
    if (reference_fp32) {
      progress("FP32 reference");
      fp32 = reference::forward_fp32(weights, images);
    }
    if (check_numerics) {
      progress("device-numerics reference (the package's splits)");
      numerics_ref = reference::DeviceNumericsModel(weights, contents.numerics).forward(images);
    }

    const DeviceLock lock(lock_file, lock_timeout);
    progress("device: uploading weights");
    device::Device dev(contents);
    const auto t0 = std::chrono::steady_clock::now();
    dev.upload_weights(weights);
    const double weight_upload_seconds = since(t0);
    Calls calls = run_calls(dev, weights, images, fp32, config, contents.machine.clock_hz);

    nlohmann::json report = settings(package);
    if (package.optimization) report["optimization"] = *package.optimization;
    report["outputs"] = nlohmann::json::object();
    if (package.path == out.path("model.tvpkg")) OutputDirectory::record(report["outputs"], "model.tvpkg", package.path);
    formats::write_npy(out.path("embeddings.npy"), config.output_shape(), calls.last);
    OutputDirectory::record(report["outputs"], "embeddings.npy", out.path("embeddings.npy"));
    if (!save_embeddings.empty()) formats::write_npy(save_embeddings, config.output_shape(), calls.last);
    report["weight_upload_seconds"] = weight_upload_seconds;
    report["calls"] = calls.report;
    report["device_cycles"] = calls.report[0]["device_cycles"];
    report["device_ms"] = calls.report[0]["device_ms"];
    report_host_times(report, calls.report);
    report["identical_across_calls"] = calls.identical;
    report["tile_activity_share"] = tile_activity_share(contents);
    const auto coverage = compiler::calibration_coverage(contents.machine, contents.program);
    report["kernel_calibration"] = coverage_json(coverage);
    report["cosines"] = calls.cosines;
    report["min_cosine"] = calls.cosines.empty() ? nlohmann::json(nullptr)
                                                 : nlohmann::json(*std::min_element(calls.cosines.begin(), calls.cosines.end()));
    bool passed = calls.passed && calls.identical;
    if (check_numerics) {
      double max_diff = 0;
      for (std::size_t i = 0; i < calls.last.size(); ++i)
        max_diff = std::max(max_diff, double(std::fabs(calls.last[i] - numerics_ref[i])));
      report["bit_exact_vs_device_numerics"] = calls.last == numerics_ref;
      report["max_abs_diff_vs_device_numerics"] = max_diff;
      passed &= calls.last == numerics_ref;
    }
    report["passed"] = passed;
    report["warnings"] = nlohmann::json::array();
    // The result first (run.json, PASS/FAIL), then the viewers, then run.json again with them.
    const std::string run_json = out.path("run.json");
    write_text_atomically(run_json, report.dump(1) + "\n");
    if (!json) print_text(report, config, contents.machine.name, compiler::coverage_text(coverage));
    write_views(out, contents, package.sha, config, plan_origin(package), report);
    write_text_atomically(run_json, report.dump(1) + "\n");
    if (json) {
      std::cout << report.dump(1) << "\n";
      progress(compiler::coverage_text(coverage));
    }
    return passed ? kExitOk : kExitFailure;
  }
};

RunCommand command;
const CommandRegistration registration("run", "compile, run N resident calls on the device model, check vs FP32",
                                       [](CLI::App& app) { return command.setup(app); });

}  // namespace
}  // namespace tilevit::cli
