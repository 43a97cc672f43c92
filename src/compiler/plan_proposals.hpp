#pragma once
// The plan search's proposals (plan_search.hpp): a move changes one lever of a plan
// (levers.hpp) for one op, or W. The
// alternatives of each op are screened once by the local estimate of gemm_plan.hpp (every
// valid grid enumerated, the best few kept), so only those are ever fully compiled.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/gemm_plan.hpp"
#include "compiler/graph.hpp"
#include "compiler/levers.hpp"
#include "target/machine.hpp"

namespace tilevit::compiler {

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
  std::vector<Move> moves_from(const Plan& plan) const;
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
  void add_layout_moves(const OpChoices& op, const Plan& plan, std::vector<Move>& moves) const;
  void add_offset_moves(const OpChoices& op, const Plan& plan, std::vector<Move>& moves) const;
  void add_fp8_attention_move(const OpChoices& op, const Plan& plan, std::vector<Move>& moves) const;
  void add_toggle_move(const OpChoices& op, const Plan& plan, std::vector<Move>& moves) const;

  const target::MachineDescription& machine_;
  std::uint32_t per_op_;
  std::vector<OpChoices> ops_;
  std::size_t screened_ = 0;
};

// The W values the search tries: powers of two from 256 words up, and 2^20 (one wave).
std::vector<std::uint32_t> stream_word_ladder();

}  // namespace tilevit::compiler
