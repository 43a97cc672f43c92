// tilevit.compile and tilevit.load: a program compiled by the compile pipeline as
// `tilevit run` compiles it (job::compile_planned: pinned by a plan, searched, a model that
// does not fit named by its worst tile), or a package read and verified.
#include <chrono>
#include <cstring>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "compiler/compile.hpp"
#include "compiler/plan_file.hpp"
#include "formats/hf_checkpoint.hpp"
#include "formats/hf_config.hpp"
#include "job/compile_job.hpp"
#include "job/run_job.hpp"
#include "model/random_model.hpp"
#include "model/tensor_source.hpp"
#include "package/container.hpp"
#include "package/program_codec.hpp"
#include "package/sha256.hpp"
#include "package/verified_package.hpp"
#include "profile/memory_map.hpp"
#include "python/bindings.hpp"
#include "support/atomic_file.hpp"
#include "support/error.hpp"
#include "support/threads.hpp"
#include "system/pipeline_package.hpp"
#include "target/machine.hpp"

namespace tilevit::python {
namespace {

// Tensors given in memory with Hugging Face names and layouts, copied as FP32.
class ArraySource : public model::TensorSource {
 public:
  explicit ArraySource(const py::dict& tensors) {
    for (const auto& [key, value] : tensors) {
      const std::string name = py::str(key);
      auto array = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(value);
      if (!array) throw Error("weights: " + name + ": not an array of numbers", kExitUsage);
      Tensor t;
      t.info.name = name;
      for (py::ssize_t d = 0; d < array.ndim(); ++d) t.info.shape.push_back(array.shape(d));
      t.values.assign(array.data(), array.data() + array.size());
      tensors_.emplace(name, std::move(t));
    }
  }
  std::string describe() const override { return "weights given in memory"; }
  std::optional<model::TensorInfo> info(const std::string& name) const override {
    const auto it = tensors_.find(name);
    if (it == tensors_.end()) return std::nullopt;
    return it->second.info;
  }
  void read_f32(const std::string& name, std::span<float> out) const override {
    const Tensor& t = tensors_.at(name);
    std::memcpy(out.data(), t.values.data(), std::min(out.size(), t.values.size()) * sizeof(float));
  }

 private:
  struct Tensor {
    model::TensorInfo info;
    std::vector<float> values;
  };
  std::map<std::string, Tensor> tensors_;
};

template <typename T>
std::optional<T> get(const py::dict& spec, const char* key) {
  if (!spec.contains(key) || spec[key].is_none()) return std::nullopt;
  return spec[key].cast<T>();
}

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The model's shape as the command line's model flags make it (cli/model_options): a
// checkpoint's, a Hugging Face config's, or a preset's; then the layers and batch asked.
struct ShapeSpec {
  std::optional<std::string> preset, config_json;
  std::optional<int> layers;
  int batch = 1;

