#pragma once
// The plan search (`--optimization-steps N`, docs/OPTIMISER.md): starting from a baseline
// plan (the compiler's own, or the pins given), it proposes changes to GEMM grids,
// attention blocks and the exchange stream words (plan_proposals.hpp), screens them by the
// local estimate (and by what earlier candidates measured), and judges each finalist only
// by compile_model: fully lowered, exchange-scheduled and placed (it must fit), costed by
// the step cost table the device model runs. A small beam of the best plans is expanded
// round by round, with a few seeded random picks for diversity; each round first tries
// the best plan with every change measured faster so far merged in. The result is never worse
// than the baseline, and is the same for any thread count: each round's candidates are
// fixed before any is compiled, and ties are broken by the plan's canonical key.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compiler/compile.hpp"
#include "compiler/plan_bound.hpp"
#include "compiler/plan_proposals.hpp"

namespace tilevit::compiler {

struct PlanSearchOptions {
  std::uint32_t steps = 0;     // candidates to compile fully (the baseline not counted); 0: no search
  double max_seconds = 0;      // wall-clock cap on the search (0: none); reported when it cut the search
  std::uint64_t seed = 20;     // of the random picks
  std::uint32_t beam_width = 3;    // plans expanded each round
  // Candidates per round (fewer when the budget ends): 3, so the default 8 steps make
  // three rounds and the last one merges what the first two measured.
  std::uint32_t round_size = 3;
  std::uint32_t random_picks = 1;  // of them drawn at random from the rest of the proposals
  std::uint32_t patience = 5;      // rounds without a better plan before the search stops (of 3 candidates)
  std::uint32_t per_op = 6;        // screened alternatives kept per op
  std::uint32_t threads = 1;       // candidates compiled at once (the result does not depend on it)
  std::function<void(const std::string&)> progress;  // one line per event, may be empty
};

// One fully compiled plan.
struct Candidate {
  Plan plan;
  std::string key;
  int parent = -1;          // index of the plan it changes (-1: the baseline)
  std::vector<Move> moves;  // the changes from the parent: one, or several measured gains merged
  std::uint32_t round = 0;
  bool fits = false;
  std::string failure;  // why it did not compile or place
  std::uint64_t cycles = 0, uncalibrated_cycles = 0;
  std::uint32_t sram_headroom = 0;  // min over tiles of free bytes at peak
};

struct AcceptedChange {
  std::vector<Change> changes;  // one, or the gains a merge combined
  std::uint64_t cycles_before = 0, cycles_after = 0;
  std::uint64_t uncalibrated_before = 0, uncalibrated_after = 0;
  std::uint32_t sram_headroom = 0;
};

struct RejectedSummary {
  std::uint32_t count = 0, did_not_fit = 0;
  int best = -1;  // candidate index of the fastest that fitted, -1: none
};

struct PlanSearchReport {
  std::uint32_t steps = 0, evaluated = 0, rounds = 0;
  std::size_t screened = 0;  // alternatives estimated locally
  double seconds = 0, max_seconds = 0;
  bool cut_by_time = false;
  std::string stopped;  // why the search ended
  std::uint64_t seed = 0;
  std::vector<Candidate> candidates;  // [0] the baseline, then in evaluation order
  int chosen = 0;                     // index into candidates
  std::vector<AcceptedChange> accepted;
  RejectedSummary rejected[kLevers + 1];  // per lever of a single change, then merges
  LowerBound bound;
};

struct PlanSearchResult {
  CompiledModel compiled;  // the chosen plan's
  Plan plan;
  PlanSearchReport report;
};

// Compiles `base` (its pins and W are the baseline) and searches from it. Errors of the
// baseline propagate; a candidate that does not fit or is rejected by lowering counts as a
// rejected proposal; internal errors propagate.
PlanSearchResult search_plan(const Graph& graph, const target::MachineDescription& machine, const CompileOptions& base,
                             const PlanSearchOptions& options);

// The report as JSON (docs/OPTIMISER.md, "Report").
nlohmann::json plan_search_report_json(const PlanSearchReport& report);

}  // namespace tilevit::compiler
