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
#include <numeric>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "cli/command.hpp"
#include "cli/model_options.hpp"
#include "cli/plan_search_flags.hpp"
#include "cli/profile_options.hpp"
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
  int inferences = 3;
  double lock_timeout = 60, threshold = 0.99;
  bool json = false, reference_fp32 = true, check_numerics = false, time_reference = false;

  CommandAction setup(CLI::App& app) {
    model.add_to(app);
    app.add_option("--machine", machine_file, "machine description (default: the embedded C600)");
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
                 "also compare with the device-numerics reference (must be bit for bit equal)");
    app.add_option("--device-lock", lock_file, "advisory lock file held while the device is used");
    app.add_option("--lock-timeout", lock_timeout, "seconds to wait for the device lock")->capture_default_str();
    app.add_option("--out", out_dir, "output directory")->capture_default_str();
    app.add_option("--save-embeddings", save_embeddings, "write the last call's embeddings as .npy [batch, width]");
    app.add_option("--min-cosine", threshold, "pass threshold")->capture_default_str();
    app.add_flag("--json", json, "print one JSON object");
    profiling.add_to(app, true);
    search.add_to(app);
    return [this] { return run(); };
  }

  // The profile (when the package records one) and the memory map, next to run.json.
  nlohmann::json write_views(const compiler::Executable& contents, const std::string& sha,
                             const model::ViTConfig& config) {
    namespace fs = std::filesystem;
    nlohmann::json files;
    auto out = [&](const char* name) { return (fs::path(out_dir) / name).string(); };
    auto note = [&](const char* name) {
      const auto bytes = fs::file_size(out(name));
      files[name] = {{"path", out(name)}, {"bytes", bytes}};
      if (bytes > (std::uintmax_t{30} << 20) && fs::path(name).extension() == ".html")
        progress(std::string("warning: ") + name + " is " + std::to_string(bytes >> 20) +
                 " MiB: browsers open it slowly (fewer --profile-iterations or a coarser --profile-granularity)");
    };
    const auto& program = contents.program;
    if (program.profiling.enabled) {
      progress("writing profile, model.html, trace.json");
      auto p = profile::build_profile(contents.machine, program,
                                      program.profiling.detail);
      p.package_sha256 = sha;
      p.model = config.name + ", " + std::to_string(config.layers) + " layers, batch " + std::to_string(config.batch);
      profile::write_profile(out("profile.tvprof"), p);
      note("profile.tvprof");
      write_text_atomically(out("model.html"), profile::render_timeline_html(p, profile::peaks_of(p)));
      note("model.html");
      write_text_atomically(out("trace.json"), profile::chrome_trace_json(p));
      note("trace.json");
    } else {
      progress("the package was built without profiling (--no-profile): no profile, model.html or trace.json");
      for (const char* stale : {"profile.tvprof", "model.html", "trace.json"}) fs::remove(out(stale));  // of an older run
    }
    progress("writing memory.json, memory.png, memory.html");
    const auto map = profile::build_memory_map(contents.machine, program, program.profiling.enabled);
    write_text_atomically(out("memory.json"), profile::to_json(map).dump() + "\n");
    note("memory.json");
    write_bytes_atomically(out("memory.png"), profile::render_memory_png(map));
    note("memory.png");
    write_text_atomically(out("memory.html"), profile::render_memory_html(map));
    note("memory.html");
    return files;
  }

  // The package to run: compiled from the model flags and written to --out, or --package.
  // Either way the written file is loaded and verified: the package must stand alone.
  struct Loaded {
    compiler::Executable contents;
    std::string sha, path;
    double compile_seconds = 0;
    std::optional<nlohmann::json> optimization;  // the plan search's report
  };
  Loaded obtain_package(const compiler::ProfilingOptions& profiling_options) {
    if (!package_file.empty()) {
      if (!plan_file.empty())
        throw Error("--plan with --package: a package's grids are fixed when it is compiled (drop one)", kExitUsage);
      if (search.searching())
        throw Error("--optimization-steps or --optimization-report with --package: a package's plan is fixed when it "
                    "is compiled (drop one)",
                    kExitUsage);
      auto loaded = package::load_verified_package(package_file);
      check_profiling_flags(loaded.contents.program.profiling, profiling_options);
      return {std::move(loaded.contents), loaded.sha256, package_file, 0, std::nullopt};
    }
    const auto t0 = std::chrono::steady_clock::now();
    const auto machine = machine_file.empty() ? target::c600() : target::load_machine(machine_file);
    const auto config = model.config();
    progress("compiling " + config.name + " (" + std::to_string(config.layers) + " layers, batch " +
             std::to_string(config.batch) + ") for " + machine.name);
    const PlannedCompile planned = compile_planned(compiler::build_vit_graph(config, model.numerics()), machine,
                                                   {stream_words, profiling_options}, plan_file, search);
    const auto& compiled = planned.compiled;
    const std::string path = (std::filesystem::path(out_dir) / "model.tvpkg").string();
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
        const auto cmp = reference::compare_embeddings(out.last, fp32, config.width);
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

  void print_text(const nlohmann::json& report, const model::ViTConfig& config, const std::string& machine) const {
    std::printf("%s, %d layers, batch %d on %s; package %s\n", config.name.c_str(), config.layers, config.batch,
                machine.c_str(), report["package_sha256"].get<std::string>().substr(0, 16).c_str());
    for (const auto& c : report["calls"]) {
      std::printf("call %d: device %llu cycles = %.3f ms; host upload %.1f ms, execute %.1f ms, download %.1f ms",
                  c["call"].get<int>(), (unsigned long long)c["device_cycles"].get<std::uint64_t>(),
                  c["device_ms"].get<double>(), c["host_ms"]["upload"].get<double>(), c["host_ms"]["execute"].get<double>(),
                  c["host_ms"]["download"].get<double>());
      if (c.contains("cosines"))
        for (const auto& x : c["cosines"]) std::printf(", cosine %.9f", x.get<double>());
      std::printf("\n");
    }
    if (check_numerics)
      std::printf("device vs device-numerics reference: %s\n",
                  report["bit_exact_vs_device_numerics"].get<bool>() ? "bit for bit equal" : "DIFFERENT");
    if (time_reference)
      std::printf("host speed: call median %.1f ms, FP32 reference median %.1f ms (timed before each call), ratio %.2f\n",
                  report["host_ms_median"].get<double>(), report["reference_ms_median"].get<double>(),
                  report["host_vs_reference"].get<double>());
    const auto& activity = report["tile_activity_share"];
    std::printf("tile time: compute %.1f%%, idle %.1f%%, sync %.1f%%, exchange %.1f%%\n",
                100 * activity["compute"].get<double>(), 100 * activity["idle"].get<double>(),
                100 * activity["sync"].get<double>(), 100 * activity["exchange"].get<double>());
    if (!report["cosines"].empty())
      std::printf("min cosine %.9f (threshold %.2f)\n", report["min_cosine"].get<double>(), threshold);
    std::printf("%s\n", report["passed"].get<bool>() ? "PASS" : "FAIL");
  }

  int run() {
    model.apply_threads();
    const compiler::ProfilingOptions profiling_options = profiling.options();  // bad flags fail before any work
    std::filesystem::create_directories(out_dir);
    const Loaded package = obtain_package(profiling_options);
    const compiler::Executable& contents = package.contents;
    const model::ViTConfig config = contents.config;  // the package decides the shape
    if (!model.images.empty() && static_cast<int>(model.images.size()) != config.batch)
      throw Error("the package takes " + std::to_string(config.batch) + " images per call; " +
                      std::to_string(model.images.size()) + " --image given",
                  kExitUsage);

    progress("loading weights");
    const model::ViTWeights weights = model.load_weights(config);
    const auto images = model.load_images(config);
    std::vector<float> fp32, numerics_ref;
    if (reference_fp32) {
      progress("FP32 reference");
      fp32 = reference::forward_fp32(weights, images);
    }
    if (check_numerics) {
      progress("device-numerics reference");
      numerics_ref = reference::DeviceNumericsModel(weights, contents.numerics).forward(images);
    }

    const DeviceLock lock(lock_file, lock_timeout);
    progress("device: uploading weights");
    device::Device dev(contents);
    const auto t0 = std::chrono::steady_clock::now();
    dev.upload_weights(weights);
    const double weight_upload_seconds = since(t0);
    Calls calls = run_calls(dev, weights, images, fp32, config, contents.machine.clock_hz);
    if (!save_embeddings.empty()) formats::write_npy(save_embeddings, {config.batch, config.width}, calls.last);
    formats::write_npy((std::filesystem::path(out_dir) / "embeddings.npy").string(), {config.batch, config.width}, calls.last);

    nlohmann::json report;
    report["package"] = package.path;
    report["model"] = config.name;
    report["layers"] = config.layers;
    report["batch"] = config.batch;
    report["machine"] = contents.machine.name;
    report["package_sha256"] = package.sha;
    report["compile_seconds"] = package.compile_seconds;
    if (package.optimization) report["optimization"] = *package.optimization;
    report["weight_upload_seconds"] = weight_upload_seconds;
    report["calls"] = calls.report;
    report["device_cycles"] = calls.report[0]["device_cycles"];
    report["device_ms"] = calls.report[0]["device_ms"];
    report_host_times(report, calls.report);
    report["identical_across_calls"] = calls.identical;
    report["tile_activity_share"] = tile_activity_share(contents);
    report["outputs"] = write_views(contents, package.sha, config);
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
    write_text_atomically((std::filesystem::path(out_dir) / "run.json").string(), report.dump(1) + "\n");
    if (json)
      std::cout << report.dump(1) << "\n";
    else
      print_text(report, config, contents.machine.name);
    return passed ? kExitOk : kExitFailure;
  }
};

RunCommand command;
const CommandRegistration registration("run", "compile, run N resident calls on the device model, check vs FP32",
                                       [](CLI::App& app) { return command.setup(app); });

}  // namespace
}  // namespace tilevit::cli