  model::ViTConfig config(const formats::HfCheckpoint* checkpoint) const {
    model::ViTConfig c = checkpoint    ? checkpoint->config()
                         : config_json ? formats::parse_hf_config(*config_json, "config")
                                       : model::ViTConfig::preset(preset.value_or("so400m"));
    if (layers) c.layers = *layers;
    c.batch = batch;
    c.validate();
    return c;
  }
};

compiler::ProfilingOptions profiling_of(const py::dict& spec) {
  compiler::ProfilingOptions o;
  const auto granularity = get<std::string>(spec, "profile");
  if (!granularity) return o;
  o.enabled = true;
  o.detail.granularity = compiler::granularity_from_string(*granularity);
  const std::string iterations = get<std::string>(spec, "profile_iterations").value_or("1");
  o.detail.iterations_in_detail = iterations == "all" ? UINT32_MAX : std::uint32_t(std::stoul(iterations));
  return o;
}

// The package's bytes decoded and verified again: what runs is what a file holds, as in `run`.
void adopt_package(Program& p, std::vector<std::byte> bytes, const std::string& name) {
  package::VerifiedPackage v = package::verify_package(package::Container::from_bytes(bytes, name));
  p.chip = std::move(v.contents);
  p.summary = compiler::summarize_program(p.chip.machine, p.chip.program, p.chip.tensors);
  p.sha256 = v.sha256;
  p.bytes = std::move(bytes);
}

// One chip: pinned by a plan file (its W too, unless exchange_stream_words names others),
// or searched; the package adopted as `tilevit run` reads it back.
void compile_one_chip(Program& p, const compiler::Graph& graph, const target::MachineDescription& machine,
                      compiler::CompileOptions options, const PlanSpec& plan, const job::PlanSearchSettings& search) {
  if (plan.text) {
    const compiler::PlanFile file = compiler::parse_plan_file(*plan.text, plan.source, 1u << 20);
    compiler::check_plan_target(file, compiler::plan_target(graph.config, machine), plan.source);
    options.plan.pins = file.plan.pins;
    if (file.pins_stream_words && plan.stream_words && *plan.stream_words != file.plan.exchange_stream_words)
      throw Error("exchange_stream_words " + std::to_string(*plan.stream_words) + " contradicts " + plan.source +
                      " (exchange_stream_words " + std::to_string(file.plan.exchange_stream_words) + "): drop one",
                  kExitUsage);
    if (file.pins_stream_words) options.plan.exchange_stream_words = file.plan.exchange_stream_words;
  }
  const job::PlannedCompile planned = job::compile_planned(graph, machine, options, plan.source, search);
  adopt_package(p, package::encode_package(planned.compiled.executable).bytes(), "compiled program");
  p.plan = nlohmann::json::parse(compiler::plan_file_text(planned.plan));
  p.search = planned.report;
  p.plan_origin = job::plan_origin(planned.report, plan.source, "");
}

// The model of a spec (preset, checkpoint directory or config with tensors; layers, batch,
// FP8 scales) read into `p`'s weight origin: its shape and numerics. Reads Python objects:
// call with the GIL held; `finish` (GIL released) opens the checkpoint and loads given tensors.
class ModelReader {
 public:
  ModelReader(const py::dict& spec, Program& p)
      : weights_(*p.weights),
        shape_{get<std::string>(spec, "preset"), get<std::string>(spec, "config_json"), get<int>(spec, "layers"),
               get<int>(spec, "batch").value_or(1)},
        fp8_scale_(get<int>(spec, "fp8_scale").value_or(-4)),
        calibrated_(get<bool>(spec, "calibrated_scales").value_or(false)) {
    weights_.seed = get<std::uint64_t>(spec, "seed").value_or(0);
    weights_.model_dir = get<std::string>(spec, "model_dir").value_or("");
    if (spec.contains("tensors") && !spec["tensors"].is_none()) arrays_ = std::make_unique<ArraySource>(spec["tensors"]);
  }
  // The model's shape, checked; tensors given in memory loaded for it.
  model::ViTConfig config() {
    std::unique_ptr<formats::HfCheckpoint> checkpoint;
    if (!weights_.model_dir.empty()) checkpoint = formats::HfCheckpoint::open(weights_.model_dir);
    const model::ViTConfig c = shape_.config(checkpoint.get());
    if (fp8_scale_ < -31 || fp8_scale_ > 31)
      throw Error("fp8_scale " + std::to_string(fp8_scale_) + ": must be in [-31, 31]", kExitUsage);
    if (arrays_) weights_.loaded = std::make_shared<const model::ViTWeights>(model::load_weights(*arrays_, c));
    return c;
  }
  model::NumericsConfig numerics() const {
    return calibrated_ ? model::NumericsConfig::calibrated() : model::NumericsConfig::uniform(fp8_scale_);
  }

