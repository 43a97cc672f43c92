#pragma once
// What `tilevit run` says of a run job's report (job/run_job.hpp), for one chip and for
// several alike: run.json (written here only), the --json object, the text lines.
#include <nlohmann/json.hpp>
#include <string>

#include "job/run_job.hpp"

namespace tilevit::cli {

// What the run was given that the report echoes: enough to repeat it.
struct RunEcho {
  std::string weights;             // "random test model, seed N" or the checkpoint
  nlohmann::json images;           // "random, seed N" or the files
  std::uint64_t seed = 0;
  int ranks = 1;                   // MPI ranks (a machine of several chips)
};

// The report as one JSON object (run.json and --json).
nlohmann::json run_report_json(const job::RunPackage& package, const job::RunSettings& settings, const RunEcho& echo,
                               const job::RunReport& report);

// The result lines: the package, each call, the checks, the verdict (PASS, FAIL or
// UNCHECKED) last.
void print_run_text(const nlohmann::json& j, const job::RunPackage& package, const job::RunSettings& settings,
                    const job::RunReport& report);

// run.json in the output directory when the verdict is known and again with the viewers;
// the text lines (before the viewers) or the --json object (at the end) on stdout.
class RunPrinter : public job::RunSink {
 public:
  RunPrinter(const job::RunPackage& package, const job::RunSettings& settings, const RunEcho& echo,
             job::OutputDirectory& out, bool json)
      : package_(package), settings_(settings), echo_(echo), out_(out), json_(json) {}
  void result(const job::RunReport& report) override;
  void finished(const job::RunReport& report) override;

 private:
  const job::RunPackage& package_;
  const job::RunSettings& settings_;
  const RunEcho& echo_;
  job::OutputDirectory& out_;
  bool json_;
};

}  // namespace tilevit::cli
