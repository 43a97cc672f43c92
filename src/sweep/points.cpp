#include "sweep/points.hpp"

#include <nlohmann/json.hpp>
#include <span>

#include "package/sha256.hpp"
#include "support/error.hpp"

namespace tilevit::sweep {

nlohmann::json parameters_json(const SweepSpec& spec, const SweepPoint& point) {
  nlohmann::json j = nlohmann::json::object();
  for (std::size_t a = 0; a < spec.axes.size(); ++a)
    std::visit([&](const auto& v) { j[spec.axes[a].key] = v; }, point.values.at(a));
  return j;
}

SweepPoint point_at(const SweepSpec& spec, const std::string& base_text, std::uint64_t index) {
  if (index >= spec.point_count())
    throw Error("point " + std::to_string(index) + ": the sweep has " + std::to_string(spec.point_count()) + " points",
                kExitUsage);
  SweepPoint point;
  point.index = index;
  point.values.resize(spec.axes.size());
  std::uint64_t rest = index;
  for (std::size_t a = spec.axes.size(); a-- > 0;) {  // the last axis varies fastest
    const auto& values = spec.axes[a].values;
    point.values[a] = values[rest % values.size()];
    rest /= values.size();
  }
  const nlohmann::json identity = {{"parameters", parameters_json(spec, point)},
                                   {"device_run", spec.device_run},
                                   {"seed", spec.seed},
                                   {"fp8_scale", spec.fp8_scale}};
  const std::string text = "tilevit-sweep-point 1\n" + base_text + "\n" + identity.dump();
  point.id = package::sha256_hex(std::as_bytes(std::span(text.data(), text.size()))).substr(0, 16);
  return point;
}

std::vector<SweepPoint> expand_points(const SweepSpec& spec, const std::string& base_text) {
  std::vector<SweepPoint> points;
  const std::uint64_t n = spec.point_count();
  points.reserve(n);
  for (std::uint64_t i = 0; i < n; ++i) points.push_back(point_at(spec, base_text, i));
  return points;
}

PointSettings settings_of(const SweepSpec& spec, const SweepPoint& point) {
  PointSettings s;
  for (std::size_t a = 0; a < spec.axes.size(); ++a) {
    const Axis& axis = spec.axes[a];
    const AxisValue& v = point.values.at(a);
    if (axis.machine != nullptr) {
      s.machine.emplace_back(axis.machine, std::get<std::uint64_t>(v));
      continue;
    }
    if (axis.key == "preset") s.preset = std::get<std::string>(v);
    const auto n = std::holds_alternative<std::uint64_t>(v) ? std::get<std::uint64_t>(v) : 0;
    if (axis.key == "layers") s.layers = static_cast<int>(n);
    if (axis.key == "batch") s.batch = static_cast<int>(n);
    if (axis.key == "optimization_steps") s.optimization_steps = static_cast<std::uint32_t>(n);
    if (axis.key == "exchange_stream_words") s.exchange_stream_words = static_cast<std::uint32_t>(n);
  }
  return s;
}

}  // namespace tilevit::sweep
