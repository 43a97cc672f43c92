// tilevit profile render|query|diff: look at profiles (.tvprof) written by `tilevit run`.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "profile/analysis.hpp"
#include "profile/bounds.hpp"
#include "profile/compare.hpp"
#include "profile/compare_html.hpp"
#include "profile/profile_file.hpp"
#include "profile/rows.hpp"
#include "profile/timeline_html.hpp"
#include "profile/trace.hpp"
#include "support/atomic_file.hpp"
#include "support/digits.hpp"
#include "support/error.hpp"
#include "target/model_validation.hpp"

namespace tilevit::cli {
namespace {

std::string signed_commas(std::int64_t v) { return (v < 0 ? "-" : v > 0 ? "+" : "") + with_commas(std::uint64_t(std::llabs(v))); }

struct ProfileCommand {
  std::string input, input_b, output, group_by = "kind", format = "html", view = "model";
  std::size_t limit = 20;
  bool json = false;
  CLI::App *render = nullptr, *query = nullptr, *diff = nullptr, *compare = nullptr;

  CommandAction setup(CLI::App& app) {
    app.require_subcommand(1);
    render = app.add_subcommand("render", "write the timeline viewer (model.html) or a Chrome trace of a profile");
    render->add_option("profile", input, "profile file (.tvprof)")->required();
    render->add_option("-o,--output", output, "output file")->required();
    render->add_option("--format", format, "html (timeline viewer) or trace (Chrome/Perfetto trace JSON)")
        ->check(CLI::IsMember({"html", "trace"}))
        ->capture_default_str();
    query = app.add_subcommand("query", "totals of a profile grouped by one field");
    query->add_option("profile", input, "profile file (.tvprof)")->required();
    query->add_option("--group-by", group_by, "kind, kernel, operation, phase or tile (a tile's busy share of the span)")
        ->capture_default_str();
    query->add_option("--view", view,
                      "model: the whole call, loop iterations not recorded in detail extrapolated from the detailed "
                      "ones; layer: one encoder layer")
        ->capture_default_str();
    query->add_option("--limit", limit, "rows to print")->capture_default_str();
    query->add_flag("--json", json, "print one JSON object");
    diff = app.add_subcommand("diff", "compare two profiles step by step (or by operation across packages)");
    diff->add_option("a", input, "first profile")->required();
    diff->add_option("b", input_b, "second profile")->required();
    diff->add_option("--limit", limit, "steps and operations to list")->capture_default_str();
    diff->add_flag("--json", json, "print one JSON object");
    compare = app.add_subcommand("compare",
                                 "write compare.html (both timelines on one axis, steps, operations and kernels by cycle "
                                 "difference, flame-graph difference, memory peaks) and print where the cycles moved");
    compare->add_option("a", input, "first profile (A)")->required();
    compare->add_option("b", input_b, "second profile (B); differences are B - A")->required();
    compare->add_option("-o,--output", output, "the page to write (compare.html)")->required();
    compare->add_option("--limit", limit, "rows of each table to print")->capture_default_str();
    compare->add_flag("--json", json, "print one JSON object");
    return [this] { return run(); };
  }

  int run() {
    if (render->parsed()) return run_render();
    if (query->parsed()) return run_query();
    if (compare->parsed()) return run_compare();
    return run_diff();
  }

  int run_render() {
    const auto p = profile::read_profile(input);
    write_text_atomically(output, format == "html" ? profile::render_timeline_html(p, profile::peaks_of(p)) : profile::chrome_trace_json(p));
    std::fprintf(stderr, "tilevit: wrote %s\n", output.c_str());
    return kExitOk;
  }

