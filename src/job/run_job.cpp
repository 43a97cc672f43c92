#include "job/run_job.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <thread>

#include "formats/npy.hpp"
#include "reference/compare.hpp"
#include "reference/forward.hpp"
#include "support/error.hpp"
#include "support/median.hpp"

namespace tilevit::job {
namespace {

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// An advisory lock on a file, held while the device model is in use.
class DeviceLock {
 public:
  DeviceLock(const std::string& path, double timeout_seconds, const std::function<void(const std::string&)>& progress) {
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
  DeviceLock(const DeviceLock&) = delete;
  DeviceLock& operator=(const DeviceLock&) = delete;

 private:
  int fd_ = -1;
};

// The host's yardsticks: the FP32 reference's embeddings and the device-numerics
// reference's (the package's splits), as the settings ask.
struct References {
  std::vector<float> fp32, numerics;
};

References compute_references(const RunPackage& package, const RunSettings& s, const RunInputs& in) {
  References r;
  if (!s.reports) return r;
  if (s.reference_fp32) {
    s.progress("FP32 reference");
    r.fp32 = reference::forward_fp32(in.weights, in.images);
  }
  if (s.check_numerics) {
    s.progress("device-numerics reference (the package's splits)");
    r.numerics = device_numerics_forward(package, in);
  }
  return r;
}

// One FP32 forward pass timed before call i (ms); it must equal the first one.
double timed_reference(const RunSettings& s, const RunInputs& in, const std::vector<float>& fp32, int i) {
  s.progress("FP32 reference, timed, before call " + std::to_string(i + 1));
  const auto r0 = std::chrono::steady_clock::now();
  const auto embedding = reference::forward_fp32(in.weights, in.images);
  const double ms = since(r0) * 1e3;
  if (s.reference_fp32 && embedding != fp32)  // the reference is deterministic: a difference is a fault
    throw Error("FP32 reference: the timed forward pass before call " + std::to_string(i + 1) + " differs from the first one",
                kExitInternal);
  return ms;
}

// The calls, each timed and (where the process reports) checked; the last call's embeddings.
std::vector<float> run_calls(const RunPackage& package, const RunSettings& s, const RunInputs& in,
                             const References& refs, device::Runner& runner, RunReport& report) {
  std::vector<float> last;
  const bool timed = s.time_reference && s.reports;
  for (int i = 0; i < s.inferences; ++i) {
    // Interleaved with the calls, so that both see the same load on a shared machine.
    const double reference_ms = timed ? timed_reference(s, in, refs.fp32, i) : 0;
    s.progress((package.pipeline ? "pipeline: call " : "device: call ") + std::to_string(i + 1) + " of " +
               std::to_string(s.inferences));
    device::CallResult result = runner.call(in.images);
    CallRecord call = call_record(package, i, result);
    if (timed) call.reference_ms = reference_ms;
    if (s.reports) {
      if (i > 0) report.identical_across_calls &= result.output == last;
      for (float v : result.output) call.finite &= std::isfinite(v);
      if (s.reference_fp32)
        call.cosines = reference::compare_embeddings(result.output, refs.fp32, package.config().output_values_per_image()).cosines;
      report.cosines.insert(report.cosines.end(), call.cosines.begin(), call.cosines.end());
    }
    last = std::move(result.output);
    report.calls.push_back(std::move(call));
  }
  return last;
}

// Host time per call, and with --time-reference the medians next to the reference's.
void host_times(const RunSettings& s, RunReport& report) {
  std::vector<double> host_ms, reference_ms;  // per call: upload + execute + download
  for (const CallRecord& c : report.calls) {
    host_ms.push_back(c.upload_ms + c.execute_ms + c.download_ms);
    if (c.reference_ms) reference_ms.push_back(*c.reference_ms);
  }
  report.host_ms_per_call = std::accumulate(host_ms.begin(), host_ms.end(), 0.0) / s.inferences;
  if (reference_ms.empty()) return;
  report.host_ms_median = median(host_ms);
  report.reference_ms_median = median(reference_ms);
}

// Every check the settings ask for, into the verdict.
void judge(const RunPackage& package, const RunSettings& s, const References& refs, const std::vector<float>& last,
           RunReport& report) {
  bool passed = report.identical_across_calls;
  for (const CallRecord& c : report.calls) passed &= c.finite;
  for (double c : report.cosines) passed &= c > s.threshold;
  if (!report.cosines.empty()) report.min_cosine = *std::min_element(report.cosines.begin(), report.cosines.end());
  if (package.pipeline) {
    const system::PipelineFigures figures = system::pipeline_figures(*package.pipeline);
    report.cycles_match_model = report.calls[0].device_cycles == figures.makespan_cycles &&
                                report.calls[0].first_micro_batch_cycles == figures.latency_cycles;
    passed &= *report.cycles_match_model;
  }
  if (s.check_numerics) {
    double max_diff = 0;
    for (std::size_t i = 0; i < last.size() && i < refs.numerics.size(); ++i)
      max_diff = std::max(max_diff, double(std::fabs(last[i] - refs.numerics[i])));
    report.bit_exact_vs_device_numerics = last == refs.numerics;
    report.max_abs_diff_vs_device_numerics = max_diff;
    passed &= last == refs.numerics;
  }
  report.checked = s.reference_fp32;
  report.verdict = !passed ? Verdict::fail : report.checked ? Verdict::pass : Verdict::unchecked;
}

}  // namespace

std::vector<float> device_numerics_forward(const RunPackage& package, const RunInputs& in) {
  if (!package.pipeline) return reference::DeviceNumericsModel(in.weights, package.chip->numerics).forward(in.images);
  return reference::DeviceNumericsModel(in.weights, system::pipeline_numerics(*package.pipeline),
                                        system::pipeline_layer_numerics(*package.pipeline))
      .forward(in.images);
}

CallRecord call_record(const RunPackage& package, int index, const device::CallResult& result) {
  CallRecord call;
  call.index = index;
  call.images = package.images_per_call();
  call.device_cycles = result.cycles;
  call.first_micro_batch_cycles = result.first_cycles;
  const double seconds = double(result.cycles) / double(package.machine().clock_hz);
  call.device_ms = seconds * 1e3;
  call.images_per_second = seconds > 0 ? double(call.images) / seconds : 0.0;
  call.upload_ms = result.upload_seconds * 1e3;
  call.execute_ms = result.execute_seconds * 1e3;
  call.download_ms = result.download_seconds * 1e3;
  return call;
}

std::string plan_origin(const std::optional<nlohmann::json>& optimization, const std::string& plan_file,
                        const std::string& package_file) {
  if (optimization && optimization->at("steps").get<std::uint32_t>() > 0) {
    const auto& r = *optimization;
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.4f", r.at("result_vs_baseline").get<double>());
    return "searched, " + std::to_string(r.at("candidates_compiled").get<std::uint32_t>()) + " candidates, " + ratio +
           "x the heuristic plan's cycles" + (plan_file.empty() ? "" : ", from " + plan_file);
  }
  if (!plan_file.empty()) return "pinned by " + plan_file;
  if (!package_file.empty()) return "as compiled into " + package_file;
  return "heuristic (--optimization-steps 0)";
}

void record_output(RunReport& report, const std::string& name, const std::string& path) {
  report.outputs.push_back({name, path, file_sha256(path), std::uint64_t(std::filesystem::file_size(path))});
}

RunReport run_job(const RunPackage& package, const RunSettings& s, const RunInputs& in,
                  const std::function<std::unique_ptr<device::Runner>()>& make_runner, OutputDirectory* out,
                  RunSink* sink) {
  const References refs = compute_references(package, s, in);
  RunReport report;
  std::vector<float> last;
  {
    const DeviceLock lock(s.reports ? s.device_lock : std::string(), s.lock_timeout, s.progress);
    s.progress("device: uploading weights");
    const std::unique_ptr<device::Runner> runner = make_runner();
    const auto t0 = std::chrono::steady_clock::now();
    runner->upload_weights(in.weights);
    report.weight_upload_seconds = since(t0);
    last = run_calls(package, s, in, refs, *runner, report);
  }
  host_times(s, report);
  if (!s.reports) return report;
  judge(package, s, refs, last, report);
  if (package.chip) {
    report.tile_activity = tile_activity(*package.chip);
    report.coverage = compiler::calibration_coverage(package.chip->machine, package.chip->program);
  }

  if (package.written_here) record_output(report, "model.tvpkg", package.path);
  std::vector<std::int64_t> shape = package.config().output_shape();
  shape[0] = std::int64_t(in.images.size());  // every micro-batch of the call
  formats::write_npy(out->output("embeddings.npy"), shape, last);
  record_output(report, "embeddings.npy", out->path("embeddings.npy"));
  if (!s.save_embeddings.empty()) formats::write_npy(s.save_embeddings, shape, last);
  sink->result(report);
  write_views(package, *out, report, s);
  sink->finished(report);
  out->commit();
  return report;
}

}  // namespace tilevit::job
