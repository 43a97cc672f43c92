#include "cli/run_report.hpp"

#include <cstdio>
#include <iostream>
#include <sstream>

#include "cli/calibration_report.hpp"
#include "cli/model_options.hpp"
#include "cli/pipeline_commands.hpp"
#include "support/atomic_file.hpp"
#include "support/threads.hpp"
#include "target/model_validation.hpp"

namespace tilevit::cli {
namespace {

nlohmann::json call_json(const job::CallRecord& c, bool pipeline) {
  nlohmann::json call{{"call", c.index},
                      {"images", c.images},
                      {"device_cycles", c.device_cycles},
                      {"device_ms", c.device_ms},
                      {"images_per_second", c.images_per_second},
                      {"host_ms", {{"upload", c.upload_ms}, {"execute", c.execute_ms}, {"download", c.download_ms}}},
                      {"finite", c.finite}};
  if (pipeline) {
    call["first_micro_batch_cycles"] = c.first_micro_batch_cycles;
    call["host_seconds_rank0"] = (c.upload_ms + c.execute_ms + c.download_ms) / 1e3;
  }
  if (c.reference_ms) call["reference_ms"] = *c.reference_ms;
  if (!c.cosines.empty()) call["cosines"] = c.cosines;
  return call;
}

const char* verdict_text(job::Verdict v) {
  return v == job::Verdict::pass ? "PASS" : v == job::Verdict::fail ? "FAIL" : "UNCHECKED";
}

}  // namespace

nlohmann::json run_report_json(const job::RunPackage& package, const job::RunSettings& s, const RunEcho& echo,
                               const job::RunReport& r) {
  const model::ViTConfig& config = package.config();
  nlohmann::json j = package.pipeline ? describe(*package.pipeline, package.sha256) : nlohmann::json::object();
  j.update({{"package", package.path},
            {"model", config.name},
            {"layers", config.layers},
            {"batch", config.batch},
            {"machine", package.machine().name},
            {"package_sha256", package.sha256},
            {"numerics", package.first().numerics.describe()},
            {"weights", echo.weights},
            {"images", echo.images},
            {"seed", echo.seed},
            {"threads", host_threads()},
            {"min_cosine_threshold", s.threshold},
            {"compile_seconds", package.compile_seconds}});
  if (package.pipeline) j["ranks"] = echo.ranks;
  if (package.optimization) j["optimization"] = *package.optimization;
  j["outputs"] = nlohmann::json::object();
  for (const job::OutputFile& f : r.outputs) j["outputs"][f.name] = {{"path", f.path}, {"bytes", f.bytes}, {"sha256", f.sha256}};
  j["weight_upload_seconds"] = r.weight_upload_seconds;
  j["calls"] = nlohmann::json::array();
  for (const job::CallRecord& c : r.calls) j["calls"].push_back(call_json(c, package.pipeline != nullptr));
  j["device_cycles"] = r.calls.front().device_cycles;
  j["device_ms"] = r.calls.front().device_ms;
  j["host_ms_per_call"] = r.host_ms_per_call;
  if (r.host_ms_median) {
    j["host_ms_median"] = *r.host_ms_median;
    j["reference_ms_median"] = *r.reference_ms_median;
    j["host_vs_reference"] = *r.host_ms_median / *r.reference_ms_median;
  }
  j["identical_across_calls"] = r.identical_across_calls;
  if (r.cycles_match_model) j["cycles_match_model"] = *r.cycles_match_model;
  if (r.tile_activity)
    j["tile_activity_share"] = {{"compute", r.tile_activity->compute},
                                {"idle", r.tile_activity->idle},
                                {"sync", r.tile_activity->sync},
                                {"exchange", r.tile_activity->exchange}};
  if (r.coverage) j["kernel_calibration"] = coverage_json(*r.coverage);
  j["model_validation"] = target::model_validation_json();
  j["cosines"] = r.cosines;
  j["min_cosine"] = r.min_cosine ? nlohmann::json(*r.min_cosine) : nlohmann::json(nullptr);
  if (r.bit_exact_vs_device_numerics) {
    j["bit_exact_vs_device_numerics"] = *r.bit_exact_vs_device_numerics;
    j["max_abs_diff_vs_device_numerics"] = *r.max_abs_diff_vs_device_numerics;
  }
  // Unchecked is not passed: null, unless a check that was made failed.
  j["checked"] = r.checked;
  j["verdict"] = r.verdict == job::Verdict::pass ? "pass" : r.verdict == job::Verdict::fail ? "fail" : "unchecked";
  j["passed"] = r.verdict == job::Verdict::unchecked ? nlohmann::json(nullptr) : nlohmann::json(r.verdict == job::Verdict::pass);
  j["warnings"] = r.warnings;
  return j;
}

void print_run_text(const nlohmann::json& j, const job::RunPackage& package, const job::RunSettings& s,
                    const job::RunReport& r) {
  const model::ViTConfig& config = package.config();
  if (package.pipeline) {
    std::ostringstream head;
    print_pipeline(head, j);
    std::fputs(head.str().c_str(), stdout);
  } else {
    std::printf("%s, %s, batch %d on %s; package %s\n", config.name.c_str(), layers_text(config.layers).c_str(),
                config.batch, package.machine().name.c_str(), package.sha256.substr(0, 16).c_str());
  }
  for (const job::CallRecord& c : r.calls) {
    if (package.pipeline)
      std::printf("call %d of %d: %llu images, %llu cycles = %.3f ms, %.1f images/s", c.index + 1, s.inferences,
                  (unsigned long long)c.images, (unsigned long long)c.device_cycles, c.device_ms, c.images_per_second);
    else
      std::printf("call %d of %d: device %llu cycles = %.3f ms; host upload %.1f ms, execute %.1f ms, download %.1f ms",
                  c.index + 1, s.inferences, (unsigned long long)c.device_cycles, c.device_ms, c.upload_ms, c.execute_ms,
                  c.download_ms);
    for (double x : c.cosines) std::printf(", cosine %.9f", x);
    std::printf("\n");
  }
  if (r.bit_exact_vs_device_numerics)
    std::printf("device vs device-numerics reference (the package's splits): %s\n",
                *r.bit_exact_vs_device_numerics ? "bit for bit equal" : "DIFFERENT");
  if (r.cycles_match_model && !*r.cycles_match_model)
    std::printf("device cycles: not those of the pipeline's schedule (a fault)\n");
  if (r.host_ms_median)
    std::printf("host speed: call median %.1f ms, FP32 reference median %.1f ms (timed before each call), ratio %.2f\n",
                *r.host_ms_median, *r.reference_ms_median, *r.host_ms_median / *r.reference_ms_median);
  if (r.tile_activity)
    std::printf("tile time: compute %.1f%%, idle %.1f%%, sync %.1f%%, exchange %.1f%%\n", 100 * r.tile_activity->compute,
                100 * r.tile_activity->idle, 100 * r.tile_activity->sync, 100 * r.tile_activity->exchange);
  if (r.coverage) std::printf("%s\n", compiler::coverage_text(*r.coverage).c_str());
  std::printf("%s\n", target::model_validation_line().c_str());
  if (r.min_cosine) std::printf("min cosine %.9f (threshold %g)\n", *r.min_cosine, s.threshold);
  if (r.verdict == job::Verdict::unchecked)
    std::printf("UNCHECKED (--no-reference: nothing compared with the FP32 reference)\n");
  else
    std::printf("%s\n", verdict_text(r.verdict));
  std::fflush(stdout);  // the verdict is out before the viewers are written
}

void RunPrinter::result(const job::RunReport& report) {
  const nlohmann::json j = run_report_json(package_, settings_, echo_, report);
  write_text_atomically(out_.output("run.json"), j.dump(1) + "\n");
  if (!json_) print_run_text(j, package_, settings_, report);
}

void RunPrinter::finished(const job::RunReport& report) {
  const nlohmann::json j = run_report_json(package_, settings_, echo_, report);
  write_text_atomically(out_.output("run.json"), j.dump(1) + "\n");
  if (!json_) return;
  std::cout << j.dump(1) << "\n";
  if (report.coverage) progress(compiler::coverage_text(*report.coverage));
}

}  // namespace tilevit::cli
