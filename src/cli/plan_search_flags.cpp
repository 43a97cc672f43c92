#include "cli/plan_search_flags.hpp"

#include "cli/capacity.hpp"
#include "cli/model_options.hpp"
#include "cli/validators.hpp"
#include "compiler/levers.hpp"
#include "compiler/plan_search.hpp"
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

void with_plan_file_errors(const std::string& plan_file, const std::function<void()>& work) {
  try {
    work();
  } catch (const compiler::DoesNotFit&) {
    throw;
  } catch (const Error& e) {
    // A pin the compiler refuses ("compiler: pinned GEMM grid ... for op X: ...") is a
    // fault of the file that pinned it: named, and a bad input.
    const std::string message = e.what();
    const std::string prefix = "compiler: ";
    if (plan_file.empty() || e.exit_code() != kExitUsage || message.rfind(prefix, 0) != 0) throw;
    throw Error(plan_file + ": " + message.substr(prefix.size()), kExitBadInput);
  }
}

PlannedCompile compile_planned(const compiler::Graph& graph, const target::MachineDescription& machine,
                               compiler::CompileOptions options, const std::string& plan_file,
                               const SearchFlags& search) {
  const compiler::PlanTarget target = compiler::plan_target(graph.config, machine);
  if (!plan_file.empty()) apply_plan_file(plan_file, target, search, options);
  compiler::PlanSearchOptions so;
  so.steps = search.steps_for(!plan_file.empty());
  so.max_seconds = search.seconds;
  so.threads = static_cast<std::uint32_t>(std::max(1, host_threads()));
  so.progress = progress;
  std::optional<compiler::PlanSearchResult> found;
  try {
    with_plan_file_errors(plan_file, [&] {
      if (!plan_file.empty()) compiler::check_plan_pins_every_op(graph, options.plan);
      found.emplace(compiler::search_plan(graph, machine, options, so));
    });
  } catch (const compiler::DoesNotFit& e) {
    if (plan_file.empty()) throw_does_not_fit(graph, machine, options, e);
    throw Error(plan_file + ": the model does not fit with this plan: " + compiler::describe(e.overflow()),
                kExitBadInput);
  }
  PlannedCompile out{std::move(found->compiled),
                     compiler::PlanFile{target, found->plan},
                     std::nullopt};
  if (so.steps > 0 || !search.report_file.empty()) out.report = compiler::plan_search_report_json(found->report);
  if (!search.report_file.empty()) write_text_atomically(search.report_file, out.report->dump(1) + "\n");
  return out;
}

}  // namespace tilevit::cli
