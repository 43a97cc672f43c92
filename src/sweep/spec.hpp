#pragma once
// A sweep specification (JSON, docs/SWEEP.md): a base machine, axes of values for machine
// keys (machine_keys.hpp), the model (preset, layers, batch) and the plan (optimization
// steps, exchange stream words), and whether each point also runs on the device model.
// The parser is bounded (text size, values per axis, points) and strict: an unknown key,
// a value of the wrong type or out of range, or an empty range is one line naming it.
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "sweep/machine_keys.hpp"

namespace tilevit::sweep {

inline constexpr int kSpecVersion = 1;
inline constexpr std::size_t kMaxSpecBytes = 1 << 20;
inline constexpr std::size_t kMaxAxisValues = 100000;
inline constexpr std::uint64_t kMaxPoints = 1000000;

using AxisValue = std::variant<std::uint64_t, std::string>;

// One axis: a key and its values in the order the spec gives (a range ascending).
struct Axis {
  std::string key;
  const MachineKey* machine = nullptr;  // the machine key, or nullptr for a model or plan key
  std::vector<AxisValue> values;
};

struct SweepSpec {
  std::string machine = "c600";  // an embedded name, or a machine file (absolute once read from a file)
  std::vector<Axis> axes;        // in the canonical key order (sweep_keys()), the last varies fastest
  bool device_run = false;       // also run each point once on the device model (random model)
  std::uint64_t seed = 0;        // of the random model and images (device runs)
  int fp8_scale = -4;
  std::uint64_t point_count() const;
};

// Every axis key in canonical order: the model and plan keys, then machine_keys().
std::vector<std::string> sweep_keys();

// Parses and checks `text`; `source` prefixes every error ("<source>: axes.tiles: ...").
// A relative machine file is taken relative to `base_directory`. Throws Error(kExitBadInput).
SweepSpec parse_sweep_spec(const std::string& text, const std::string& source, const std::string& base_directory);
// Reads `path` (at most kMaxSpecBytes), parses it and checks its base machine.
SweepSpec read_sweep_spec(const std::string& path);
// The spec's base machine, read; a system of several chips is refused (Error naming
// `source` and the machine, kExitBadInput): a sweep costs one chip.
target::MachineDescription base_machine(const SweepSpec& spec, const std::string& source);

// The spec as canonical JSON (axes as explicit value lists): parse_sweep_spec of its dump
// gives the same spec. What a sweep directory keeps as spec.json.
nlohmann::json to_json(const SweepSpec& spec);

std::string axis_value_text(const AxisValue& value);

}  // namespace tilevit::sweep
