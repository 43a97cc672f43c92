// tilevit.Device, its calls and their Profile, and tilevit.reference: the run job's
// device (weights uploaded once, then resident calls) and the host references, the GIL
// released while they work.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "device/device.hpp"
#include "formats/image.hpp"
#include "job/run_job.hpp"
#include "model/random_model.hpp"
#include "profile/analysis.hpp"
#include "profile/bounds.hpp"
#include "profile/compare.hpp"
#include "profile/compare_html.hpp"
#include "profile/profile_file.hpp"
#include "profile/timeline_html.hpp"
#include "profile/trace.hpp"
#include "python/bindings.hpp"
#include "reference/forward.hpp"
#include "support/atomic_file.hpp"
#include "support/error.hpp"
#include "support/threads.hpp"
#include "system/pipeline_device.hpp"

namespace tilevit::python {
namespace {

job::RunPackage run_package(const Program& p) {
  job::RunPackage package;
  package.sha256 = p.sha256;
  package.plan_origin = p.plan_origin;
  if (p.pipeline)
    package.pipeline = &*p.pipeline;
  else
    package.chip = &p.chip;
  return package;
}

// A call's images: float32 [B, 3, S, S] (preprocessed), image paths (the checkpoint's
// preprocessing), or none (the random test model's images of the seed). B: the batch times
// a pipeline's micro-batches.
std::vector<std::vector<float>> call_images(const Program& program, const py::object& images,
                                            const std::vector<std::string>& paths, std::uint64_t seed) {
  std::vector<std::vector<float>> out;
  const model::ViTConfig& config = program.first().config;
  const std::size_t batch = program.images_per_call();
  if (!images.is_none()) {
    auto a = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(images);
    const std::vector<py::ssize_t> want = {py::ssize_t(batch), 3, config.image_size, config.image_size};
    if (!a || a.ndim() != 4 || std::vector<py::ssize_t>(a.shape(), a.shape() + 4) != want)
      throw Error("images: expected float32 [" + std::to_string(batch) + ", 3, " + std::to_string(config.image_size) +
                      ", " + std::to_string(config.image_size) + "] (the program's images per call and image size)",
                  kExitUsage);
    const std::size_t per = std::size_t(a.size()) / batch;
    for (std::size_t b = 0; b < batch; ++b) out.emplace_back(a.data() + b * per, a.data() + (b + 1) * per);
    return out;
  }
  py::gil_scoped_release release;
  if (!paths.empty() && paths.size() != batch)
    throw Error("the program takes " + std::to_string(batch) + " images per call; " + std::to_string(paths.size()) +
                    " given",
                kExitUsage);
  for (std::size_t b = 0; b < batch; ++b)
    out.push_back(paths.empty() ? model::random_image(config, seed, int(b)) : formats::load_image_input(paths[b], config));
  return out;
}

py::array_t<float> as_array(const std::vector<float>& values, std::vector<std::int64_t> shape) {
  py::array_t<float> a(std::vector<py::ssize_t>(shape.begin(), shape.end()));
  std::copy(values.begin(), values.end(), a.mutable_data());
  return a;
}

class Device {
 public:
  Device(std::shared_ptr<Program> program, int threads) : program_(std::move(program)) {
    py::gil_scoped_release release;
    set_host_threads(threads);
    weights_ = program_->weights->load(program_->first().config);
    if (program_->pipeline)
      device_ = std::make_unique<system::PipelineDevice>(*program_->pipeline, 0, program_->pipeline->machine.system.chips);
    else
      device_ = std::make_unique<device::Device>(program_->chip);
    const auto t0 = std::chrono::steady_clock::now();
    device_->upload_weights(*weights_);
    upload_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  // One resident call: the embeddings and the call's figures (job::CallRecord).
  py::dict call(const py::object& images, const std::vector<std::string>& paths, std::uint64_t seed) {
    const auto in = call_images(*program_, images, paths, seed);
    device::CallResult result;
    job::CallRecord record;
    {
      py::gil_scoped_release release;
      const std::lock_guard lock(mutex_);  // one call at a time on one device
      result = device_->call(in);
      record = job::call_record(run_package(*program_), calls_++, result);
    }
    std::vector<std::int64_t> shape = program_->first().config.output_shape();
    shape[0] = std::int64_t(in.size());
    using namespace pybind11::literals;
    return py::dict("embeddings"_a = as_array(result.output, shape), "index"_a = record.index,
                    "cycles"_a = record.device_cycles, "device_ms"_a = record.device_ms,
                    "images_per_second"_a = record.images_per_second, "upload_ms"_a = record.upload_ms,
                    "execute_ms"_a = record.execute_ms, "download_ms"_a = record.download_ms);
  }

  double upload_seconds() const { return upload_seconds_; }
  const std::shared_ptr<Program>& program() const { return program_; }

 private:
  std::shared_ptr<Program> program_;
  std::shared_ptr<const model::ViTWeights> weights_;
  std::unique_ptr<device::Runner> device_;  // one chip's device, or a pipeline's
  double upload_seconds_ = 0;
  int calls_ = 0;
  std::mutex mutex_;
};

using ProfilePtr = std::shared_ptr<const profile::Profile>;

// `profile query --json`'s rows (an operation's with its bound and achieved/bound ratio).
py::object query(const ProfilePtr& p, const std::string& group_by, const std::string& view) {
  const profile::GroupBy by = profile::group_by_from_string(group_by);
  const profile::QueryView in = profile::query_view_from_string(view);
  const auto rows = profile::query_profile(*p, by, in);
  const profile::BoundReport bounds = profile::bound_report(*p);
  const bool operation_rows = by == profile::GroupBy::operation && in == profile::QueryView::model;
  return to_python(profile::query_rows_json(rows, operation_rows ? &bounds.operations : nullptr, rows.size()));
}

py::object step_records(const ProfilePtr& p) {
  nlohmann::json j = nlohmann::json::array();
  for (const profile::StepSpan& s : profile::step_spans(*p))
    j.push_back({{"step", s.key}, {"start", s.start}, {"end", s.end}, {"cycles", s.end - s.start}});
  return to_python(j);
}

py::dict totals(const ProfilePtr& p) {
  using namespace pybind11::literals;
  py::dict d("span"_a = p->span, "uncalibrated_compute_cycles"_a = p->uncalibrated_compute_cycles, "tiles"_a = p->tiles,
             "steps"_a = p->steps, "model"_a = p->model, "machine"_a = p->machine_name, "plan"_a = p->plan,
             "package_sha256"_a = p->package_sha256,
             "granularity"_a = std::string(compiler::to_string(p->options.granularity)));
  for (std::size_t k = 0; k < profile::kSampleKinds; ++k)
    d[py::str(std::string(profile::to_string(profile::SampleKind(k))) + "_cycles")] = p->tile_cycles[k];
  return d;
}

void save(const std::string& path, const std::function<std::string()>& text) {
  py::gil_scoped_release release;
  write_text_atomically(path, text());
}

py::dict reference(const std::shared_ptr<Program>& program, const py::object& images, const std::vector<std::string>& paths,
                   std::uint64_t seed, bool fp32, bool device_numerics) {
  const model::ViTConfig& config = program->first().config;
  const auto in = call_images(*program, images, paths, seed);
  std::vector<float> a, b;
  {
    py::gil_scoped_release release;
    const auto weights = program->weights->load(config);
    if (fp32) a = reference::forward_fp32(*weights, in);
    if (device_numerics) b = job::device_numerics_forward(run_package(*program), {*weights, in});
  }
  std::vector<std::int64_t> shape = config.output_shape();
  shape[0] = std::int64_t(in.size());
  py::dict d;
  d["fp32"] = fp32 ? py::object(as_array(a, shape)) : py::none();
  d["device"] = device_numerics ? py::object(as_array(b, shape)) : py::none();
  return d;
}

// `tilevit profile compare A B --json`, and compare.html written to path when one is given.
py::object compare(const ProfilePtr& a, const ProfilePtr& b, const std::string& path, const std::string& name_a,
                   const std::string& name_b, std::size_t limit) {
  nlohmann::json out;
  {
    py::gil_scoped_release release;
    const auto report = profile::compare_profiles(*a, *b);
    if (!path.empty()) write_text_atomically(path, profile::render_compare_html(*a, *b, name_a, name_b));
    out = profile::compare_json(report, *a, *b, name_a, name_b, limit);
    if (!path.empty()) out["output"] = path;
  }
  return to_python(out);
}

}  // namespace

std::shared_ptr<const profile::Profile> Program::profile() {
  const std::lock_guard lock(mutex_);
  if (!profile_) {
    if (!first().program.profiling.enabled)
      throw Error("the program was compiled without profiling (profile=None): it records no profile", kExitUsage);
    profile_ = std::make_shared<const profile::Profile>(job::call_profile(run_package(*this)));
  }
  return profile_;
}

void bind_device(py::module_& m) {
  py::class_<Device>(m, "_Device")
      .def(py::init<std::shared_ptr<Program>, int>(), py::arg("program"), py::arg("threads") = 0)
      .def("call", &Device::call, py::arg("images"), py::arg("paths"), py::arg("seed"))
      .def_property_readonly("upload_seconds", &Device::upload_seconds)
      .def_property_readonly("program", &Device::program);
  py::class_<profile::Profile, std::shared_ptr<profile::Profile>>(m, "_Profile")
      .def("totals", [](const ProfilePtr& p) { return totals(p); })
      .def("query", &query, py::arg("group_by"), py::arg("view") = "model")
      .def("steps", &step_records)
      .def("bounds", [](const ProfilePtr& p) { return to_python(profile::to_json(profile::bound_report(*p), SIZE_MAX)); })
      .def("diff", [](const ProfilePtr& a, const ProfilePtr& b, std::size_t limit) {
        return to_python(profile::to_json(profile::diff_profiles(*a, *b), limit));
      })
      .def("compare", &compare, py::arg("other"), py::arg("path"), py::arg("name_a"), py::arg("name_b"),
           py::arg("limit"))
      .def("save", [](const ProfilePtr& p, const std::string& path) {
        py::gil_scoped_release release;
        profile::write_profile(path, *p);
      })
      .def("save_html", [](const ProfilePtr& p, const std::string& path) {
        save(path, [&] { return profile::render_timeline_html(*p, profile::peaks_of(*p)); });
      })
      .def("save_trace", [](const ProfilePtr& p, const std::string& path) {
        save(path, [&] { return profile::chrome_trace_json(*p); });
      });
  m.def("_profile", [](const std::shared_ptr<Program>& p) {
    py::gil_scoped_release release;
    return std::const_pointer_cast<profile::Profile>(p->profile());
  });
  m.def("_read_profile", [](const std::string& path) {
    py::gil_scoped_release release;
    return std::make_shared<profile::Profile>(profile::read_profile(path));
  });
  m.def("_reference", &reference, py::arg("program"), py::arg("images"), py::arg("paths"), py::arg("seed"),
        py::arg("fp32") = true, py::arg("device") = true);
}

}  // namespace tilevit::python
