#pragma once
// A spec's points: the cartesian product of its axes in canonical key order, the last
// axis varying fastest, so point i is the same point for every run of the same spec. Each
// point has a stable id: a hash of everything that decides its result (the base machine's
// canonical text, its axis values, the device-run settings), so that a rerun recognises
// finished points by name even when the spec gained or lost values.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "compiler/plan.hpp"
#include "sweep/spec.hpp"

namespace tilevit::sweep {

struct SweepPoint {
  std::uint64_t index = 0;
  std::vector<AxisValue> values;  // one per spec axis, in the spec's axis order
  std::string id;                 // 16 lowercase hex digits
};

// What a point asks for: the spec's defaults where it has no axis.
struct PointSettings {
  std::string preset = "so400m";
  std::optional<int> layers;  // default: the preset's
  int batch = 1;
  std::uint32_t optimization_steps = 0;
  std::uint32_t exchange_stream_words = compiler::kDefaultStreamWords;
  std::vector<MachineSetting> machine;
};

// Point `index` (< spec.point_count()) of `spec` on the base machine whose canonical text
// is `base_text` (target::to_text).
SweepPoint point_at(const SweepSpec& spec, const std::string& base_text, std::uint64_t index);
std::vector<SweepPoint> expand_points(const SweepSpec& spec, const std::string& base_text);

PointSettings settings_of(const SweepSpec& spec, const SweepPoint& point);
// {"key": value, ...} of the point's axes.
nlohmann::json parameters_json(const SweepSpec& spec, const SweepPoint& point);

}  // namespace tilevit::sweep
