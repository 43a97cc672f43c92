#include "profile/bounds.hpp"

#include <map>
#include <nlohmann/json.hpp>

#include "profile/analysis.hpp"
#include "profile/compare.hpp"
#include "profile/rows.hpp"

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

nlohmann::json ratio_json(std::int64_t achieved, double bound) {
  return bound > 0 && achieved >= 0 ? nlohmann::json(double(achieved) / bound) : nlohmann::json(nullptr);
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

namespace {

using Op = std::pair<std::uint32_t, std::string>;  // (row group: the chip that ran it, graph op)

// The recorded bounds by (row group, op), and per op name the groups that have one.
struct Bounds {
  std::map<Op, double> of;
  std::map<std::string, std::vector<Op>> groups;
};

Bounds index_bounds(const Profile& p) {
  Bounds b;
  for (const auto& x : p.operation_bounds) {
    const auto [it, added] = b.of.try_emplace({x.row_group, x.name}, 0.0);
    if (added) b.groups[x.name].push_back(it->first);
    it->second += double(x.tile_cycles);
  }
  return b;
}

// Per bounded op, the compute tile-cycles of the samples running it: in all, per operation
// key (fused ops joined by '+') and per step row.
struct Shares {
  std::map<Op, double> total;
  std::map<Op, std::map<std::string, double>> by_key;
  std::map<Op, std::map<std::size_t, double>> by_step;
};

Shares op_shares(const Profile& p, const Bounds& bounds, const std::map<std::pair<std::uint32_t, std::int32_t>, std::size_t>& step_row) {
  Shares sh;
  const std::vector<std::uint32_t> group_of = row_groups_of(p);
  for (std::uint32_t t = 0; t < p.samples.size(); ++t)
    for (const Sample& s : p.samples[t]) {
      const StepMeta& m = p.meta[s.meta];
      if (m.kind != SampleKind::compute) continue;
      const std::string key = m.operation.empty() ? kLocalCopyOperation : m.operation;
      const double cycles = double(s.end - s.start);
      const auto step = step_row.find({m.step, m.layer});
      for (const std::string& name : parts_of(key)) {
        const Op op{group_of[t], name};
        if (!bounds.of.count(op)) continue;
        sh.total[op] += cycles;
        sh.by_key[op][key] += cycles;
        if (step != step_row.end()) sh.by_step[op][step->second] += cycles;
      }
    }
  return sh;
}

}  // namespace

BoundReport bound_report(const Profile& p) {
  BoundReport r;
  r.available = !p.operation_bounds.empty();
  r.call_cycles = p.span;
  r.compute_tile_cycles = p.tile_cycles[std::size_t(SampleKind::compute)];
  // An op's bound is its chip's (the row group that ran it; one group without groups), spread
  // over that chip's tiles for a step; the call's is every op's over all tiles of all chips.
  const Bounds bounds = index_bounds(p);
  const double tiles = std::max<std::uint32_t>(tile_rows(p), 1);
  for (const auto& [op, cycles] : bounds.of) r.call_bound += cycles / tiles;
  std::map<std::pair<std::uint32_t, std::int32_t>, std::size_t> step_row;
  const std::vector<CompareRow> steps = call_steps(p, &step_row);
  const Shares sh = op_shares(p, bounds, step_row);
  for (const QueryRow& q : query_profile(p, GroupBy::operation, QueryView::model)) {
    if (q.compute_cycles == 0) continue;
    BoundRow row{q.key, std::int64_t(q.compute_cycles), 0};
    for (const std::string& name : parts_of(q.key))
      if (const auto named = bounds.groups.find(name); named != bounds.groups.end())
        for (const Op& op : named->second)
          if (const auto it = sh.by_key.find(op); it != sh.by_key.end() && it->second.count(q.key))
            row.bound += bounds.of.at(op) * it->second.at(q.key) / sh.total.at(op);
    r.operations.push_back(row);
  }
  for (const CompareRow& s : steps) r.steps.push_back(BoundRow{s.key, s.cycles_a, 0});
  for (const auto& [op, rows] : sh.by_step) {
    const double chip_tiles = op.first < p.row_groups.size() ? std::max<std::uint32_t>(p.row_groups[op.first].rows, 1) : tiles;
    for (const auto& [row, cycles] : rows) r.steps[row].bound += bounds.of.at(op) * cycles / sh.total.at(op) / chip_tiles;
  }
  return r;
}

nlohmann::json to_json(const BoundReport& r, std::size_t limit) {
  std::int64_t operations = 0, steps = 0;
  for (const BoundRow& b : r.operations) operations += b.achieved;
  for (const BoundRow& b : r.steps) steps += b.achieved;
  return {{"available", r.available},
          {"method", kBoundMethod},
          {"call", {{"achieved_cycles", r.call_cycles}, {"bound_cycles", r.call_bound},
                    {"achieved_over_bound", ratio_json(std::int64_t(r.call_cycles), r.call_bound)}}},
          {"operations", {{"unit", "compute tile-cycles, all tiles, whole call"}, {"achieved_sum", operations},
                          {"compute_tile_cycles", r.compute_tile_cycles}, {"count", r.operations.size()},
                          {"rows", rows_json(r.operations, limit, "tile_cycles")}}},
          {"steps", {{"unit", "cycles of the call"}, {"achieved_sum", steps}, {"span_cycles", r.call_cycles},
                     {"count", r.steps.size()}, {"rows", rows_json(r.steps, limit, "cycles")}}}};
}

nlohmann::json query_rows_json(const std::vector<QueryRow>& rows, const std::vector<BoundRow>* operations,
                               std::size_t limit) {
  std::map<std::string, const BoundRow*> bound_of;
  if (operations)
    for (const BoundRow& b : *operations) bound_of[b.key] = &b;
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = 0; i < std::min(limit, rows.size()); ++i) {
    nlohmann::json row = to_json(rows[i]);
    if (const auto it = bound_of.find(rows[i].key); it != bound_of.end() && it->second->bound > 0)
      row["bound_tile_cycles"] = it->second->bound, row["achieved_over_bound"] = it->second->ratio();
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace tilevit::profile
