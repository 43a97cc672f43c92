#include "profile/bounds.hpp"

#include <map>
#include <nlohmann/json.hpp>

#include "profile/analysis.hpp"
#include "profile/compare.hpp"

namespace tilevit::profile {
namespace {

std::vector<std::string> parts_of(const std::string& operation) {
  std::vector<std::string> parts;
  std::size_t from = 0;
  for (std::size_t at; (at = operation.find('+', from)) != std::string::npos; from = at + 1)
    parts.push_back(operation.substr(from, at - from));
  parts.push_back(operation.substr(from));
  return parts;
}

nlohmann::json ratio_json(std::uint64_t achieved, double bound) {
  return bound > 0 ? nlohmann::json(double(achieved) / bound) : nlohmann::json(nullptr);
}

nlohmann::json rows_json(const std::vector<BoundRow>& rows, std::size_t limit, const char* unit) {
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = 0; i < std::min(limit, rows.size()); ++i)
    out.push_back({{"key", rows[i].key},
                   {std::string("achieved_") + unit, rows[i].achieved},
                   {std::string("bound_") + unit, rows[i].bound},
                   {"achieved_over_bound", ratio_json(rows[i].achieved, rows[i].bound)}});
  return out;
}

}  // namespace

BoundReport bound_report(const Profile& p) {
  BoundReport r;
  r.available = !p.operation_bounds.empty();
  r.call_cycles = p.span;
  r.compute_tile_cycles = p.tile_cycles[std::size_t(SampleKind::compute)];
  const double tiles = std::max<std::uint32_t>(p.tiles, 1);
  std::map<std::string, double> bound_of;
  for (const auto& b : p.operation_bounds) {
    bound_of[b.name] += double(b.tile_cycles);
    r.call_bound += double(b.tile_cycles) / tiles;
  }
  std::map<std::pair<std::uint32_t, std::int32_t>, std::size_t> step_row;
  const std::vector<CompareRow> steps = call_steps(p, &step_row);
  // Per op: compute tile-cycles of the samples running it, in all, per operation key, per step.
  std::map<std::string, double> total;
  std::map<std::string, std::map<std::string, double>> by_key;
  std::map<std::string, std::map<std::size_t, double>> by_step;
  for (const auto& tile : p.samples)
    for (const Sample& s : tile) {
      const StepMeta& m = p.meta[s.meta];
      if (m.kind != SampleKind::compute) continue;
      const std::string key = m.operation.empty() ? kLocalCopyOperation : m.operation;
      const double cycles = double(s.end - s.start);
      const auto step = step_row.find({m.step, m.layer});
      for (const std::string& op : parts_of(key)) {
        if (!bound_of.count(op)) continue;
        total[op] += cycles;
        by_key[op][key] += cycles;
        if (step != step_row.end()) by_step[op][step->second] += cycles;
      }
    }
  for (const QueryRow& q : query_profile(p, GroupBy::operation, QueryView::model)) {
    if (q.compute_cycles == 0) continue;
    BoundRow row{q.key, q.compute_cycles, 0};
    for (const std::string& op : parts_of(q.key))
      if (const auto it = by_key.find(op); it != by_key.end() && it->second.count(q.key))
        row.bound += bound_of[op] * it->second.at(q.key) / total[op];
    r.operations.push_back(row);
  }
  for (const CompareRow& s : steps) r.steps.push_back(BoundRow{s.key, std::uint64_t(std::max<std::int64_t>(s.cycles_a, 0)), 0});
  for (const auto& [op, rows] : by_step)
    for (const auto& [row, cycles] : rows) r.steps[row].bound += bound_of[op] * cycles / total[op] / tiles;
  return r;
}

nlohmann::json to_json(const BoundReport& r, std::size_t limit) {
  std::uint64_t operations = 0, steps = 0;
  for (const BoundRow& b : r.operations) operations += b.achieved;
  for (const BoundRow& b : r.steps) steps += b.achieved;
  return {{"available", r.available},
          {"method", kBoundMethod},
          {"call", {{"achieved_cycles", r.call_cycles}, {"bound_cycles", r.call_bound},
                    {"achieved_over_bound", ratio_json(r.call_cycles, r.call_bound)}}},
          {"operations", {{"unit", "compute tile-cycles, all tiles, whole call"}, {"achieved_sum", operations},
                          {"compute_tile_cycles", r.compute_tile_cycles}, {"count", r.operations.size()},
                          {"rows", rows_json(r.operations, limit, "tile_cycles")}}},
          {"steps", {{"unit", "cycles of the call"}, {"achieved_sum", steps}, {"span_cycles", r.call_cycles},
                     {"count", r.steps.size()}, {"rows", rows_json(r.steps, limit, "cycles")}}}};
}

}  // namespace tilevit::profile
