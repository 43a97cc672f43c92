#include "sweep/evaluate.hpp"

#include <chrono>

#include "compiler/calibration_coverage.hpp"
#include "compiler/plan_search.hpp"
#include "device/device.hpp"
#include "model/random_model.hpp"
#include "reference/compare.hpp"
#include "reference/forward.hpp"
#include "support/error.hpp"

namespace tilevit::sweep {
namespace {

using nlohmann::json;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

model::ViTConfig point_config(const PointSettings& s) {
  model::ViTConfig c = model::ViTConfig::preset(s.preset);
  if (s.layers) c.layers = *s.layers;
  c.batch = s.batch;
  c.validate();
  return c;
}

// One call with the random model and images: modelled cycles and the cosine vs FP32.
json device_run(const compiler::CompiledModel& compiled, std::uint64_t seed) {
  const auto t0 = std::chrono::steady_clock::now();
  const model::ViTConfig& config = compiled.executable.config;
  const model::ViTWeights weights = model::load_weights(model::RandomModelSource(config, seed), config);
  reference::ImageBatch images;
  for (int b = 0; b < config.batch; ++b) images.push_back(model::random_image(config, seed, b));
  device::Device dev(compiled.executable);
  dev.upload_weights(weights);
  device::CallTiming timing;
  const std::vector<float> out = dev.run(images, &timing);
  const auto cmp = reference::compare_embeddings(out, reference::forward_fp32(weights, images),
                                                 static_cast<int>(config.output_values_per_image()));
  return {{"cycles", timing.device_cycles}, {"min_cosine", cmp.min_cosine}, {"all_finite", cmp.all_finite},
          {"host_seconds", seconds_since(t0)}};
}

// The figures of a compiled point.
void add_figures(json& r, const target::MachineDescription& m, const compiler::CompiledModel& compiled) {
  const compiler::CompileStats& s = compiled.stats;
  std::uint64_t peak_total = 0;
  for (const auto& t : compiled.memory) peak_total += t.peak_live;
  const double latency = static_cast<double>(s.estimated_cycles) / static_cast<double>(m.clock_hz);
  r["estimated_cycles"] = s.estimated_cycles;
  r["compute_cycles"] = s.estimated_compute_cycles;
  r["exchange_cycles"] = s.estimated_exchange_cycles;
  r["sync_cycles"] = s.estimated_sync_cycles;
  r["latency_s"] = latency;
  r["throughput_images_per_s"] = latency > 0 ? compiled.executable.config.batch / latency : 0.0;
  r["tiles_used"] = s.tiles_used;
  r["peak_sram_tile_bytes"] = s.peak_tile_bytes;
  r["gemm_tile_bytes_cap"] = s.gemm_tile_bytes_cap;  // 0: the fastest grids fitted
  r["peak_sram_total_bytes"] = peak_total;
  r["sram_total_bytes"] = std::uint64_t{m.tiles} * m.sram_size;
  r["calibrated_share"] = compiler::calibration_coverage(m, compiled.executable.program).calibrated_share();
}

void evaluate(json& r, const SweepSpec& spec, const target::MachineDescription& base, const SweepPoint& point,
              const EvaluateOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  const PointSettings s = settings_of(spec, point);
  const target::MachineDescription machine = apply_machine_keys(base, s.machine);
  const model::ViTConfig config = point_config(s);
  r["machine"] = machine.name;
  r["tiles"] = machine.tiles;
  r["clock_hz"] = machine.clock_hz;
  r["model"] = config.name;
  r["layers"] = config.layers;
  r["batch"] = config.batch;
  const compiler::Graph graph = compiler::build_vit_graph(config, model::NumericsConfig::uniform(spec.fp8_scale));
  compiler::CompileOptions co;
  co.plan.exchange_stream_words = s.exchange_stream_words;
  compiler::PlanSearchOptions so;
  so.steps = s.optimization_steps;
  so.threads = options.search_threads;
  const compiler::PlanSearchResult found = compiler::search_plan(graph, machine, co, so);
  r["compile_seconds"] = seconds_since(t0);
  add_figures(r, machine, found.compiled);
  if (so.steps > 0) r["baseline_cycles"] = found.report.candidates.at(0).cycles;
  if (spec.device_run) r["device"] = device_run(found.compiled, spec.seed);
}

}  // namespace

json evaluate_point(const SweepSpec& spec, const target::MachineDescription& base, const SweepPoint& point,
                    const EvaluateOptions& options) {
  json r = {{"tilevit_sweep_point", kPointFormat},
            {"index", point.index},
            {"id", point.id},
            {"parameters", parameters_json(spec, point)}};
  const auto t0 = std::chrono::steady_clock::now();
  const auto fail = [&](const std::string& message, int exit_code) {
    r["status"] = "failed";
    r["error"] = {{"message", message}, {"exit_code", exit_code}};
  };
  try {
    evaluate(r, spec, base, point, options);
    r["status"] = "ok";
  } catch (const compiler::DoesNotFit& e) {
    fail("does not fit " + r.value("machine", std::string()) + ": " + compiler::describe(e.overflow()), e.exit_code());
  } catch (const Error& e) {
    fail(e.what(), e.exit_code());
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    fail(std::string("internal error: ") + e.what(), kExitInternal);
  }
  if (!r.contains("compile_seconds")) r["compile_seconds"] = seconds_since(t0);
  r["seconds"] = seconds_since(t0);
  return r;
}

json without_timings(json record) {
  record.erase("compile_seconds");
  record.erase("seconds");
  if (record.contains("device")) record["device"].erase("host_seconds");
  return record;
}

}  // namespace tilevit::sweep
