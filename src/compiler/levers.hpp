#pragma once
// The lever table: every lever of a plan (plan.hpp) described once, in the spirit of the
// kernel table: its name, the op kinds it pins, how a plan reads, applies, prints and
// serialises it. The plan's canonical key, moves and their reversal (plan_proposals,
// plan_search), plan files (plan_file.hpp) and the check that every pin names an op of
// its kind (lower.cpp) all go through it. Adding a lever is its enum value and table
// entry (levers.cpp), its Plan field and its lowering (docs/OPTIMISER.md).
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "compiler/graph.hpp"
#include "compiler/plan.hpp"

namespace tilevit::compiler {

// layout_match: a GEMM grid whose column blocks are its consumer's input blocks (an
// attention head, the next GEMM's K block; GemmSplits::column_quantum).
// tile_offset: the first tile of a GEMM's or attention op's cells (PlanPins::tile_offsets).
// fp8_attention: an encoder attention op's products in FP8 or FP16 (PlanPins::fp8_attention).
// split_norm: an encoder LayerNorm split over its input's column parts or on whole rows
// (PlanPins::split_norms). fp8_output: a GELU writing FP8 in place of the GELU and its
// cast (PlanPins::fp8_output_gelus).
enum class Lever : std::uint8_t {
  gemm_grid, attention_blocks, stream_words, layout_match, tile_offset, fp8_attention, split_norm, fp8_output
};
inline constexpr std::size_t kLevers = 8;

// One proposal: op `op` (none for W) takes a new value of its lever.
struct Move {
  Lever lever = Lever::gemm_grid;
  std::string op;
  GemmSplits gemm;
  AttentionBlocks attention;
  std::uint32_t stream_words = 0;
  // Local estimate of the change in cycles per call (the op's estimate difference times
  // its executions); 0 for W, which has no local estimate.
  std::int64_t estimated_delta = 0;
  // The same as a fraction of the op's current estimate: how near a tie the local estimate
  // sees it, whatever the op's size (the search screens unmeasured moves by it).
  double estimated_gap = 0;
  bool has_estimate = true;
  std::uint32_t tile_offset = 0;
  bool fp8 = false;  // fp8_attention: the new precision of the op's products
  bool enabled = false;  // split_norm, fp8_output: the op's new setting
  // split_norm: the GEMM producing the residual stream, pinned to `gemm` as well (column
  // blocks of its consumer's K block, so the split's parts read whole runs); empty: kept.
  std::string layout_op;
  std::string identity() const;  // lever, op and new value: the same change on any plan
};

// Where a plan file's field is read from: its JSON value, and the file and field for errors.
struct PlanField {
  const nlohmann::json& value;
  std::string where;           // "plan.json: gemm"
  std::uint32_t max_split = 0;  // the largest split or block a field may hold
  std::uint32_t tiles = 0;      // the plan's machine's tiles
};

constexpr std::uint32_t op_kinds(std::initializer_list<OpKind> kinds) {
  std::uint32_t bits = 0;
  for (OpKind k : kinds) bits |= 1u << static_cast<unsigned>(k);
  return bits;
}

struct LeverInfo {
  Lever lever;
  const char* name;                        // "gemm_grid": reports, the search's summaries
  std::uint32_t op_kinds;  // the kinds of op it pins, a bit per OpKind (op_kinds()); 0: a plan-wide lever
  const char* kinds_text;  // "GEMM or attention": those kinds in a message
  const char* pin_text;    // "pinned GEMM grid for op": the start of a bad pin's error
  // The plan file's field holding the lever (nullptr: it shares another lever's field, as
  // a layout match is a GEMM grid) and whether a file always has it.
  const char* file_field;
  bool file_requires;
  bool file_pins_every_op;  // a plan file pins every op of its kinds (a grid), not just some
  std::string (*value)(const Plan& plan, const std::string& op);  // "chosen" where not pinned
  std::string (*move_text)(const Move& move);                     // the value a move sets
  void (*apply)(Plan& plan, const Move& move);
  void (*take_value)(const Plan& plan, Move& move);  // the move back to `plan`'s value
  std::vector<std::string> (*pinned_ops)(const Plan& plan);
  void (*append_key)(const Plan& plan, std::string& key);
  void (*write)(const Plan& plan, nlohmann::json& file);
  void (*read)(const PlanField& field, Plan& plan);
};

// The table, one entry per Lever in enum order (checked by static_assert).
std::span<const LeverInfo> lever_table();
const LeverInfo& lever_info(Lever lever);
const char* to_string(Lever lever);

// A move as the report shows it: what it changed in a given plan.
struct Change {
  Lever lever = Lever::gemm_grid;
  std::string op, old_value, new_value;
};
Change describe_move(const Plan& from, const Move& move);
std::string to_string(const Change& change);  // "layer.out gemm_grid 1x5x3 -> 1x1x9"

Plan apply_move(const Plan& plan, const Move& move);
// "3x27x18" (Rg x Kg x Cg), "32x183" (queries x keys), "1024" (W): the move's lever in `plan`.
std::string lever_value(const Plan& plan, const Move& move);
std::string move_value(const Move& move);
// The move that undoes `move` applied to `parent`.
Move reverse_move(const Plan& parent, const Move& move);

// The plan's canonical key over `levers` (plan-wide levers first, then per-op ones in order).
std::string plan_key(const Plan& plan, std::span<const LeverInfo> levers);
// Every pin of `plan` names an op of the lever's kinds in `graph`, else RefusedPin
// "compiler: pinned GEMM grid for op X: the graph has no GEMM of that name".
void check_pins_name_ops(const Graph& graph, const Plan& plan, std::span<const LeverInfo> levers = lever_table());
// A plan file fixes every grid: every GEMM and attention op of `graph` has its grid in
// `plan` (the levers whose entry says `file_pins_every_op`), else RefusedPin
// "compiler: gemm_grids.X: missing ...".
void check_plan_pins_every_op(const Graph& graph, const Plan& plan, std::span<const LeverInfo> levers = lever_table());
// A plan file's lever fields: written into `file`, and read from it (unknown fields are
// the caller's check; a required field missing is an error naming it).
void write_lever_fields(const Plan& plan, nlohmann::json& file, std::span<const LeverInfo> levers = lever_table());
void read_lever_fields(const nlohmann::json& file, const std::string& source, std::uint32_t max_split,
                       std::uint32_t tiles, Plan& plan, std::span<const LeverInfo> levers = lever_table());

// "3x27x18" or "3x27x18/72" (a column quantum), "32x183": a grid and attention blocks as text.
std::string splits_text(const GemmSplits& s);
std::string blocks_text(const AttentionBlocks& b);

}  // namespace tilevit::compiler
