#pragma once
// Ideal against achieved: each operation's and each step's cycles next to the plan
// search's lower bound (compiler/plan_bound.hpp: the op's work spread evenly over all tiles
// at peak rates, no exchange or sync), from the bounds a profile records
// (Profile::operation_bounds). docs/PROFILE_FORMAT.md, "Bounds".
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "profile/analysis.hpp"
#include "profile/profile.hpp"

namespace tilevit::profile {

struct BoundRow {
  std::string key;
  // operations: compute tile-cycles; steps: cycles of the call (negative only in the row
  // "(chips at work at once)" of a pipeline: compare.hpp's call_steps)
  std::int64_t achieved = 0;
  double bound = 0;  // same unit; 0 when no recorded op runs there
  double ratio() const { return bound > 0 && achieved > 0 ? double(achieved) / bound : 0; }  // achieved / bound, 0: none
};

struct BoundReport {
  bool available = false;  // the profile records operation bounds
  // Operations as `profile query --group-by operation` names them (fused ones joined by
  // '+'); their achieved cycles sum to the call's compute tile-cycles (tile_cycles.compute).
  std::vector<BoundRow> operations;
  // Steps as compare's step table names them; their achieved cycles sum to the span.
  std::vector<BoundRow> steps;
  std::uint64_t call_cycles = 0, compute_tile_cycles = 0;
  // Every recorded op's bound over all tiles (of every chip): plan_lower_bound's cycles on one chip.
  double call_bound = 0;
};

// An op's bound goes to the groups (fused operations, steps) that ran it, in proportion to
// the compute tile-cycles of its samples there. In a multi-chip profile each chip's ops
// have its own bounds (Profile::OperationBound::row_group), split among that chip's
// samples only, and a step's bound spreads its ops over the tiles of its chip.
BoundReport bound_report(const Profile& profile);

nlohmann::json to_json(const BoundReport& report, std::size_t limit);

// The first `limit` query rows as `profile query --json` gives them: an operation's row
// (when `operations` holds its bound: the whole call's view, grouped by operation) also
// has bound_tile_cycles and achieved_over_bound.
nlohmann::json query_rows_json(const std::vector<QueryRow>& rows, const std::vector<BoundRow>* operations,
                               std::size_t limit);

inline constexpr const char* kBoundMethod =
    "plan search lower bound per graph operation (compiler/plan_bound.hpp): the op's work spread evenly over all "
    "tiles, matrix FLOPs at peak, vector kernels at the calibrated rates without per-call base, no exchange or sync; "
    "a fused operation's bound is the sum of its ops', an op run in several groups is split in proportion to its "
    "compute tile-cycles there; a step's bound is its ops' tile-cycles / tiles (of its chip: several chips' ops are "
    "bounded per chip, from each stage's program, every micro-batch counted)";

}  // namespace tilevit::profile
