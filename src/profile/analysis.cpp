#include "profile/analysis.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "profile/rows.hpp"
#include "support/error.hpp"

namespace tilevit::profile {

GroupBy group_by_from_string(const std::string& name) {
  static const std::map<std::string, GroupBy> names{{"kind", GroupBy::kind},
                                                    {"kernel", GroupBy::kernel},
                                                    {"operation", GroupBy::operation},
                                                    {"phase", GroupBy::phase},
                                                    {"tile", GroupBy::tile}};
  const auto it = names.find(name);
  if (it == names.end())
    throw Error("--group-by " + name + ": expected kind, kernel, operation, phase or tile", kExitUsage);
  return it->second;
}

namespace {

// A compute sample's operation; a local copy alone has none (older profiles: "").
std::string operation_of(const StepMeta& m) { return m.operation.empty() ? kLocalCopyOperation : m.operation; }

std::string group_key(const Profile& p, const Sample& s, const std::string& row, GroupBy g) {
  const StepMeta& m = p.meta[s.meta];
  switch (g) {
    case GroupBy::kind: return std::string(to_string(m.kind));
    case GroupBy::kernel: return m.kind == SampleKind::compute ? m.kernel : "(" + std::string(to_string(m.kind)) + ")";
    case GroupBy::operation:
      return m.kind == SampleKind::compute ? operation_of(m) : "(" + std::string(to_string(m.kind)) + ")";
    case GroupBy::phase: return m.phase.empty() ? "(" + std::string(to_string(m.kind)) + ")" : m.phase;
    case GroupBy::tile: return row;
  }
  return "";
}

std::string step_key(const StepMeta& m) {
  return m.phase + (m.layer >= 0 ? " @ layer " + std::to_string(m.layer) : "");
}

}  // namespace

QueryView query_view_from_string(const std::string& name) {
  if (name == "model") return QueryView::model;
  if (name == "layer") return QueryView::layer;
  throw Error("--view " + name + ": expected model or layer", kExitUsage);
}

LoopCoverage loop_coverage(const Profile& p, QueryView view) {
  LoopCoverage c;
  const bool looped = p.loop_end > p.loop_begin && p.options.granularity != Granularity::graph;
  c.iterations = looped ? p.loop_count : 0;
  c.detailed = std::min(c.iterations, p.options.iterations_in_detail);
  c.extrapolated = c.detailed > 0 && c.detailed < c.iterations;
  c.view_span = p.span;
  if (view == QueryView::model) return c;
  if (c.detailed == 0 && !p.row_groups.empty())
    throw Error("profile of " + p.model + ": several chips, each with its own layers: no per-layer view", kExitUsage);
  if (c.detailed == 0)
    throw Error("profile of " + p.model + ": no loop iteration recorded in detail (granularity " +
                    std::string(compiler::to_string(p.options.granularity)) +
                    ", --profile-iterations " + std::to_string(p.options.iterations_in_detail) + "): no per-layer view",
                kExitUsage);
  std::uint64_t first = UINT64_MAX, last = 0;  // the span of iteration 0 over all tiles
  for (const auto& tile : p.samples)
    for (const Sample& s : tile)
      if (p.meta[s.meta].layer == 0 && p.meta[s.meta].kind != SampleKind::repeat) {
        first = std::min(first, s.start);
        last = std::max(last, s.end);
      }
  c.view_span = last > first ? last - first : 0;
  return c;
}

namespace {

// A row's totals outside the loop and inside its detailed iterations, kept apart so the
// loop part can be scaled to all iterations (model view) or to one (layer view); per row
// group, as each chip of a multi-chip profile has its own loop.
struct LoopParts {
  std::uint64_t samples = 0, cycles = 0, flops = 0, words = 0, compute = 0, uncalibrated = 0;
};
struct RowParts {
  QueryRow row;
  std::map<std::uint32_t, LoopParts> loop;  // per row group
  std::uint32_t last_tile = UINT32_MAX, tile = UINT32_MAX;
};

void add_sample(RowParts& r, const Sample& s, bool compute, LoopParts* loop) {
  const std::uint64_t cycles = s.end - s.start, words = std::uint64_t(s.words_sent) + s.words_received;
  (loop ? loop->samples : r.row.samples) += 1;
  (loop ? loop->cycles : r.row.cycles) += cycles;
  (loop ? loop->flops : r.row.flops) += s.flops;
  (loop ? loop->words : r.row.words) += words;
  if (compute) {
    (loop ? loop->compute : r.row.compute_cycles) += cycles;
    (loop ? loop->uncalibrated : r.row.uncalibrated_cycles) += s.uncalibrated_cycles;
  }
  r.row.max_cycles = std::max(r.row.max_cycles, cycles);
}

// Loop part x num / den: all iterations from the detailed ones, or one of them.
void add_loop(QueryRow& row, const LoopParts& l, std::uint64_t num, std::uint64_t den) {
  row.samples += l.samples * num / den;
  row.cycles += l.cycles * num / den;
  row.flops += l.flops * num / den;
  row.words += l.words * num / den;
  row.compute_cycles += l.compute * num / den;
  row.uncalibrated_cycles += l.uncalibrated * num / den;
}

}  // namespace

std::vector<LoopCoverage> group_coverage(const Profile& p) {
  if (p.row_groups.empty()) return {loop_coverage(p, QueryView::model)};
  std::vector<LoopCoverage> out;
  for (const Profile::RowGroup& g : p.row_groups) {
    LoopCoverage c;
    c.iterations = p.options.granularity != Granularity::graph ? g.loop_count : 0;
    c.detailed = std::min(c.iterations, p.options.iterations_in_detail);
    c.extrapolated = c.detailed > 0 && c.detailed < c.iterations;
    c.view_span = p.span;
    out.push_back(c);
  }
  return out;
}

std::vector<QueryRow> query_profile(const Profile& p, GroupBy g, QueryView view) {
  const LoopCoverage coverage = loop_coverage(p, view);
  // The model view scales each row's loop by its group's coverage; the layer view is one chip's.
  const std::vector<LoopCoverage> groups = view == QueryView::model ? group_coverage(p) : std::vector<LoopCoverage>{coverage};
  const std::vector<std::uint32_t> group_of = row_groups_of(p);
  const std::vector<std::string> names = g == GroupBy::tile ? row_names(p) : std::vector<std::string>(p.samples.size());
  std::map<std::string, RowParts> rows;
  for (std::uint32_t t = 0; t < p.samples.size(); ++t) {
    const std::uint32_t group = view == QueryView::model ? group_of[t] : 0;
    for (const Sample& s : p.samples[t]) {
      const StepMeta& m = p.meta[s.meta];
      const bool loop_detail = m.layer >= 0 && m.kind != SampleKind::repeat;
      if (view == QueryView::layer && !loop_detail) continue;
      if (m.kind == SampleKind::repeat && groups[group].extrapolated) continue;  // stood for what is scaled in
      if (g == GroupBy::tile && m.kind == SampleKind::idle) continue;              // a tile's share is its busy time
      const std::string key = group_key(p, s, names[t], g);
      RowParts& r = rows[key];
      r.row.key = key;
      r.tile = g == GroupBy::tile ? t : UINT32_MAX;
      add_sample(r, s, m.kind == SampleKind::compute, loop_detail ? &r.loop[group] : nullptr);
      if (r.last_tile != t) ++r.row.tiles;
      r.last_tile = t;
    }
  }
  const double area = double(coverage.view_span) * (g == GroupBy::tile ? 1.0 : double(std::max<std::uint32_t>(p.tiles, 1)));
  std::vector<RowParts> parts;
  for (auto& [key, r] : rows) {
    for (const auto& [group, loop] : r.loop) {
      const LoopCoverage& c = groups[group];
      if (view == QueryView::layer) add_loop(r.row, loop, 1, c.detailed);
      else add_loop(r.row, loop, c.extrapolated ? c.iterations : 1, c.extrapolated ? c.detailed : 1);
    }
    r.row.share = area > 0 ? double(r.row.cycles) / area : 0;
    parts.push_back(r);
  }
  std::stable_sort(parts.begin(), parts.end(), [](const RowParts& a, const RowParts& b) {
    if (a.row.cycles != b.row.cycles) return a.row.cycles > b.row.cycles;
    return a.tile != b.tile ? a.tile < b.tile : a.row.key < b.row.key;
  });
  std::vector<QueryRow> out;
  for (const RowParts& r : parts) out.push_back(r.row);
  return out;
}

std::vector<StepSpan> step_spans(const Profile& p) {
  // (step, layer) -> span over every tile's samples of that step execution.
  std::map<std::pair<std::uint32_t, std::int32_t>, StepSpan> spans;
  for (const auto& tile : p.samples)
    for (const Sample& s : tile) {
      const StepMeta& m = p.meta[s.meta];
      if (m.step == kNoStep || m.kind == SampleKind::repeat) continue;
      auto [it, inserted] = spans.try_emplace({m.step, m.layer}, StepSpan{step_key(m), s.start, s.end});
      it->second.start = std::min(it->second.start, s.start);
      it->second.end = std::max(it->second.end, s.end);
    }
  std::vector<StepSpan> out;
  for (auto& [k, v] : spans) out.push_back(v);
  std::stable_sort(out.begin(), out.end(), [](const StepSpan& a, const StepSpan& b) { return a.start < b.start; });
  // Several steps can share a phase label: number repeats in time order.
  std::map<std::string, int> seen;
  for (StepSpan& s : out)
    if (int n = seen[s.key]++; n > 0) s.key += " #" + std::to_string(n + 1);
  return out;
}

DiffReport diff_profiles(const Profile& a, const Profile& b) {
  DiffReport r;
  r.same_package = !a.package_sha256.empty() && a.package_sha256 == b.package_sha256;
  r.span_a = a.span;
  r.span_b = b.span;
  r.span_delta = std::int64_t(b.span) - std::int64_t(a.span);
  if (a.model != b.model) r.identity.push_back("model: " + a.model + " vs " + b.model);
  // Loop iterations (layers): the profile's, or each chip's ("2 + 2").
  auto layers = [](const Profile& p) {
    if (p.row_groups.empty()) return std::to_string(p.loop_count);
    std::string text;
    for (const auto& g : p.row_groups)
      if (g.name != kLinkRowGroup) text += (text.empty() ? "" : " + ") + std::to_string(g.loop_count);
    return text;
  };
  if (layers(a) != layers(b)) r.identity.push_back("loop iterations (layers): " + layers(a) + " vs " + layers(b));
  auto machine = [](const Profile& p) { return p.machine_name + " (" + rows_text(p) + ", " + std::to_string(p.clock_hz) + " Hz)"; };
  if (machine(a) != machine(b)) r.identity.push_back("machine: " + machine(a) + " vs " + machine(b));
  if (!r.same_package)
    r.warnings.push_back("profiles of different packages (" + (a.package_sha256.empty() ? "?" : a.package_sha256.substr(0, 16)) +
                         " vs " + (b.package_sha256.empty() ? "?" : b.package_sha256.substr(0, 16)) +
                         "): steps matched by phase and layer, operations compared by total cycles");
  const bool same_granularity = a.options.granularity == b.options.granularity;
  if (!same_granularity)
    r.warnings.push_back("granularities differ (" + std::string(compiler::to_string(a.options.granularity)) + " vs " +
                         std::string(compiler::to_string(b.options.granularity)) +
                         "): operations are not compared, step spans are");

  std::map<std::string, StepDiff> steps;
  for (const StepSpan& s : step_spans(a)) steps[s.key] = StepDiff{s.key, std::int64_t(s.end - s.start), -1, 0};
  for (const StepSpan& s : step_spans(b)) {
    auto [it, inserted] = steps.try_emplace(s.key, StepDiff{s.key, -1, -1, 0});
    it->second.cycles_b = std::int64_t(s.end - s.start);
  }
  for (auto& [key, d] : steps) {
    if (d.cycles_a < 0 || d.cycles_b < 0) {
      ++r.unmatched_steps;
      r.steps.push_back(d);
      continue;
    }
    ++r.matched_steps;
    d.delta = d.cycles_b - d.cycles_a;
    if (d.delta != 0) {
      ++r.changed_steps;
      r.steps.push_back(d);
    }
  }
  auto magnitude = [](const StepDiff& d) {
    return d.cycles_a < 0 || d.cycles_b < 0 ? std::max(d.cycles_a, d.cycles_b) : std::abs(d.delta);
  };
  std::stable_sort(r.steps.begin(), r.steps.end(),
                   [&](const StepDiff& x, const StepDiff& y) { return magnitude(x) > magnitude(y); });

  if (r.same_package && a.options == b.options && a.tiles == b.tiles) {
    for (std::size_t t = 0; t < a.samples.size(); ++t) {
      const auto& x = a.samples[t];
      const auto& y = b.samples[t];
      r.samples_compared += std::max(x.size(), y.size());
      for (std::size_t i = 0; i < std::max(x.size(), y.size()); ++i)
        if (i >= x.size() || i >= y.size() || x[i].start != y[i].start || x[i].end != y[i].end ||
            !(a.meta[x[i].meta] == b.meta[y[i].meta]))
          ++r.samples_differing;
    }
  }
  if (!r.same_package && same_granularity) {
    // Compute cycles only: how idle, sync and exchange time is sampled is not an operation.
    auto compute_ops = [](const Profile& p) {
      std::map<std::string, std::uint64_t> cycles;
      for (const auto& tile : p.samples)
        for (const Sample& s : tile)
          if (p.meta[s.meta].kind == SampleKind::compute) cycles[operation_of(p.meta[s.meta])] += s.end - s.start;
      return cycles;
    };
    std::map<std::string, OperationDiff> ops;
    for (const auto& [op, cycles] : compute_ops(a)) ops[op] = OperationDiff{op, cycles, 0};
    for (const auto& [op, cycles] : compute_ops(b)) {
      auto [it, inserted] = ops.try_emplace(op, OperationDiff{op, 0, 0});
      it->second.cycles_b = cycles;
    }
    for (auto& [k, o] : ops)
      if (o.cycles_a != o.cycles_b) r.operations.push_back(o);
    std::stable_sort(r.operations.begin(), r.operations.end(), [](const OperationDiff& x, const OperationDiff& y) {
      return std::llabs(std::int64_t(x.cycles_b - x.cycles_a)) > std::llabs(std::int64_t(y.cycles_b - y.cycles_a));
    });
  }
  return r;
}

double QueryRow::calibrated_share() const {
  if (compute_cycles == 0) return -1;
  return 1.0 - double(uncalibrated_cycles) / double(compute_cycles);
}

nlohmann::json to_json(const QueryRow& r) {
  return {{"key", r.key},
          {"samples", r.samples},
          {"cycles", r.cycles},
          {"max_cycles", r.max_cycles},
          {"flops", r.flops},
          {"words", r.words},
          {"tiles", r.tiles},
          {"share", r.share},
          {"compute_cycles", r.compute_cycles},
          {"uncalibrated_cycles", r.uncalibrated_cycles},
          {"calibrated_share", r.compute_cycles ? nlohmann::json(r.calibrated_share()) : nlohmann::json(nullptr)}};
}

nlohmann::json to_json(const DiffReport& r, std::size_t limit) {
  nlohmann::json steps = nlohmann::json::array(), ops = nlohmann::json::array();
  for (std::size_t i = 0; i < std::min(limit, r.steps.size()); ++i) {
    const StepDiff& d = r.steps[i];
    steps.push_back({{"step", d.key},
                     {"cycles_a", d.cycles_a < 0 ? nlohmann::json(nullptr) : nlohmann::json(d.cycles_a)},
                     {"cycles_b", d.cycles_b < 0 ? nlohmann::json(nullptr) : nlohmann::json(d.cycles_b)},
                     {"delta", d.delta}});
  }
  for (std::size_t i = 0; i < std::min(limit, r.operations.size()); ++i)
    ops.push_back({{"operation", r.operations[i].operation},
                   {"cycles_a", r.operations[i].cycles_a},
                   {"cycles_b", r.operations[i].cycles_b},
                   {"delta", std::int64_t(r.operations[i].cycles_b - r.operations[i].cycles_a)}});
  return {{"same_package", r.same_package},
          {"identity_differences", r.identity},
          {"warnings", r.warnings},
          {"span_a", r.span_a},
          {"span_b", r.span_b},
          {"span_delta", r.span_delta},
          {"matched_steps", r.matched_steps},
          {"changed_steps", r.changed_steps},
          {"unmatched_steps", r.unmatched_steps},
          {"samples_compared", r.samples_compared},
          {"samples_differing", r.samples_differing},
          {"steps", steps},
          {"operations", ops}};
}

}  // namespace tilevit::profile
