#include "profile/compare.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "profile/rows.hpp"

namespace tilevit::profile {
namespace {

struct Execution {
  std::uint64_t start = 0, end = 0;
  const StepMeta* meta = nullptr;
  std::uint32_t group = 0;  // the row group it ran on (a chip)
};

// Merges two sides' rows by key (a's order first), then orders by |difference|.
std::vector<CompareRow> merge(const std::vector<CompareRow>& a, const std::vector<CompareRow>& b) {
  std::vector<CompareRow> rows = a;
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < rows.size(); ++i) index[rows[i].key] = i;
  for (const CompareRow& r : b) {
    const auto [it, added] = index.try_emplace(r.key, rows.size());
    if (added) rows.push_back(CompareRow{r.key});
    rows[it->second].cycles_b = r.cycles_a;
    rows[it->second].start_b = r.start_a;
  }
  std::stable_sort(rows.begin(), rows.end(), [](const CompareRow& x, const CompareRow& y) {
    return std::llabs(x.delta()) > std::llabs(y.delta());
  });
  return rows;
}

// Compute tile-cycles per operation or kernel over the whole call, as side a of a row.
std::vector<CompareRow> compute_rows(const Profile& p, GroupBy g) {
  std::vector<CompareRow> rows;
  for (const QueryRow& q : query_profile(p, g, QueryView::model))
    if (q.compute_cycles > 0) rows.push_back(CompareRow{q.key, std::int64_t(q.compute_cycles)});
  return rows;
}

nlohmann::json rows_json(const std::vector<CompareRow>& rows, std::size_t limit, bool starts) {
  nlohmann::json out = nlohmann::json::array();
  auto cell = [](std::int64_t v) { return v == CompareRow::kAbsent ? nlohmann::json(nullptr) : nlohmann::json(v); };
  auto start = [](std::int64_t v) { return v < 0 ? nlohmann::json(nullptr) : nlohmann::json(v); };
  for (std::size_t i = 0; i < std::min(limit, rows.size()); ++i) {
    const CompareRow& r = rows[i];
    nlohmann::json row{{"key", r.key}, {"cycles_a", cell(r.cycles_a)}, {"cycles_b", cell(r.cycles_b)}, {"delta", r.delta()}};
    if (starts) row["start_a"] = start(r.start_a), row["start_b"] = start(r.start_b);
    out.push_back(std::move(row));
  }
  return out;
}

nlohmann::json side_json(const Profile& p) {
  nlohmann::json j{{"model", p.model},
                   {"machine", p.machine_name},
                   {"tiles", p.tiles},
                   {"clock_hz", p.clock_hz},
                   {"plan", p.plan},
                   {"package_sha256", p.package_sha256},
                   {"granularity", std::string(compiler::to_string(p.options.granularity))},
                   {"iterations_in_detail", p.options.iterations_in_detail},
                   {"span_cycles", p.span}};
  if (!p.row_groups.empty()) j["rows"] = rows_text(p);  // several chips: "32 tiles on 2 chips (16 + 16), 1 link row"
  if (!p.tile_peak_bytes.empty()) {
    const auto fullest = std::max_element(p.tile_peak_bytes.begin(), p.tile_peak_bytes.end());
    const auto row = std::uint32_t(fullest - p.tile_peak_bytes.begin());
    j["memory_peak"] = {{"tile", row}, {"row", row_name(p, row)}, {"bytes", *fullest}};
  }
  return j;
}

}  // namespace