  int run_query() {
    const auto p = profile::read_profile(input);
    const profile::QueryView query_view = profile::query_view_from_string(view);
    const auto rows = profile::query_profile(p, profile::group_by_from_string(group_by), query_view);
    const profile::LoopCoverage loop = profile::loop_coverage(p, query_view);
    // The calibrated share over the view: the header's totals for the whole call, the
    // rows' sums for one layer.
    std::uint64_t compute = p.tile_cycles[std::size_t(profile::SampleKind::compute)];
    std::uint64_t uncalibrated = p.uncalibrated_compute_cycles;
    const bool one_layer = query_view == profile::QueryView::layer;
    if (one_layer) {
      compute = uncalibrated = 0;
      for (const auto& r : rows) compute += r.compute_cycles, uncalibrated += r.uncalibrated_cycles;
    }
    const std::string scope = one_layer ? "compute tile-cycles, all tiles, one encoder layer"
                                        : "compute tile-cycles, all tiles, every loop iteration";
    if (json) {
      nlohmann::json out{{"profile", input}, {"group_by", group_by}, {"span_cycles", p.span}, {"tiles", p.tiles},
                         {"view", view}, {"view_span_cycles", loop.view_span},
                         {"loop", {{"iterations", loop.iterations}, {"detailed", loop.detailed},
                                   {"extrapolated", loop.extrapolated}}},
                         {"kernel_calibration",
                          {{"scope", scope},
                           {"compute_tile_cycles", compute},
                           {"uncalibrated_tile_cycles", uncalibrated},
                           {"calibrated_share", compute ? 1.0 - double(uncalibrated) / double(compute) : 1.0}}},
                         {"model_validation", target::model_validation_json()}};
      if (!p.row_groups.empty()) out["row_groups"] = row_groups_json(p);
      const profile::BoundReport bounds = profile::bound_report(p);
      const bool operation_rows = !one_layer && group_by == "operation";
      out["rows"] = profile::query_rows_json(rows, operation_rows ? &bounds.operations : nullptr, limit);
      out["bounds"] = profile::to_json(bounds, SIZE_MAX);
      std::cout << out.dump(1) << "\n";
      return kExitOk;
    }
    std::printf("%s: %s, %s, %s, span %s cycles (%.3f ms), granularity %s\n", input.c_str(), p.model.c_str(),
                p.machine_name.c_str(), profile::rows_text(p).c_str(), with_commas(p.span).c_str(),
                double(p.span) / double(p.clock_hz) * 1e3, std::string(compiler::to_string(p.options.granularity)).c_str());
    if (one_layer)
      std::printf("view: one encoder layer (mean of %u detailed), %s cycles\n", loop.detailed,
                  with_commas(loop.view_span).c_str());
    else
      print_extrapolation(p);
    // Not "kernel cycles", the words of compile, run and inspect for each step's slowest tile.
    std::printf("compute tile-cycles: %s calibrated of %s (%s; compile and run count each step's slowest tile)\n",
                percent_text(compute - uncalibrated, compute).c_str(), with_commas(compute).c_str(),
                one_layer ? "all tiles, one encoder layer" : "all tiles, every loop iteration");
    std::printf("%s\n", target::model_validation_line().c_str());
    if (const auto bounds = profile::bound_report(p); bounds.available && bounds.call_bound > 0)
      std::printf("lower bound of the call: %s cycles (plan_bound: all tiles at peak, no exchange or sync); "
                  "achieved/bound %.2f (--json: per operation and per step)\n",
                  with_commas(std::uint64_t(bounds.call_bound)).c_str(), double(p.span) / bounds.call_bound);
    const std::size_t shown = std::min(limit, rows.size());
    int width = int(group_by.size());  // names are never cut: the column is as wide as the longest
    for (std::size_t i = 0; i < shown; ++i) width = std::max(width, int(rows[i].key.size()));
    std::printf("%-*s %10s %16s %8s %12s %6s %10s\n", width, group_by.c_str(), "samples", "tile cycles", "share",
                "max cycles", "tiles", "calibrated");
    for (std::size_t i = 0; i < shown; ++i) {
      const auto& r = rows[i];
      const std::string calibrated =
          r.compute_cycles ? percent_text(r.compute_cycles - r.uncalibrated_cycles, r.compute_cycles) : "-";
      std::printf("%-*s %10s %16s %7.2f%% %12s %6u %10s\n", width, r.key.c_str(), with_commas(r.samples).c_str(),
                  with_commas(r.cycles).c_str(), 100 * r.share, with_commas(r.max_cycles).c_str(), r.tiles,
                  calibrated.c_str());
    }
    if (rows.size() > limit) std::printf("(%zu more; --limit)\n", rows.size() - limit);
    return kExitOk;
  }

