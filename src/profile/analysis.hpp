#pragma once
// What `tilevit profile query` and `profile diff` compute from profiles: totals grouped
// by one field, and the step-by-step comparison of two profiles.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "profile/profile.hpp"

namespace tilevit::profile {

enum class GroupBy : std::uint8_t { kind, kernel, operation, phase, tile };
GroupBy group_by_from_string(const std::string& name);  // throws Error(kExitUsage)

// model: the whole call, the loop iterations not recorded in detail extrapolated from
// the detailed ones (every iteration runs the same steps at the same modelled cost), so
// no "repeat" interval stands in for them; layer: one encoder layer (loop iteration),
// the mean of the detailed ones.
enum class QueryView : std::uint8_t { model, layer };
QueryView query_view_from_string(const std::string& name);  // throws Error(kExitUsage)

struct QueryRow {
  std::string key;
  std::uint64_t samples = 0, cycles = 0, max_cycles = 0;  // summed over tiles; longest sample
  std::uint64_t flops = 0, words = 0;                     // words sent + received
  std::uint32_t tiles = 0;                                // tiles with at least one sample
  // Of the view's span x tiles; grouped by tile: the tile's busy (not idle) cycles as a
  // share of the span, idle time not counted in `cycles`.
  double share = 0;
  // Compute samples of the group: their cycles and, of those, the uncalibrated ones.
  std::uint64_t compute_cycles = 0, uncalibrated_cycles = 0;
  // Calibrated share of compute_cycles; < 0 when the group has no compute samples.
  double calibrated_share() const;
};
// Sorted by cycles, most first; ties by key (tiles by number).
std::vector<QueryRow> query_profile(const Profile& profile, GroupBy group_by, QueryView view = QueryView::model);

// How a view treats the loop: iterations in the profile, detailed, extrapolated; and the
// view's span in cycles (the call's, or one iteration's).
struct LoopCoverage {
  std::uint32_t iterations = 0, detailed = 0;
  bool extrapolated = false;  // some iterations were not recorded in detail and are scaled in
  std::uint64_t view_span = 0;
};
LoopCoverage loop_coverage(const Profile& profile, QueryView view);
// The model view's loop per row group (rows.hpp): a multi-chip profile's chips each have
// their stage's loop (Profile::RowGroup::loop_count); a profile without groups has one
// entry, its own loop.
std::vector<LoopCoverage> group_coverage(const Profile& profile);

// One superstep execution (a step at a loop iteration), matched across profiles by its
// phase label, layer and occurrence: the same key in two builds of one model.
struct StepSpan {
  std::string key;      // e.g. "layer.mlp_up @ layer 0"
  std::uint64_t start = 0, end = 0;  // earliest sample start, latest sample end over tiles
};
std::vector<StepSpan> step_spans(const Profile& profile);

struct StepDiff {
  std::string key;
  std::int64_t cycles_a = -1, cycles_b = -1;  // -1: absent in that profile
  std::int64_t delta = 0;                    // b - a (0 when absent on one side)
};

struct OperationDiff {
  std::string operation;
  std::uint64_t cycles_a = 0, cycles_b = 0;  // compute cycles summed over tiles
};

struct DiffReport {
  bool same_package = false;
  // What the profiles are of, when it differs: model (and its layer count), loop
  // iterations, machine. Any entry makes the profiles differ.
  std::vector<std::string> identity;
  std::vector<std::string> warnings;
  std::uint64_t span_a = 0, span_b = 0;
  std::int64_t span_delta = 0;
  std::uint64_t matched_steps = 0, changed_steps = 0, unmatched_steps = 0;
  std::uint64_t samples_compared = 0, samples_differing = 0;  // same package and options only
  std::vector<StepDiff> steps;            // changed or unmatched, largest |delta| first
  std::vector<OperationDiff> operations;  // different packages: per operation, largest change first
};
DiffReport diff_profiles(const Profile& a, const Profile& b);

nlohmann::json to_json(const QueryRow& row);
nlohmann::json to_json(const DiffReport& report, std::size_t limit);

}  // namespace tilevit::profile
