#include "sweep/spec.hpp"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "compiler/plan.hpp"
#include "model/config.hpp"
#include "support/atomic_file.hpp"
#include "support/error.hpp"
#include "target/machine.hpp"

namespace tilevit::sweep {
namespace {

using nlohmann::json;

// The model and plan keys: their names and bounds (machine keys carry their own).
struct OtherKey {
  const char* name;
  std::uint64_t min, max;
  bool text;  // values are strings
};
constexpr OtherKey kOtherKeys[] = {
    {"preset", 0, 0, true},
    {"layers", 1, 1024, false},
    {"batch", 1, 64, false},
    {"optimization_steps", 0, 100000, false},
    {"exchange_stream_words", compiler::kMinStreamWords, compiler::kMaxStreamWords, false},
};

struct KeyBounds {
  std::uint64_t min = 0, max = 0;
  bool text = false;
};

bool find_bounds(const std::string& key, KeyBounds& bounds) {
  for (const OtherKey& k : kOtherKeys)
    if (key == k.name) {
      bounds = {k.min, k.max, k.text};
      return true;
    }
  if (const MachineKey* m = find_machine_key(key)) {
    bounds = {m->min, m->max, false};
    return true;
  }
  return false;
}

std::string key_list() {
  std::string out;
  for (const std::string& k : sweep_keys()) out += (out.empty() ? "" : ", ") + k;
  return out;
}

std::uint64_t whole_number(const json& v, std::uint64_t min, std::uint64_t max, const std::string& where) {
  if (!v.is_number_unsigned() || v.get<std::uint64_t>() < min || v.get<std::uint64_t>() > max)
    throw Error(where + ": expected a whole number in " + std::to_string(min) + ".." + std::to_string(max) + ", not " +
                v.dump());
  return v.get<std::uint64_t>();
}

// {"from": a, "to": b, "step": s} or {"from": a, "to": b, "factor": f}, ascending.
std::vector<AxisValue> range_values(const json& r, const KeyBounds& b, const std::string& where) {
  for (const auto& item : r.items())
    if (item.key() != "from" && item.key() != "to" && item.key() != "step" && item.key() != "factor")
      throw Error(where + ": unknown key \"" + item.key() + "\" (a range has from, to, and step or factor)");
  if (!r.contains("from") || !r.contains("to") || r.contains("step") == r.contains("factor"))
    throw Error(where + ": a range needs from, to, and one of step or factor");
  const std::uint64_t from = whole_number(r["from"], b.min, b.max, where + ".from");
  const std::uint64_t to = whole_number(r["to"], b.min, b.max, where + ".to");
  if (from > to) throw Error(where + ": empty range (from " + std::to_string(from) + " > to " + std::to_string(to) + ")");
  std::vector<AxisValue> values;
  if (r.contains("step")) {
    const std::uint64_t step = whole_number(r["step"], 1, b.max, where + ".step");
    if ((to - from) / step >= kMaxAxisValues)
      throw Error(where + ": more than " + std::to_string(kMaxAxisValues) + " values");
    for (std::uint64_t v = from; v <= to && v >= from; v += step) values.emplace_back(v);
  } else {
    const std::uint64_t factor = whole_number(r["factor"], 2, 1u << 20, where + ".factor");
    for (std::uint64_t v = from; v <= to; v *= factor) {
      values.emplace_back(v);
      if (v > to / factor) break;
    }
  }
  return values;
}

// A preset name is checked here, so that a typo is the spec's error before any point runs.
void check_preset(const std::string& name, const std::string& where) {
  try {
    (void)model::ViTConfig::preset(name);
  } catch (const Error& e) {
    throw Error(where + ": " + e.what());
  }
}

std::vector<AxisValue> list_values(const json& list, const KeyBounds& b, const std::string& where) {
  if (list.empty()) throw Error(where + ": empty range (no values)");
  if (list.size() > kMaxAxisValues) throw Error(where + ": more than " + std::to_string(kMaxAxisValues) + " values");
  std::vector<AxisValue> values;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = where + "[" + std::to_string(i) + "]";
    if (b.text) {
      if (!list[i].is_string() || list[i].get<std::string>().empty() || list[i].get<std::string>().size() > 256)
        throw Error(at + ": expected a name (a short string), not " + list[i].dump());
      values.emplace_back(list[i].get<std::string>());
      check_preset(list[i].get<std::string>(), at);
    } else {
      values.emplace_back(whole_number(list[i], b.min, b.max, at));
    }
    if (std::find(values.begin(), values.end() - 1, values.back()) != values.end() - 1)
      throw Error(at + ": " + list[i].dump() + " appears twice");
  }
  return values;
}

Axis parse_axis(const std::string& key, const json& v, const std::string& source) {
  const std::string where = source + ": axes." + key;
  KeyBounds bounds;
  if (!find_bounds(key, bounds)) throw Error(where + ": unknown key \"" + key + "\" (sweepable: " + key_list() + ")");
  Axis axis{key, find_machine_key(key), {}};
  if (v.is_array())
    axis.values = list_values(v, bounds, where);
  else if (v.is_object() && !bounds.text)
    axis.values = range_values(v, bounds, where);
  else
    throw Error(where + ": expected a list of values" + (bounds.text ? "" : " or a range {from, to, step|factor}"));
  return axis;
}

// Keys a spec may not sweep together (a machine key's `excludes`).
void check_exclusions(const std::vector<Axis>& axes, const std::string& source) {
  for (const Axis& a : axes)
    if (a.machine != nullptr && !a.machine->excludes.empty())
      for (const Axis& b : axes)
        if (b.key == a.machine->excludes)
          throw Error(source + ": axes." + a.key + " and axes." + b.key + " set the same figure: sweep one of them");
}

std::string machine_field(const json& v, const std::string& source, const std::string& base_directory) {
  if (!v.is_string() || v.get<std::string>().empty() || v.get<std::string>().size() > 4096)
    throw Error(source + ": machine: expected an embedded machine name or a machine file path");
  const std::string name = v.get<std::string>();
  if (target::builtin_machine(name) != nullptr) return name;
  // Absolute, so that a sweep directory's spec.json names the same file from anywhere.
  const std::filesystem::path path(name);
  return std::filesystem::absolute(path.is_absolute() ? path : std::filesystem::path(base_directory) / path)
      .lexically_normal()
      .string();
}

// JSON text with every object's keys distinct: nlohmann keeps the last of equal keys,
// which would silently drop a value the spec gives.
json parse_without_duplicate_keys(const std::string& text, const std::string& source) {
  std::vector<std::vector<std::string>> open;  // the keys of each open object, innermost last
  const json::parser_callback_t check = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) open.emplace_back();
    if (event == json::parse_event_t::object_end && !open.empty()) open.pop_back();
    if (event == json::parse_event_t::key && !open.empty()) {
      const std::string key = parsed.get<std::string>();
      if (std::find(open.back().begin(), open.back().end(), key) != open.back().end())
        throw Error(source + ": key \"" + key + "\" appears twice in one object");
      open.back().push_back(key);
    }
    return true;
  };
  try {
    return json::parse(text, check);
  } catch (const json::exception& e) {
    throw Error(source + ": not a sweep spec (" + std::string(e.what()) + ")");
  }
}

}  // namespace