  // Several chips: each with its loop (its stage's layers) and how the model view scales it.
  static nlohmann::json row_groups_json(const profile::Profile& p) {
    nlohmann::json groups = nlohmann::json::array();
    const auto coverage = profile::group_coverage(p);
    for (std::size_t g = 0; g < p.row_groups.size(); ++g)
      groups.push_back({{"name", p.row_groups[g].name}, {"rows", p.row_groups[g].rows},
                        {"loop", {{"iterations", coverage[g].iterations}, {"detailed", coverage[g].detailed},
                                  {"extrapolated", coverage[g].extrapolated}}}});
    return groups;
  }

  // The whole call's loop iterations scaled in from the detailed ones (each chip's, several chips).
  static void print_extrapolation(const profile::Profile& p) {
    const auto coverage = profile::group_coverage(p);
    for (std::size_t g = 0; g < coverage.size(); ++g) {
      const profile::LoopCoverage& c = coverage[g];
      if (!c.extrapolated) continue;
      const std::string whose = p.row_groups.empty() ? "" : p.row_groups[g].name + "'s ";
      std::printf("view: the whole call; %sloop iterations %u..%u of %u extrapolated from the %u recorded in detail\n",
                  whose.c_str(), c.detailed + 1, c.iterations, c.iterations, c.detailed);
    }
  }

  static bool differs(const profile::DiffReport& r) {
    return !r.identity.empty() || r.span_delta != 0 || r.changed_steps > 0 || r.unmatched_steps > 0 || r.samples_differing > 0 ||
           !r.operations.empty();
  }

  // The steps that changed most, as a table under its own header; names are never cut.
  void print_diff_steps(const profile::DiffReport& r) const {
    const std::size_t shown = std::min(limit, r.steps.size());
    if (shown == 0) return;
    int width = 4;
    bool numbered = false;
    for (std::size_t i = 0; i < shown; ++i) {
      width = std::max(width, int(r.steps[i].key.size()));
      numbered |= r.steps[i].key.find(" #") != std::string::npos;
    }
    std::printf("steps that changed most (span of a step execution over all tiles, cycles):\n");
    std::printf("  %-*s %14s    %14s  %s\n", width, "step", "A", "B", "change");
    auto cell = [](std::int64_t v) { return v < 0 ? std::string("-") : with_commas(std::uint64_t(v)); };
    for (std::size_t i = 0; i < shown; ++i) {
      const auto& d = r.steps[i];
      std::printf("  %-*s %14s -> %14s  %s\n", width, d.key.c_str(), cell(d.cycles_a).c_str(), cell(d.cycles_b).c_str(),
                  d.cycles_a < 0 || d.cycles_b < 0 ? "(unmatched)" : signed_commas(d.delta).c_str());
    }
    if (numbered)
      std::printf("  (#N: the Nth execution, in time order, of steps that share a phase label and layer)\n");
  }

  // Profiles of different packages: compute tile-cycles per graph operation.
  void print_diff_operations(const profile::DiffReport& r) const {
    const std::size_t shown = std::min(limit, r.operations.size());
    if (shown == 0) return;
    int width = 9;
    for (std::size_t i = 0; i < shown; ++i) width = std::max(width, int(r.operations[i].operation.size()));
    std::printf("operations that changed most (compute tile-cycles, all tiles):\n");
    std::printf("  %-*s %14s    %14s  %s\n", width, "operation", "A", "B", "change");
    for (std::size_t i = 0; i < shown; ++i) {
      const auto& o = r.operations[i];
      std::printf("  %-*s %14s -> %14s  %s\n", width, o.operation.c_str(), with_commas(o.cycles_a).c_str(),
                  with_commas(o.cycles_b).c_str(), signed_commas(std::int64_t(o.cycles_b - o.cycles_a)).c_str());
    }
  }

