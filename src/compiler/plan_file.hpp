#pragma once
// Plan files: the grid of every GEMM and attention op of a compiled model, written by
// `compile --write-plan` and read back by `--plan` (compile and run) as pins
// (gemm_plan.hpp), so a mapping can be reproduced, edited and compared, as poplibs' plan
// constraints allow. A plan names the model and machine it was made for; reading one for
// another is an error. Format: docs/COMPILER.md, "Plan files".
#include <cstdint>
#include <string>

#include "compiler/plan.hpp"
#include "model/config.hpp"

namespace tilevit::compiler {

// Version 2 adds the plan-level exchange_stream_words; version 1 files (without it) are
// still read.
inline constexpr int kPlanFileVersion = 2;
inline constexpr std::uintmax_t kMaxPlanFileBytes = 1 << 20;

// What a plan was made for: the model preset, its batch and the machine.
struct PlanTarget {
  std::string model;
  std::uint32_t batch = 1;
  std::string machine;
  std::uint32_t tiles = 0;
  bool operator==(const PlanTarget&) const = default;
};

PlanTarget plan_target(const model::ViTConfig& config, const target::MachineDescription& machine);

struct PlanFile {
  PlanTarget target;
  Plan plan;
  bool pins_stream_words = true;  // false: a version 1 file, W left to the command line
};

// The file's text (JSON), deterministic: ops in name order.
std::string plan_file_text(const PlanFile& plan);
// Parses and checks a plan file's text: schema, fields (the lever table's, levers.hpp),
// every split at least 1 and at most `max_split`, W in kMinStreamWords..kMaxStreamWords. Throws Error(kExitBadInput) naming `source` and the field.
PlanFile parse_plan_file(const std::string& text, const std::string& source, std::uint32_t max_split);
// Reads `path` (at most kMaxPlanFileBytes) and checks it was made for `expected`.
PlanFile read_plan_file(const std::string& path, const PlanTarget& expected);
// Its parts: the file's text (at most kMaxPlanFileBytes), and the check of a parsed plan's
// target against `expected` (Error(kExitBadInput) naming `source` and both).
std::string read_plan_text(const std::string& path);
void check_plan_target(const PlanFile& plan, const PlanTarget& expected, const std::string& source);

}  // namespace tilevit::compiler