std::vector<std::string> sweep_keys() {
  std::vector<std::string> keys;
  for (const OtherKey& k : kOtherKeys) keys.emplace_back(k.name);
  for (const MachineKey& k : machine_keys()) keys.emplace_back(k.name);
  return keys;
}

std::uint64_t SweepSpec::point_count() const {
  std::uint64_t n = 1;
  for (const Axis& a : axes) n *= a.values.size();
  return n;
}

SweepSpec parse_sweep_spec(const std::string& text, const std::string& source, const std::string& base_directory) {
  if (text.size() > kMaxSpecBytes)
    throw Error(source + ": " + std::to_string(text.size()) + " B is larger than a sweep spec can be (" +
                std::to_string(kMaxSpecBytes) + " B)");
  const json j = parse_without_duplicate_keys(text, source);
  if (!j.is_object()) throw Error(source + ": expected a JSON object");
  for (const auto& item : j.items())
    if (item.key() != "tilevit_sweep" && item.key() != "machine" && item.key() != "axes" &&
        item.key() != "device_run" && item.key() != "seed" && item.key() != "fp8_scale")
      throw Error(source + ": unknown key \"" + item.key() + "\"");
  if (!j.contains("tilevit_sweep") || j["tilevit_sweep"] != kSpecVersion)
    throw Error(source + ": tilevit_sweep: expected " + std::to_string(kSpecVersion) + " (the format version)");
  SweepSpec spec;
  if (j.contains("machine")) spec.machine = machine_field(j["machine"], source, base_directory);
  if (j.contains("device_run")) {
    if (!j["device_run"].is_boolean()) throw Error(source + ": device_run: expected true or false");
    spec.device_run = j["device_run"].get<bool>();
  }
  if (j.contains("seed")) spec.seed = whole_number(j["seed"], 0, UINT64_MAX, source + ": seed");
  if (j.contains("fp8_scale")) {
    const json& s = j["fp8_scale"];
    if (!s.is_number_integer() || s.get<std::int64_t>() < -31 || s.get<std::int64_t>() > 31)
      throw Error(source + ": fp8_scale: expected a whole number in -31..31, not " + s.dump());
    spec.fp8_scale = static_cast<int>(s.get<std::int64_t>());
  }
  if (!j.contains("axes") || !j["axes"].is_object()) throw Error(source + ": axes: expected an object of key: values");
  for (const auto& item : j["axes"].items())  // validated in the spec's order, so the first bad key is named
    spec.axes.push_back(parse_axis(item.key(), item.value(), source));
  const std::vector<std::string> order = sweep_keys();
  std::sort(spec.axes.begin(), spec.axes.end(), [&](const Axis& a, const Axis& b) {
    return std::find(order.begin(), order.end(), a.key) < std::find(order.begin(), order.end(), b.key);
  });
  check_exclusions(spec.axes, source);
  std::uint64_t points = 1;
  for (const Axis& a : spec.axes) {
    points *= a.values.size();
    if (points > kMaxPoints) throw Error(source + ": more than " + std::to_string(kMaxPoints) + " points");
  }
  return spec;
}