 private:
  WeightOrigin& weights_;
  ShapeSpec shape_;
  int fp8_scale_;
  bool calibrated_;
  std::unique_ptr<ArraySource> arrays_;
};

// The spec's "progress" callable as the search's progress (empty: none). Called from the
// compile's threads with the GIL released, so it takes the GIL; the callable is shared, not
// copied, so only the caller's copy (destroyed with the GIL held) owns the Python object.
std::function<void(const std::string&)> progress_of(const py::dict& spec,
                                                    std::shared_ptr<py::object>& owner) {
  if (!spec.contains("progress") || spec["progress"].is_none()) return {};
  owner = std::make_shared<py::object>(spec["progress"]);
  std::weak_ptr<py::object> callable = owner;
  return [callable](const std::string& line) {
    const py::gil_scoped_acquire gil;
    if (const auto f = callable.lock()) try {
        (*f)(line);
      } catch (py::error_already_set& e) {  // a failing callback does not stop the compile
        e.discard_as_unraisable("tilevit.compile progress");
      }
  };
}

std::shared_ptr<Program> compile(const py::dict& spec) {
  set_host_threads(get<int>(spec, "threads").value_or(0));
  auto p = std::make_shared<Program>();
  ModelReader model(spec, *p);
  std::shared_ptr<py::object> progress_owner;
  const auto progress = progress_of(spec, progress_owner);
  const auto plan_json = get<std::string>(spec, "plan_json");
  const std::string plan_source = get<std::string>(spec, "plan_source").value_or("");
  const auto stream_words = get<std::uint32_t>(spec, "exchange_stream_words");
  const std::string machine_name = get<std::string>(spec, "machine").value_or("c600");
  job::PlanSearchSettings search{get<std::uint32_t>(spec, "optimization_steps").value_or(8),
                                 get<double>(spec, "search_seconds").value_or(0), false, progress};
  const compiler::ProfilingOptions profiling = profiling_of(spec);
  const std::uint32_t micro_batches = get<std::uint32_t>(spec, "micro_batches").value_or(1);
  py::gil_scoped_release release;
  const auto t0 = std::chrono::steady_clock::now();
  const model::ViTConfig config = model.config();
  const target::MachineDescription machine = target::machine_from_option(machine_name);
  compiler::CompileOptions options{compiler::Plan{{}, stream_words.value_or(compiler::kDefaultStreamWords)}, profiling};
  const PlanSpec plan{plan_json, plan_source, stream_words};
  if (machine.system.chips > 1) {
    compile_pipeline(*p, config, model.numerics(), machine, options, plan, search, micro_batches);
    p->compile_seconds = since(t0);
    return p;
  }
  if (micro_batches != 1)
    throw Error("micro_batches " + std::to_string(micro_batches) + ": machine " + machine_name +
                    " has one chip (micro-batches stream through the stages of a machine of several)",
                kExitUsage);
  compile_one_chip(*p, compiler::build_vit_graph(config, model.numerics()), machine, options, plan, search);
  p->compile_seconds = since(t0);
  return p;
}

// A model without a compile, for tilevit.reference: its shape, numerics (sums not split, as
// `tilevit reference` without --package) and weights; no package.
std::shared_ptr<Program> model_only(const py::dict& spec) {
  auto p = std::make_shared<Program>();
  ModelReader model(spec, *p);
  py::gil_scoped_release release;
  p->chip.config = model.config();
  p->chip.numerics = model.numerics();
  return p;
}

std::shared_ptr<Program> load(const std::string& path, std::uint64_t seed) {
  auto p = std::make_shared<Program>();
  p->weights->seed = seed;
  {
    py::gil_scoped_release release;
    const package::Container container = package::Container::open(path);
    const auto bytes = container.bytes();
    if (system::is_pipeline(container))
      adopt_pipeline(*p, std::vector<std::byte>(bytes.begin(), bytes.end()), path);
    else
      adopt_package(*p, std::vector<std::byte>(bytes.begin(), bytes.end()), path);
  }
  p->plan_origin = "as compiled into " + path;
  return p;
}

// One row per tile: its logical index and the memory map's summary of it (memory.json).
nlohmann::json memory_tiles(const compiler::Executable& chip) {
  nlohmann::json rows = nlohmann::json::array();
  {
    py::gil_scoped_release release;
    const profile::MemoryMap map = profile::build_memory_map(chip.machine, chip.program, chip.program.profiling.enabled);
    for (const profile::MemoryTile& tile : map.tiles) {
      const profile::MemoryTileSummary& t = tile.summary;
      rows.push_back({{"tile", tile.logical}, {"row", tile.row}, {"column", tile.column}, {"capacity", t.capacity},
                      {"allocations", t.allocations}, {"peak_bytes", t.peak_bytes}, {"peak_phase", t.peak_phase},
                      {"free_at_peak", t.free_at_peak}, {"largest_hole", t.largest_hole}, {"high_water", t.high_water},
                      {"fragmentation", t.fragmentation}, {"padding_bytes", t.padding_bytes}});
    }
  }
  return rows;
}

}  // namespace

std::shared_ptr<const model::ViTWeights> WeightOrigin::load(const model::ViTConfig& config) {
  const std::lock_guard lock(mutex_);
  if (loaded) return loaded;
  if (!model_dir.empty())
    loaded = std::make_shared<const model::ViTWeights>(model::load_weights(*formats::HfCheckpoint::open(model_dir), config));
  else
    loaded = std::make_shared<const model::ViTWeights>(model::load_weights(model::RandomModelSource(config, seed), config));
  return loaded;
}

std::string WeightOrigin::describe() const {
  return !model_dir.empty() ? model_dir : loaded ? "weights given in memory" : "random test model, seed " + std::to_string(seed);
}

void bind_program(py::module_& m) {
  py::class_<Program, std::shared_ptr<Program>>(m, "Program")
      .def_property_readonly("estimated_cycles", &Program::estimated_cycles)
      .def_property_readonly("summary", [](const Program& p) {
        if (p.pipeline) return to_python(system::pipeline_json(*p.pipeline));
        const compiler::ProgramSummary& s = p.summary;
        return to_python({{"tiles_used", s.tiles_used}, {"supersteps", s.supersteps},
                          {"executed_supersteps", s.executed_supersteps}, {"kernel_calls", s.kernel_calls},
                          {"transfers", s.transfers}, {"exchange_bytes_per_call", s.exchange_bytes},
                          {"weight_bytes", s.weight_bytes}, {"unique_weight_bytes", s.unique_weight_bytes},
                          {"estimated_cycles", s.estimated_cycles}, {"estimated_compute_cycles", s.estimated_compute_cycles},
                          {"estimated_exchange_cycles", s.estimated_exchange_cycles},
                          {"estimated_sync_cycles", s.estimated_sync_cycles}});
      })
      .def_property_readonly("sha256", [](const Program& p) { return p.sha256; })
      .def_property_readonly("package_bytes", [](const Program& p) { return p.bytes.size(); })
      .def_property_readonly("plan", [](const Program& p) { return to_python(p.plan); })
      .def_property_readonly("search_report", [](const Program& p) { return p.search ? to_python(*p.search) : py::none(); })
      .def_property_readonly("plan_origin", [](const Program& p) { return p.plan_origin; })
      .def_property_readonly("compile_seconds", [](const Program& p) { return p.compile_seconds; })
      .def_property_readonly("weights_origin", [](const Program& p) { return p.weights->describe(); })
      .def_property_readonly("config", [](const Program& p) { return to_python(nlohmann::json::parse(formats::hf_config_json(p.first().config))); })
      .def_property_readonly("model", [](const Program& p) { return p.first().config.name; })
      .def_property_readonly("layers", [](const Program& p) { return p.first().config.layers; })
      .def_property_readonly("batch", [](const Program& p) { return p.first().config.batch; })
      .def_property_readonly("image_size", [](const Program& p) { return p.first().config.image_size; })
      .def_property_readonly("machine", [](const Program& p) { return p.pipeline ? p.pipeline->machine.name : p.chip.machine.name; })
      .def_property_readonly("clock_hz", [](const Program& p) { return p.first().machine.clock_hz; })
      .def_property_readonly("chips", [](const Program& p) { return p.pipeline ? p.pipeline->machine.system.chips : 1u; })
      .def_property_readonly("micro_batches", [](const Program& p) { return p.pipeline ? p.pipeline->micro_batches : 1u; })
      .def("_steps", [](const Program& p) {
        return to_python(stage_rows(p, [](const compiler::Executable& c) { return job::steps_json(c.machine, c.program); }));
      })
      .def("_kernel_calls", [](const Program& p) {
        return to_python(stage_rows(p, [](const compiler::Executable& c) { return job::kernel_calls_json(c.machine, c.program); }));
      })
      .def("_memory_tiles", [](const Program& p) { return to_python(stage_rows(p, memory_tiles)); })
      .def("save", [](const Program& p, const std::string& path) {
        py::gil_scoped_release release;
        write_bytes_atomically(path, p.bytes);
      });
  m.def("_compile", &compile, py::arg("spec"));
  m.def("_load", &load, py::arg("path"), py::arg("seed") = 0);
  m.def("_model", &model_only, py::arg("spec"));
}

}  // namespace tilevit::python
