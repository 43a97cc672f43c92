#include "target/kernel_measurements.hpp"

#include <nlohmann/json.hpp>

#include "support/error.hpp"

namespace tilevit::target {

namespace {

constexpr std::size_t kMaxEntries = 100'000;
constexpr std::size_t kMaxText = 4096;
constexpr std::uint64_t kMaxDim = detail::kMaxMeasuredDim;
constexpr std::uint64_t kMaxCycles = detail::kMaxMeasuredCycles;
std::string type_of(const nlohmann::json& v) { return detail::json_type_of(v); }

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
int days_from_civil(int y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int>(doe) - 719468;
}

nlohmann::json parse_json(std::string_view text, const std::string& source) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(source + ": not valid JSON (byte " + std::to_string(e.byte) + ")");
  } catch (const nlohmann::json::exception& e) {
    throw Error(source + ": a number is out of range (" + e.what() + ")");
  }
}

class EntryReader {
 public:
  EntryReader(const nlohmann::json& entry, std::string where) : entry_(entry), where_(std::move(where)) {}
  Error error(std::string_view field, const std::string& what) const {
    return Error(where_ + "." + std::string(field) + ": " + what);
  }
  std::string text(std::string_view field, bool required) const {
    const std::string name(field);
    if (!entry_.contains(name)) {
      if (required) throw error(field, "missing required field");
      return {};
    }
    const auto& v = entry_.at(name);
    if (!v.is_string()) throw error(field, "expected a string, got " + type_of(v));
    if (v.get_ref<const std::string&>().size() > kMaxText)
      throw error(field, "string of " + std::to_string(v.get_ref<const std::string&>().size()) +
                             " bytes exceeds the limit of " + std::to_string(kMaxText));
    return v.get<std::string>();
  }
  // An integer in [min, max], or null / absent when `nullable`.
  std::optional<std::uint64_t> integer(std::string_view field, std::uint64_t min, std::uint64_t max, bool nullable) const {
    const std::string name(field);
    if (!entry_.contains(name) || entry_.at(name).is_null()) {
      if (nullable) return std::nullopt;
      throw error(field, "missing required field");
    }
    const auto& v = entry_.at(name);
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() < min || v.get<std::uint64_t>() > max)
      throw error(field, "expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]" +
                             (nullable ? " or null" : "") + ", got " + type_of(v));
    return v.get<std::uint64_t>();
  }
  const std::string& where() const { return where_; }

 private:
  const nlohmann::json& entry_;
  std::string where_;
};

}  // namespace

std::string detail::json_type_of(const nlohmann::json& v) {
  if (v.is_number_unsigned()) return "non-negative integer " + v.dump();
  if (v.is_number_integer()) return v.dump();
  if (v.is_number_float()) return "number " + v.dump();
  return v.type_name();
}

std::optional<int> parse_day(std::string_view s) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return std::nullopt;
  int value[3] = {0, 0, 0};
  const std::size_t starts[] = {0, 5, 8}, lengths[] = {4, 2, 2};
  for (int part = 0; part < 3; ++part)
    for (std::size_t i = starts[part]; i < starts[part] + lengths[part]; ++i) {
      if (s[i] < '0' || s[i] > '9') return std::nullopt;
      value[part] = value[part] * 10 + (s[i] - '0');
    }
  static constexpr int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (value[1] < 1 || value[1] > 12 || value[2] < 1 || value[2] > kDays[value[1] - 1]) return std::nullopt;
  return days_from_civil(value[0], static_cast<unsigned>(value[1]), static_cast<unsigned>(value[2]));
}

std::string day_text(int day) {
  // civil_from_days (H. Hinnant)
  const int z = day + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1, m = mp < 10 ? mp + 3 : mp - 9;
  const int y = static_cast<int>(yoe) + era * 400 + (m <= 2);
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "%04d-%02u-%02u", y, m, d);
  return buffer;
}

MeasurementDate parse_measurement_date(std::string_view text, const std::string& where) {
  MeasurementDate date;
  std::string_view rest = text;
  if (rest.ends_with(" (old)")) date.old = true, rest.remove_suffix(6);
  std::string day(rest.substr(0, 10));
  if (rest.size() == 13 && rest[10] == '/') day = std::string(rest.substr(0, 8)) + std::string(rest.substr(11, 2));
  else if (rest.size() != 10) day.clear();
  const auto parsed = parse_day(day);
  if (!parsed)
    throw Error(where + ": expected a date YYYY-MM-DD, optionally \"/DD\" or \" (old)\", got \"" + std::string(text) + "\"");
  date.day = *parsed;
  return date;
}

bool is_kernel_measurements_format(std::string_view json_text) {
  try {
    const auto doc = nlohmann::json::parse(json_text);
    const auto& list = doc.at("measurements");
    return list.is_array() && !list.empty() && list[0].is_object() && list[0].contains("date");
  } catch (const nlohmann::json::exception&) {
    return false;  // the parser of either format reports what is wrong
  }
}

std::vector<KernelMeasurement> parse_kernel_measurements(std::string_view json_text, const std::string& source) {
  const nlohmann::json doc = parse_json(json_text, source);
  if (!doc.is_object()) throw Error(source + ": expected a JSON object at the top level, got " + type_of(doc));
  for (const auto& [key, value] : doc.items()) {
    if (key == "about" && !value.is_string()) throw Error(source + ": about: expected a string, got " + type_of(value));
    if (key == "clock_hz" && !(value.is_number_unsigned() && value.get<std::uint64_t>() > 0))
      throw Error(source + ": clock_hz: expected a positive integer, got " + type_of(value));
    if (key != "about" && key != "clock_hz" && key != "measurements")
      throw Error(source + ": " + key + ": unknown field (expected about, clock_hz, measurements)");
  }
  if (!doc.contains("measurements")) throw Error(source + ": measurements: missing required field");
  const auto& list = doc["measurements"];
  if (!list.is_array()) throw Error(source + ": measurements: expected an array, got " + type_of(list));
  if (list.size() > kMaxEntries)
    throw Error(source + ": measurements: " + std::to_string(list.size()) + " entries exceed the limit of " +
                std::to_string(kMaxEntries));
  static constexpr std::string_view kFields[] = {"kernel", "precision", "rows", "keys", "cycles",
                                                 "mode",   "date",      "shape", "note", "source"};
  std::vector<KernelMeasurement> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string where = source + ": measurements[" + std::to_string(i) + "]";
    if (!list[i].is_object()) throw Error(where + ": expected an object, got " + type_of(list[i]));
    const EntryReader r(list[i], where);
    for (const auto& [key, value] : list[i].items())
      if (std::find(std::begin(kFields), std::end(kFields), key) == std::end(kFields))
        throw r.error(key, "unknown field (expected kernel, precision, rows, keys, cycles, mode, date, shape, note, source)");
    KernelMeasurement m;
    m.kernel = r.text("kernel", true);
    if (m.kernel.empty()) throw r.error("kernel", "empty kernel name");
    m.precision = r.text("precision", false);
    m.rows = r.integer("rows", 0, kMaxDim, true);
    m.keys = r.integer("keys", 0, kMaxDim, true);
    m.cycles = *r.integer("cycles", 1, kMaxCycles, false);
    m.mode = r.text("mode", false);
    m.date_text = r.text("date", true);
    m.date = parse_measurement_date(m.date_text, where + ".date");
    m.shape = r.text("shape", false);
    m.note = r.text("note", false);
    m.source = r.text("source", false);
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace tilevit::target