SweepSpec read_sweep_spec(const std::string& path) {
  const std::string text = read_text_file(path, kMaxSpecBytes);
  SweepSpec spec = parse_sweep_spec(text, path, std::filesystem::path(path).parent_path().string());
  (void)base_machine(spec, path);  // a missing, invalid or multi-chip machine is the spec's error
  return spec;
}

target::MachineDescription base_machine(const SweepSpec& spec, const std::string& source) {
  target::MachineDescription machine = target::machine_from_option(spec.machine);
  if (machine.system.chips > 1)
    throw Error(source + ": machine: \"" + spec.machine + "\" is a system of " + std::to_string(machine.system.chips) +
                " chips; a sweep costs one chip (compile and run cost a pipeline over several chips: docs/SCALE_OUT.md)");
  return machine;
}

json to_json(const SweepSpec& spec) {
  json j = {{"tilevit_sweep", kSpecVersion}, {"machine", spec.machine}, {"device_run", spec.device_run},
            {"seed", spec.seed}, {"fp8_scale", spec.fp8_scale}, {"axes", json::object()}};
  for (const Axis& a : spec.axes) {
    json values = json::array();
    for (const AxisValue& v : a.values)
      std::visit([&](const auto& x) { values.push_back(x); }, v);
    j["axes"][a.key] = values;
  }
  return j;
}

std::string axis_value_text(const AxisValue& value) {
  if (const auto* s = std::get_if<std::string>(&value)) return *s;
  return std::to_string(std::get<std::uint64_t>(value));
}

}  // namespace tilevit::sweep
