#pragma once
// The run job of `tilevit run`, one for a machine of one chip and of several
// (docs/ARCHITECTURE.md, "The run job"): the host references, the weights uploaded once
// to a device::Runner, N calls each checked (finite, identical across calls, cosine
// against the FP32 reference, bit for bit against the device-numerics reference), the
// embeddings, and the profile and viewers of what ran, into one OutputDirectory. It
// returns a typed report; the command line makes text and JSON of it (and run.json,
// through a RunSink).
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/calibration_coverage.hpp"
#include "device/runner.hpp"
#include "job/output_directory.hpp"
#include "profile/profile.hpp"
#include "system/pipeline.hpp"

namespace tilevit::job {

// What runs: one chip's package or a pipeline's, and what the report says of it.
struct RunPackage {
  std::string path, sha256;
  bool written_here = false;  // compiled into the output directory by this run: one of its outputs
  double compile_seconds = 0;
  std::optional<nlohmann::json> optimization;  // the plan search's report, when one ran here (one chip)
  std::string plan_origin;                     // where the plan came from, in a few words (the viewers' header)
  const compiler::Executable* chip = nullptr;             // a machine of one chip
  const system::CompiledPipeline* pipeline = nullptr;     // of several

  const compiler::Executable& first() const { return chip ? *chip : pipeline->stages.front().executable; }
  const model::ViTConfig& config() const { return first().config; }  // of one micro-batch
  std::uint32_t micro_batches() const { return pipeline ? pipeline->micro_batches : 1; }
  std::size_t images_per_call() const { return std::size_t(config().batch) * micro_batches(); }
  const target::MachineDescription& machine() const { return chip ? chip->machine : pipeline->machine; }
};

struct RunSettings {
  int inferences = 3;
  double threshold = 0.99;  // every cosine must be above it
  bool reference_fp32 = true, check_numerics = false, time_reference = false;
  std::string save_embeddings;  // also the last call's embeddings here (.npy)
  std::string device_lock;      // an advisory lock file held while the device is used
  double lock_timeout = 60;
  // False in a process that does not report (an MPI rank other than 0): no references,
  // no checks, no outputs.
  bool reports = true;
  std::function<void(const std::string&)> progress;
  // --compare-with: compare.html of this run (B) against this profile (A), read before the run.
  const profile::Profile* compare_with = nullptr;
  std::string compare_with_name;
};

// The host inputs: the weights (the whole model where references are computed, else
// at least what the runner's chips hold) and the images of one call.
struct RunInputs {
  const model::ViTWeights& weights;
  const std::vector<std::vector<float>>& images;
};

struct CallRecord {
  int index = 0;
  std::uint64_t images = 0, device_cycles = 0, first_micro_batch_cycles = 0;
  double device_ms = 0, images_per_second = 0;
  double upload_ms = 0, execute_ms = 0, download_ms = 0;  // host time (a pipeline: all in execute)
  std::optional<double> reference_ms;                     // --time-reference: the FP32 pass before the call
  bool finite = true;
  std::vector<double> cosines;  // against the FP32 reference, one per image (none unchecked)
};

// Pass: every check made held; fail: one did not; unchecked: nothing compared the
// embeddings with the FP32 reference (--no-reference) and no other check failed.
enum class Verdict { pass, fail, unchecked };

struct TileActivity {
  double compute = 0, idle = 0, sync = 0, exchange = 0;  // shares of all tiles' cycles
};

struct OutputFile {
  std::string name, path, sha256;
  std::uint64_t bytes = 0;
};

struct RunReport {
  std::vector<CallRecord> calls;
  double weight_upload_seconds = 0, host_ms_per_call = 0;
  std::optional<double> host_ms_median, reference_ms_median;  // --time-reference
  bool identical_across_calls = true;
  std::optional<bool> cycles_match_model;  // a pipeline: the calls' cycles are its schedule's
  std::optional<TileActivity> tile_activity;               // one chip
  std::optional<compiler::CalibrationCoverage> coverage;  // one chip
  std::vector<double> cosines;
  std::optional<double> min_cosine;
  std::optional<bool> bit_exact_vs_device_numerics;  // --check-numerics
  std::optional<double> max_abs_diff_vs_device_numerics;
  bool checked = false;  // compared with the FP32 reference
  Verdict verdict = Verdict::unchecked;
  std::vector<OutputFile> outputs;
  std::vector<std::string> warnings;
};

// Told the report twice: as soon as the verdict is known (before the viewers are
// written: a viewer that cannot be written is a warning, never a lost run), and when
// every output is written.
class RunSink {
 public:
  virtual ~RunSink() = default;
  virtual void result(const RunReport& report) = 0;
  virtual void finished(const RunReport& report) = 0;
};

// The runner is made under the device lock, after the references. `out` and `sink`
// only where settings.reports; the outputs are committed when the job returns.
RunReport run_job(const RunPackage& package, const RunSettings& settings, const RunInputs& inputs,
                  const std::function<std::unique_ptr<device::Runner>()>& make_runner, OutputDirectory* out,
                  RunSink* sink);

// The profile (when the package records one) and the memory map of a run, next to
// run.json (several chips: one profile of the system, memory-stage<N>.* per stage), recorded in `report` (outputs, or a warning when one cannot be written).
// With settings.compare_with also compare.html. Progress lines go to settings.progress.
void write_views(const RunPackage& package, OutputDirectory& out, RunReport& report, const RunSettings& settings);

// The figures of call `index` from what the runner gave: cycles, device time, host times
// (no checks: run_job adds them).
CallRecord call_record(const RunPackage& package, int index, const device::CallResult& result);

// The device-numerics reference of the package's program (its splits; a pipeline's per
// stage): bit for bit the device's embeddings of `in`'s images.
std::vector<float> device_numerics_forward(const RunPackage& package, const RunInputs& in);

// The profile of one call of a profiled package (its recorded detail), named by the package's
// SHA-256, model and plan origin: what profile.tvprof and the viewers of a run show. A
// pipeline's is one profile of the system (profile/system_profile.hpp), each chip with its
// stage's operation bounds.
profile::Profile call_profile(const RunPackage& package);

// Where the package's plan came from, in a few words (the viewers' header): the search (and
// what it gained), a plan file, a given package, or the heuristic. Not part of the profile's
// identity: two runs of one package compare equal (profile diff).
std::string plan_origin(const std::optional<nlohmann::json>& optimization, const std::string& plan_file,
                        const std::string& package_file);

// Where the modelled cycles go, over all tiles: the totals of a whole-call profile.
TileActivity tile_activity(const compiler::Executable& chip);

// Adds {name, path, bytes, sha256} of an output just written to the report.
void record_output(RunReport& report, const std::string& name, const std::string& path);

}  // namespace tilevit::job