  // One table of a comparison: name, A, B, B - A; names are never cut.
  void print_compare_rows(const char* title, const char* first, const std::vector<profile::CompareRow>& rows) const {
    const std::size_t shown = std::min(limit, rows.size());
    if (shown == 0) return;
    int width = int(std::string(first).size());
    for (std::size_t i = 0; i < shown; ++i) width = std::max(width, int(rows[i].key.size()));
    auto cell = [](std::int64_t v) {
      return v == profile::CompareRow::kAbsent ? std::string("-") : v < 0 ? "-" + with_commas(std::uint64_t(-v)) : with_commas(std::uint64_t(v));
    };
    std::printf("%s:\n  %-*s %14s    %14s  %s\n", title, width, first, "A", "B", "B - A");
    for (std::size_t i = 0; i < shown; ++i)
      std::printf("  %-*s %14s -> %14s  %s\n", width, rows[i].key.c_str(), cell(rows[i].cycles_a).c_str(),
                  cell(rows[i].cycles_b).c_str(), signed_commas(rows[i].delta()).c_str());
    if (rows.size() > shown) std::printf("  (%zu more; --limit)\n", rows.size() - shown);
  }

  int run_compare() {
    const auto a = profile::read_profile(input);
    const auto b = profile::read_profile(input_b);
    const auto r = profile::compare_profiles(a, b);
    write_text_atomically(output, profile::render_compare_html(a, b, input, input_b));
    for (const auto& w : r.diff.warnings) std::fprintf(stderr, "tilevit: warning: %s\n", w.c_str());
    if (json) {
      nlohmann::json out = profile::compare_json(r, a, b, input, input_b, limit);
      out["output"] = output;
      std::cout << out.dump(1) << "\n";
      return kExitOk;
    }
    for (const auto& d : r.differences) std::printf("different %s\n", d.c_str());
    std::printf("span: %s -> %s cycles (%s)\n", with_commas(r.diff.span_a).c_str(), with_commas(r.diff.span_b).c_str(),
                signed_commas(r.diff.span_delta).c_str());
    std::printf("steps: %zu, their cycles sum to each span: %s -> %s (%s)\n", r.steps.size(),
                with_commas(std::uint64_t(r.steps_total_a)).c_str(), with_commas(std::uint64_t(r.steps_total_b)).c_str(),
                signed_commas(r.steps_total_b - r.steps_total_a).c_str());
    print_compare_rows("steps by cycle difference (whole call)", "step", r.steps);
    print_compare_rows("operations by difference (compute tile-cycles)", "operation", r.operations);
    print_compare_rows("kernel kinds by difference (compute tile-cycles)", "kernel", r.kernels);
    std::fprintf(stderr, "tilevit: wrote %s\n", output.c_str());
    return kExitOk;
  }

  int run_diff() {
    const auto a = profile::read_profile(input);
    const auto b = profile::read_profile(input_b);
    const auto r = profile::diff_profiles(a, b);
    for (const auto& w : r.warnings) std::fprintf(stderr, "tilevit: warning: %s\n", w.c_str());
    if (json) {
      std::cout << profile::to_json(r, limit).dump(1) << "\n";
      return differs(r) ? kExitFailure : kExitOk;
    }
    for (const auto& d : r.identity) std::printf("different %s\n", d.c_str());
    std::printf("span: %s -> %s cycles (%s, %+.4f%%)\n", with_commas(r.span_a).c_str(), with_commas(r.span_b).c_str(),
                signed_commas(r.span_delta).c_str(), r.span_a ? 100.0 * double(r.span_delta) / double(r.span_a) : 0.0);
    std::printf("steps: %llu matched, %llu changed, %llu only in one profile\n", (unsigned long long)r.matched_steps,
                (unsigned long long)r.changed_steps, (unsigned long long)r.unmatched_steps);
    if (r.samples_compared > 0)
      std::printf("samples: %llu compared, %llu differ\n", (unsigned long long)r.samples_compared,
                  (unsigned long long)r.samples_differing);
    print_diff_steps(r);
    print_diff_operations(r);
    const bool same = !differs(r);
    if (same) std::printf("no difference\n");
    return same ? kExitOk : kExitFailure;  // like diff(1): 1 when the profiles differ
  }
};

ProfileCommand command;
const CommandRegistration registration("profile", "render, query or compare execution profiles (.tvprof)",
                                       [](CLI::App& app) { return command.setup(app); });

}  // namespace
}  // namespace tilevit::cli