std::vector<CompareRow> call_steps(const Profile& p, std::map<std::pair<std::uint32_t, std::int32_t>, std::size_t>* row_of) {
  const std::vector<LoopCoverage> coverage = group_coverage(p);  // per row group: a chip's loop
  const std::vector<std::uint32_t> group_of = row_groups_of(p);
  std::map<std::pair<std::uint32_t, std::int32_t>, Execution> spans;  // (step, layer) over every tile
  for (std::uint32_t t = 0; t < p.samples.size(); ++t)
    for (const Sample& s : p.samples[t]) {
      const StepMeta& m = p.meta[s.meta];
      const LoopCoverage& c = coverage[group_of[t]];
      // A loop with no iteration in detail is its repeat samples' span; else they stand for
      // iterations scaled in from the detailed ones.
      const bool undetailed_loop = m.kind == SampleKind::repeat && c.iterations > 0 && c.detailed == 0;
      if ((m.kind == SampleKind::repeat && !undetailed_loop) || m.step == kNoStep) continue;
      auto [it, added] = spans.try_emplace({m.step, m.layer}, Execution{s.start, s.end, &m, group_of[t]});
      it->second.start = std::min(it->second.start, s.start);
      it->second.end = std::max(it->second.end, s.end);
    }
  std::vector<Execution> executions;
  for (const auto& [key, e] : spans) executions.push_back(e);  // e.meta holds the step and layer
  std::stable_sort(executions.begin(), executions.end(), [](const Execution& x, const Execution& y) { return x.start < y.start; });
  // A step executed more than once with one label in one layer: "label #N", N in time order.
  std::map<std::pair<std::string, std::int32_t>, int> seen;
  std::map<std::string, std::size_t> index;
  std::vector<CompareRow> rows;
  std::vector<std::map<std::uint32_t, std::uint64_t>> looped;  // per row and row group: detailed loop iterations' cycles
  for (const Execution& e : executions) {
    const bool undetailed_loop = e.meta->kind == SampleKind::repeat;
    const int n = seen[{e.meta->phase, e.meta->layer}]++;
    const std::string key = undetailed_loop && p.row_groups.empty() ? "(loop, not in detail)"
                                                                    : e.meta->phase + (n > 0 ? " #" + std::to_string(n + 1) : "");
    const auto [it, added] = index.try_emplace(key, rows.size());
    if (added) rows.push_back(CompareRow{key, 0, CompareRow::kAbsent, std::int64_t(e.start)}), looped.emplace_back();
    if (e.meta->layer >= 0 && !undetailed_loop) looped[it->second][e.group] += e.end - e.start;
    else rows[it->second].cycles_a += std::int64_t(e.end - e.start);
    if (row_of) (*row_of)[{e.meta->step, e.meta->layer}] = it->second;
  }
  std::int64_t total = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (const auto& [group, cycles] : looped[i]) {  // the detailed iterations stand for all of them
      const LoopCoverage& c = coverage[group];
      rows[i].cycles_a += std::int64_t(c.extrapolated ? cycles * c.iterations / c.detailed : cycles);
    }
    total += rows[i].cycles_a;
  }
  // Time no step covers (a whole-call graph profile: all of it); several chips' steps at once
  // count each in full, so their overlap comes off.
  if (total < std::int64_t(p.span)) rows.push_back(CompareRow{"(outside steps)", std::int64_t(p.span) - total});
  if (total > std::int64_t(p.span)) rows.push_back(CompareRow{"(chips at work at once)", std::int64_t(p.span) - total});
  return rows;
}

CompareReport compare_profiles(const Profile& a, const Profile& b) {
  CompareReport r;
  r.diff = diff_profiles(a, b);
  r.differences = r.diff.identity;
  if (a.package_sha256 != b.package_sha256) r.differences.push_back("package: " + a.package_sha256.substr(0, 12) + " vs " + b.package_sha256.substr(0, 12));
  if (a.plan != b.plan) r.differences.push_back("plan: " + (a.plan.empty() ? "?" : a.plan) + " vs " + (b.plan.empty() ? "?" : b.plan));
  if (a.options.granularity != b.options.granularity || a.options.iterations_in_detail != b.options.iterations_in_detail)
    r.differences.push_back("profile detail: " + std::string(compiler::to_string(a.options.granularity)) + ", " +
                            std::to_string(a.options.iterations_in_detail) + " in detail vs " +
                            std::string(compiler::to_string(b.options.granularity)) + ", " +
                            std::to_string(b.options.iterations_in_detail) + " in detail");
  r.steps = merge(call_steps(a), call_steps(b));
  for (const CompareRow& s : r.steps) {
    r.steps_total_a += s.a();
    r.steps_total_b += s.b();
  }
  r.operations = merge(compute_rows(a, GroupBy::operation), compute_rows(b, GroupBy::operation));
  r.kernels = merge(compute_rows(a, GroupBy::kernel), compute_rows(b, GroupBy::kernel));
  std::map<std::tuple<std::string, std::string, std::string, std::string>, FlameDiffRow> flame;
  for (const Profile* p : {&a, &b})
    for (const auto& tile : p->samples)
      for (const Sample& s : tile) {
        const StepMeta& m = p->meta[s.meta];
        const std::string kind(to_string(m.kind));
        FlameDiffRow& row = flame[{kind, m.kernel, m.phase, m.operation}];
        row.kind = kind, row.kernel = m.kernel, row.phase = m.phase, row.operation = m.operation;
        (p == &a ? row.cycles_a : row.cycles_b) += s.end - s.start;
      }
  for (auto& [key, row] : flame) r.flame.push_back(row);
  r.peaks_a = a.tile_peak_bytes;
  r.peaks_b = b.tile_peak_bytes;
  return r;
}

nlohmann::json to_json(const CompareReport& r, std::size_t limit) {
  return {{"differences", r.differences},
          {"warnings", r.diff.warnings},
          {"span_a", r.diff.span_a},
          {"span_b", r.diff.span_b},
          {"span_delta", r.diff.span_delta},
          {"steps",
           {{"total_a", r.steps_total_a},
            {"total_b", r.steps_total_b},
            {"total_delta", r.steps_total_b - r.steps_total_a},
            {"count", r.steps.size()},
            {"rows", rows_json(r.steps, limit, true)}}},
          {"operations", rows_json(r.operations, limit, false)},
          {"kernels", rows_json(r.kernels, limit, false)}};
}

nlohmann::json compare_sides_json(const Profile& a, const Profile& b) { return {{"a", side_json(a)}, {"b", side_json(b)}}; }

nlohmann::json compare_json(const CompareReport& report, const Profile& a, const Profile& b, const std::string& name_a,
                            const std::string& name_b, std::size_t limit) {
  nlohmann::json out = to_json(report, limit);
  out["a"] = name_a, out["b"] = name_b, out["sides"] = compare_sides_json(a, b);
  return out;
}

}  // namespace tilevit::profile
