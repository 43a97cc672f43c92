#include "compiler/plan_file.hpp"

#include <filesystem>
#include <fstream>
#include <set>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "support/error.hpp"

namespace tilevit::compiler {
namespace {

using nlohmann::json;

// A JSON object's keys must all be known: an unknown one is a typo the plan would ignore.
// `optional` keys may be missing.
void check_keys(const json& object, std::initializer_list<const char*> known, const std::string& where,
                std::initializer_list<const char*> optional = {}) {
  if (!object.is_object()) throw Error(where + ": expected an object");
  for (const auto& item : object.items()) {
    bool ok = false;
    for (const char* k : known) ok |= item.key() == k;
    for (const char* k : optional) ok |= item.key() == k;
    if (!ok) throw Error(where + ": unknown field \"" + item.key() + "\"");
  }
  for (const char* k : known)
    if (!object.contains(k)) throw Error(where + ": missing field \"" + k + "\"");
}

std::uint32_t count_field(const json& object, const char* key, std::uint32_t max, const std::string& where) {
  const json& v = object.at(key);
  if (!v.is_number_unsigned() || v.get<std::uint64_t>() < 1 || v.get<std::uint64_t>() > max)
    throw Error(where + "." + key + ": expected a whole number in 1.." + std::to_string(max) + ", not " + v.dump());
  return static_cast<std::uint32_t>(v.get<std::uint64_t>());
}

std::string string_field(const json& object, const char* key, const std::string& where) {
  const json& v = object.at(key);
  if (!v.is_string() || v.get<std::string>().size() > 256) throw Error(where + "." + key + ": expected a short string");
  return v.get<std::string>();
}

// An optional list of op names (each at most once).
std::set<std::string> op_names(const json& object, const char* key, const std::string& where) {
  std::set<std::string> names;
  if (!object.contains(key)) return names;
  const json& v = object.at(key);
  if (!v.is_array()) throw Error(where + ": " + key + ": expected an array of op names");
  for (const json& name : v) {
    if (!name.is_string() || name.get<std::string>().empty() || name.get<std::string>().size() > 256)
      throw Error(where + ": " + key + ": expected op names, not " + name.dump());
    if (!names.insert(name.get<std::string>()).second)
      throw Error(where + ": " + key + ": op " + name.get<std::string>() + " named twice");
  }
  return names;
}

std::string describe(const PlanTarget& t) {
  return t.model + " batch " + std::to_string(t.batch) + " on " + t.machine + " (" + std::to_string(t.tiles) + " tiles)";
}

}  // namespace

PlanTarget plan_target(const model::ViTConfig& config, const target::MachineDescription& machine) {
  return {config.name, static_cast<std::uint32_t>(config.batch), machine.name, machine.tiles};
}

std::string plan_file_text(const PlanFile& plan) {
  json j;
  j["tilevit_plan"] = plan.exchange_stream_words != 0 ? kPlanFileVersion : 1;
  j["model"] = plan.target.model;
  j["batch"] = plan.target.batch;
  j["machine"] = plan.target.machine;
  j["tiles"] = plan.target.tiles;
  if (plan.exchange_stream_words != 0) j["exchange_stream_words"] = plan.exchange_stream_words;
  j["gemm"] = json::object();
  for (const auto& [op, s] : plan.pins.gemm) {
    j["gemm"][op] = {{"r", s.r}, {"k", s.k}, {"c", s.c}};
    if (s.column_quantum != 0) j["gemm"][op]["column_quantum"] = s.column_quantum;
  }
  j["attention"] = json::object();
  for (const auto& [op, b] : plan.pins.attention)
    j["attention"][op] = {{"query_block", b.query_block}, {"key_block", b.key_block}};
  if (!plan.pins.tile_offsets.empty()) j["tile_offsets"] = plan.pins.tile_offsets;
  if (!plan.pins.fp8_attention.empty()) j["fp8_attention"] = plan.pins.fp8_attention;
  if (!plan.pins.split_norms.empty()) j["split_norms"] = plan.pins.split_norms;
  if (!plan.pins.fp8_output_gelus.empty()) j["fp8_output_gelus"] = plan.pins.fp8_output_gelus;
  return j.dump(1) + "\n";
}

PlanFile parse_plan_file(const std::string& text, const std::string& source, std::uint32_t max_split) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw Error(source + ": not a plan file (" + std::string(e.what()) + ")");
  }
  try {
    if (j.is_object() && j.contains("tilevit_plan") && j.at("tilevit_plan") != 1 &&
        j.at("tilevit_plan") != kPlanFileVersion)
      throw Error(source + ": tilevit_plan " + j.at("tilevit_plan").dump() + " is not version 1 or " +
                  std::to_string(kPlanFileVersion));
    const bool v1 = j.is_object() && j.contains("tilevit_plan") && j.at("tilevit_plan") == 1;
    if (v1)
      check_keys(j, {"tilevit_plan", "model", "batch", "machine", "tiles", "gemm", "attention"}, source);
    else
      check_keys(j, {"tilevit_plan", "model", "batch", "machine", "tiles", "exchange_stream_words", "gemm", "attention"},
                 source, {"tile_offsets", "fp8_attention", "split_norms", "fp8_output_gelus"});
    PlanFile plan;
    if (!v1) {
      plan.exchange_stream_words = count_field(j, "exchange_stream_words", kMaxStreamWords, source);
      if (plan.exchange_stream_words < kMinStreamWords)
        throw Error(source + ".exchange_stream_words: expected a whole number in " + std::to_string(kMinStreamWords) +
                    ".." + std::to_string(kMaxStreamWords) + ", not " + std::to_string(plan.exchange_stream_words));
    }
    plan.target = {string_field(j, "model", source), count_field(j, "batch", 1u << 16, source),
                   string_field(j, "machine", source), count_field(j, "tiles", 1u << 24, source)};
    for (const auto& [op, v] : j.at("gemm").items()) {
      const std::string where = source + ": gemm." + op;
      check_keys(v, {"r", "k", "c"}, where, {"column_quantum"});
      plan.pins.gemm[op] = {count_field(v, "r", max_split, where), count_field(v, "k", max_split, where),
                            count_field(v, "c", max_split, where),
                            v.contains("column_quantum") ? count_field(v, "column_quantum", max_split, where) : 0};
    }
    for (const auto& [op, v] : j.at("attention").items()) {
      const std::string where = source + ": attention." + op;
      check_keys(v, {"query_block", "key_block"}, where);
      plan.pins.attention[op] = {count_field(v, "query_block", max_split, where),
                                 count_field(v, "key_block", max_split, where)};
    }
    if (j.contains("tile_offsets")) {
      if (!j.at("tile_offsets").is_object()) throw Error(source + ": tile_offsets: expected an object");
      for (const auto& [op, v] : j.at("tile_offsets").items())
        plan.pins.tile_offsets[op] = count_field(j.at("tile_offsets"), op.c_str(), plan.target.tiles - 1,
                                                 source + ": tile_offsets");
    }
    plan.pins.fp8_attention = op_names(j, "fp8_attention", source);
    plan.pins.split_norms = op_names(j, "split_norms", source);
    plan.pins.fp8_output_gelus = op_names(j, "fp8_output_gelus", source);
    return plan;
  } catch (const json::exception& e) {
    throw Error(source + ": " + e.what());
  }
}

std::string read_plan_text(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw Error(path + ": cannot read the plan file: " + ec.message());
  if (size > kMaxPlanFileBytes)
    throw Error(path + ": " + std::to_string(size) + " B is larger than a plan file can be (" +
                std::to_string(kMaxPlanFileBytes) + " B)");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) throw Error(path + ": cannot read the plan file");
  return text.str();
}

void check_plan_target(const PlanFile& plan, const PlanTarget& expected, const std::string& source) {
  if (!(plan.target == expected))
    throw Error(source + ": a plan for " + describe(plan.target) + ", not for " + describe(expected));
}

PlanFile read_plan_file(const std::string& path, const PlanTarget& expected) {
  PlanFile plan = parse_plan_file(read_plan_text(path), path, 1u << 20);
  check_plan_target(plan, expected, path);
  return plan;
}

}  // namespace tilevit::compiler
