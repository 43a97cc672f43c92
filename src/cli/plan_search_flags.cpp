#include "cli/plan_search_flags.hpp"

#include "cli/model_options.hpp"
#include "cli/validators.hpp"
#include "support/atomic_file.hpp"
#include "support/error.hpp"
#include "support/threads.hpp"

namespace tilevit::cli {

void SearchFlags::add_to(CLI::App& app) {
  app_ = &app;
  app.add_option("--optimization-steps", steps,
                 "plan search: candidates to compile fully beyond the baseline (0 = the heuristic plan; "
                 "default 8, or 0 with --plan)")
      ->check(CLI::Range(0u, 100000u))
      ->capture_default_str();
  app.add_option("--search-seconds", seconds, "cap on the plan search's wall time (0 = none)")
      ->check(finite_real(0.0, 1e7))
      ->capture_default_str();
  app.add_option("--optimization-report", report_file, "write the plan search's report (JSON) to this file");
}

bool SearchFlags::asked() const {
  return !report_file.empty() || (app_ != nullptr && app_->get_option("--optimization-steps")->count() > 0);
}

void SearchFlags::check(bool plan_given) const {
  if (app_ != nullptr && app_->get_option("--search-seconds")->count() > 0 && steps_for(plan_given) == 0)
    throw Error("--search-seconds caps the plan search, and no search runs (--optimization-steps 0" +
                    std::string(plan_given ? ", or --plan without --optimization-steps" : "") + ")",
                kExitUsage);
  if (!report_file.empty()) check_output_writable(report_file);
}

bool SearchFlags::stream_words_given() const {
  return app_ != nullptr && app_->get_option("--exchange-stream-words")->count() > 0;
}

system::StageSearchOptions SearchFlags::for_stages(bool plan_given) const {
  return {steps_for(plan_given), seconds, static_cast<std::uint32_t>(std::max(1, host_threads())), progress};
}

namespace {

// A plan file's W pins the exchange stream words, unless the command line names others.
void apply_plan_file(const std::string& path, const compiler::PlanTarget& target, const SearchFlags& search,
                     compiler::CompileOptions& options) {
  const compiler::PlanFile plan = compiler::read_plan_file(path, target);
  const std::uint32_t asked = options.plan.exchange_stream_words;
  options.plan.pins = plan.plan.pins;
  if (!plan.pins_stream_words) return;
  if (search.stream_words_given() && asked != plan.plan.exchange_stream_words)
    throw Error("--exchange-stream-words " + std::to_string(asked) + " contradicts " + path +
                    " (exchange_stream_words " + std::to_string(plan.plan.exchange_stream_words) + "): drop one",
                kExitUsage);
  options.plan.exchange_stream_words = plan.plan.exchange_stream_words;
}

}  // namespace


PlannedCompile compile_planned(const compiler::Graph& graph, const target::MachineDescription& machine,
                               compiler::CompileOptions options, const std::string& plan_file,
                               const SearchFlags& search) {
  if (!plan_file.empty())
    apply_plan_file(plan_file, compiler::plan_target(graph.config, machine), search, options);
  PlannedCompile out = job::compile_planned(
      graph, machine, options, plan_file,
      {search.steps_for(!plan_file.empty()), search.seconds, !search.report_file.empty(), progress});
  if (!search.report_file.empty()) write_text_atomically(search.report_file, out.report->dump(1) + "\n");
  return out;
}

}  // namespace tilevit::cli
