#pragma once
// The plan search's proposals (plan_search.hpp): a plan is every GEMM op's grid, every
// attention op's blocks and the exchange stream words W; a move changes one of them. The
// alternatives of each op are screened once by the local estimate of gemm_plan.hpp (every
// valid grid enumerated, the best few kept), so only those are ever fully compiled.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/gemm_plan.hpp"
#include "compiler/graph.hpp"
#include "target/machine.hpp"

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
const char* to_string(Lever lever);

// What the search varies: pins for every GEMM and attention op (the loop body's ops once,
// so the layers share one choice) and W.
struct SearchPlan {
  PlanPins pins;
  std::uint32_t exchange_stream_words = 1024;
  // Canonical text of the plan: tells duplicates apart and breaks ties between equally
  // fast plans, so the choice never depends on the order candidates finished in.
  std::string key() const;
};

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

// A move as the report shows it: what it changed in a given plan.
struct Change {
  Lever lever = Lever::gemm_grid;
  std::string op, old_value, new_value;
};
Change describe_move(const SearchPlan& from, const Move& move);
std::string to_string(const Change& change);  // "layer.out gemm_grid 1x5x3 -> 1x1x9"

SearchPlan apply_move(const SearchPlan& plan, const Move& move);
// "3x27x18" (Rg x Kg x Cg), "32x183" (queries x keys), "1024" (W): the move's lever in `plan`.
std::string lever_value(const SearchPlan& plan, const Move& move);
std::string move_value(const Move& move);

struct ProposalLimits {
  std::uint32_t per_op = 6;  // alternatives kept per op after screening
  bool profiling = false;    // attention working sets are screened against the free bytes per tile
};

// Alternatives of every op, screened once per graph and machine.
class Proposals {
 public:
  Proposals(const Graph& graph, const target::MachineDescription& machine, const ProposalLimits& limits);
  // Every move from `plan`: per op its screened alternatives other than the current value,
  // then the W ladder; estimated_delta relative to the plan's current value.
  std::vector<Move> moves_from(const SearchPlan& plan) const;
  std::size_t screened() const { return screened_; }  // alternatives estimated in all

 private:
  struct OpChoices {
    Lever lever;
    std::string name;
    std::uint32_t executions = 1;
    GemmShape gemm;
    std::uint32_t queries = 0, keys = 0, head_dim = 0, heads = 0, tiles = 0;
    std::vector<Move> alternatives;  // best estimate first
    // The op reading this GEMM's output (through element-wise ops, which keep its blocks):
    // a GEMM (its name and shape: its K block depends on the plan) or attention heads.
    std::string consumer_gemm;
    GemmShape consumer_shape;
    std::uint32_t consumer_head_dim = 0;
    bool fp8_capable = false;  // attention: FP8 products possible (lower_ops.cpp, AttentionLowering)
  };
  // The residual stream's producer GEMM (through bias and residual adds) and the first
  // GEMM reading an encoder LayerNorm's output: a split LayerNorm's layout partners.
  std::string residual_gemm_, norm_consumer_gemm_;
  GemmShape residual_shape_, norm_consumer_shape_;
  void find_norm_partners(const Graph& graph);
  // The residual producer's grid with column blocks of the consumer's K block in `plan`.
  std::optional<GemmSplits> matched_residual_grid(const PlanPins& pins) const;
  std::uint64_t current_estimate(const OpChoices& op, const PlanPins& pins) const;
  void screen_gemm(OpChoices& op);
  void screen_attention(OpChoices& op, std::uint64_t max_tile_bytes);
  // The columns of the blocks `op`'s consumer reads in `plan` (0: none to match).
  std::uint32_t consumer_block(const OpChoices& op, const PlanPins& pins) const;
  void add_layout_moves(const OpChoices& op, const SearchPlan& plan, std::vector<Move>& moves) const;
  void add_offset_moves(const OpChoices& op, const SearchPlan& plan, std::vector<Move>& moves) const;
  void add_fp8_attention_move(const OpChoices& op, const SearchPlan& plan, std::vector<Move>& moves) const;
  void add_toggle_move(const OpChoices& op, const SearchPlan& plan, std::vector<Move>& moves) const;

  const target::MachineDescription& machine_;
  std::uint32_t per_op_;
  std::vector<OpChoices> ops_;
  std::size_t screened_ = 0;
};

// The W values the search tries: powers of two from 256 words up, and 2^20 (one wave).
std::vector<std::uint32_t> stream_word_ladder();

}  // namespace tilevit::compiler
