#pragma once
// `tilevit profile compare A B`: two profiles side by side. The step table gives every
// superstep of each call its cycles over the whole call (loop iterations not recorded in
// detail extrapolated from the detailed ones), so each side's rows sum to its span and the
// table's total difference is exactly span B - span A. Operations and kernel kinds compare
// compute tile-cycles; the flame rows carry both sides' tile-cycles per (kind, kernel,
// phase, operation). Works across plans, models and machines (rows match by name).
// The page: compare_html.hpp; docs/VIEWERS.md, "The comparison page".
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "profile/analysis.hpp"

namespace tilevit::profile {

struct CompareRow {
  static constexpr std::int64_t kAbsent = INT64_MIN;
  std::string key;
  // kAbsent: absent on that side; negative only in a pipeline's "(chips at work at once)"
  std::int64_t cycles_a = kAbsent, cycles_b = kAbsent;
  std::int64_t start_a = -1, start_b = -1;  // steps: the first execution's start cycle; -1: none
  std::int64_t a() const { return cycles_a == kAbsent ? 0 : cycles_a; }  // 0 when absent
  std::int64_t b() const { return cycles_b == kAbsent ? 0 : cycles_b; }
  std::int64_t delta() const { return b() - a(); }
};

struct FlameDiffRow {
  std::string kind, kernel, phase, operation;
  std::uint64_t cycles_a = 0, cycles_b = 0;  // tile-cycles, every recorded sample
};

struct CompareReport {
  DiffReport diff;                     // identity differences, warnings, span difference
  std::vector<std::string> differences;  // what differs, in words (model, machine, plan, ...)
  std::vector<CompareRow> steps;       // per step, whole call; sums are the spans
  std::int64_t steps_total_a = 0, steps_total_b = 0;
  std::vector<CompareRow> operations;  // compute tile-cycles per graph operation (whole call)
  std::vector<CompareRow> kernels;     // compute tile-cycles per kernel kind (whole call)
  std::vector<FlameDiffRow> flame;
  std::vector<std::uint32_t> peaks_a, peaks_b;  // per tile memory peaks (empty: not recorded)
};

// The step rows of one profile: key -> cycles over the whole call, in time order of the
// first execution; their sum is the span ("(outside steps)" holds any remainder; in a
// pipeline, where chips run steps at once, "(chips at work at once)" takes the overlap off).
// row_of, when given, receives the row of every (step, layer) execution.
std::vector<CompareRow> call_steps(const Profile& profile,
                                   std::map<std::pair<std::uint32_t, std::int32_t>, std::size_t>* row_of = nullptr);

CompareReport compare_profiles(const Profile& a, const Profile& b);

// limit: rows of each table (the step total is over every row).
nlohmann::json to_json(const CompareReport& report, std::size_t limit);
// {a, b}: each side's model, machine, plan, package, span and fullest tile's memory peak.
nlohmann::json compare_sides_json(const Profile& a, const Profile& b);
// `profile compare A B --json`: to_json(report, limit) with what each side is called
// ("a", "b") and compare_sides_json ("sides").
nlohmann::json compare_json(const CompareReport& report, const Profile& a, const Profile& b, const std::string& name_a,
                            const std::string& name_b, std::size_t limit);

}  // namespace tilevit::profile
