// The plan search's report as JSON (docs/OPTIMISER.md, "Report").
#include <nlohmann/json.hpp>

#include "compiler/plan_search.hpp"

namespace tilevit::compiler {
namespace {

using nlohmann::json;

std::int64_t saved(std::uint64_t before, std::uint64_t after) {
  return static_cast<std::int64_t>(before) - static_cast<std::int64_t>(after);
}

json figures(const Candidate& c) {
  return {{"estimated_cycles", c.cycles},
          {"uncalibrated_cycles", c.uncalibrated_cycles},
          {"sram_headroom_bytes", c.sram_headroom},
          {"exchange_stream_words", c.plan.exchange_stream_words}};
}

json change_json(const Change& c) {
  return {{"lever", to_string(c.lever)},
          {"op", c.op.empty() ? json(nullptr) : json(c.op)},
          {"old", c.old_value},
          {"new", c.new_value}};
}

json changes_json(const std::vector<Change>& changes) {
  json out = json::array();
  for (const Change& c : changes) out.push_back(change_json(c));
  return out;
}

json accepted_json(const AcceptedChange& a) {
  return {{"changes", changes_json(a.changes)},
          {"cycles_before", a.cycles_before},
          {"cycles_after", a.cycles_after},
          {"cycles_saved", saved(a.cycles_before, a.cycles_after)},
          // How much of the change rests on kernel terms no measurement covers.
          {"uncalibrated_cycles_change", -saved(a.uncalibrated_before, a.uncalibrated_after)},
          {"sram_headroom_bytes", a.sram_headroom}};
}

json rejected_json(const PlanSearchReport& r) {
  json out = json::object();
  for (std::size_t lever = 0; lever <= kLevers; ++lever) {
    const RejectedSummary& s = r.rejected[lever];
    json j{{"count", s.count}, {"did_not_fit", s.did_not_fit}, {"best", nullptr}};
    if (s.best >= 0) {
      const Candidate& c = r.candidates[static_cast<std::size_t>(s.best)];
      const Candidate& p = r.candidates[static_cast<std::size_t>(c.parent)];
      std::vector<Change> changes;
      for (const Move& m : c.moves) changes.push_back(describe_move(p.plan, m));
      j["best"] = {{"changes", changes_json(changes)},
                   {"estimated_cycles", c.cycles},
                   {"cycles_saved_vs_its_parent", saved(p.cycles, c.cycles)}};
    }
    out[lever == kLevers ? "merged_gains" : to_string(static_cast<Lever>(lever))] = j;
  }
  return out;
}

}  // namespace

nlohmann::json plan_search_report_json(const PlanSearchReport& r) {
  const Candidate& base = r.candidates.front();
  const Candidate& chosen = r.candidates[static_cast<std::size_t>(r.chosen)];
  json j;
  j["steps"] = r.steps;
  j["candidates_compiled"] = r.evaluated;
  j["rounds"] = r.rounds;
  j["alternatives_screened"] = r.screened;
  j["seed"] = r.seed;
  j["search_seconds"] = r.seconds;
  j["max_seconds"] = r.max_seconds > 0 ? json(r.max_seconds) : json(nullptr);
  j["cut_by_time"] = r.cut_by_time;
  j["stopped"] = r.stopped;
  j["found_better"] = r.chosen != 0;
  if (r.chosen == 0 && r.steps > 0) j["note"] = "no faster plan found: the baseline is kept";
  j["baseline"] = figures(base);
  j["result"] = figures(chosen);
  j["cycles_saved"] = saved(base.cycles, chosen.cycles);
  j["result_vs_baseline"] = base.cycles ? double(chosen.cycles) / double(base.cycles) : 1.0;
  j["accepted"] = json::array();
  for (const AcceptedChange& a : r.accepted) j["accepted"].push_back(accepted_json(a));
  j["rejected"] = rejected_json(r);
  j["lower_bound"] = {{"cycles", r.bound.cycles},
                      {"matrix_cycles", r.bound.matrix_cycles},
                      {"vector_cycles", r.bound.vector_cycles},
                      {"method", LowerBound::kMethod},
                      {"result_over_bound", r.bound.cycles ? double(chosen.cycles) / double(r.bound.cycles) : 0.0}};
  return j;
}

}  // namespace tilevit::compiler
