#include "compiler/plan_file.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "compiler/json_fields.hpp"
#include "compiler/levers.hpp"
#include "support/error.hpp"

namespace tilevit::compiler {
namespace {

using nlohmann::json;

std::string describe(const PlanTarget& t) {
  return t.model + " batch " + std::to_string(t.batch) + " on " + t.machine + " (" + std::to_string(t.tiles) + " tiles)";
}

}  // namespace

PlanTarget plan_target(const model::ViTConfig& config, const target::MachineDescription& machine) {
  return {config.name, static_cast<std::uint32_t>(config.batch), machine.name, machine.tiles};
}

std::string plan_file_text(const PlanFile& plan) {
  json j;
  j["tilevit_plan"] = plan.pins_stream_words ? kPlanFileVersion : 1;
  j["model"] = plan.target.model;
  j["batch"] = plan.target.batch;
  j["machine"] = plan.target.machine;
  j["tiles"] = plan.target.tiles;
  write_lever_fields(plan.plan, j);
  if (!plan.pins_stream_words) j.erase("exchange_stream_words");
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
    if (j.is_object() && j.contains("tilevit_pipeline_plan"))
      throw Error(source + ": a pipeline plan file (tilevit_pipeline_plan), not a one-chip plan: its machine has " +
                  "several chips");
    if (j.is_object() && j.contains("tilevit_plan") && j.at("tilevit_plan") != 1 &&
        j.at("tilevit_plan") != kPlanFileVersion)
      throw Error(source + ": tilevit_plan " + j.at("tilevit_plan").dump() + " is not version 1 or " +
                  std::to_string(kPlanFileVersion));
    PlanFile plan;
    plan.pins_stream_words = !(j.is_object() && j.contains("tilevit_plan") && j.at("tilevit_plan") == 1);
    // The lever table's fields, required or optional; a version 1 file has no W.
    std::vector<const char*> known = {"tilevit_plan", "model", "batch", "machine", "tiles"}, optional;
    for (const LeverInfo& l : lever_table())
      if (l.file_field != nullptr && (plan.pins_stream_words || l.lever != Lever::stream_words))
        (l.file_requires ? known : optional).push_back(l.file_field);
    check_keys(j, known, source, optional);
    if (!plan.pins_stream_words) j["exchange_stream_words"] = kDefaultStreamWords;
    plan.target = {string_field(j, "model", source + ":"), count_field(j, "batch", 1u << 16, source + ":"),
                   string_field(j, "machine", source + ":"), count_field(j, "tiles", 1u << 24, source + ":")};
    read_lever_fields(j, source, max_split, plan.target.tiles, plan.plan);
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
