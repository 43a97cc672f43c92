// tilevit sweep: a design-space sweep (docs/SWEEP.md) run here with N workers, through
// Slurm as a job array, or as MPI ranks; `sweep merge` and `sweep run-point` are the
// steps the Slurm jobs run.
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/model_options.hpp"
#include "mpi/mpi_world.hpp"
#include "support/digits.hpp"
#include "support/error.hpp"
#include "support/median.hpp"
#include "support/threads.hpp"
#include "sweep/merge.hpp"
#include "sweep/slurm.hpp"

namespace tilevit::cli {
namespace {

using nlohmann::json;

struct SweepCommand {
  std::string spec_file, out, dir;
  std::uint64_t index = 0;
  std::uint32_t workers = 1, max_parallel = 2;
  int threads = 0;
  bool slurm = false, wait = false, mpi = false, retry_failed = false, json_output = false;
  CLI::App *app = nullptr, *merge = nullptr, *run_point = nullptr;

  CommandAction setup(CLI::App& a) {
    app = &a;
    a.add_option("spec", spec_file, "sweep spec (JSON, docs/SWEEP.md)");
    a.add_option("--out", out, "sweep directory: spec.json, points/, sweep.csv, sweep.json, pareto.png, pareto.html");
    a.add_option("--workers", workers, "points evaluated at once in this process (results do not depend on it)")
        ->check(CLI::Range(1u, 1024u))
        ->capture_default_str();
    a.add_flag("--retry-failed", retry_failed, "evaluate again the points whose record is a failure");
    auto* slurm_flag = a.add_flag("--slurm", slurm, "submit a Slurm job array (one task per point) and a merge job");
    a.add_option("--max-parallel", max_parallel, "with --slurm: array tasks running at once (%K; 0 = Slurm's limit)")
        ->check(CLI::Range(0u, 1u << 20))
        ->capture_default_str()
        ->needs(slurm_flag);
    a.add_flag("--wait", wait, "with --slurm: return when the merge job has ended")->needs(slurm_flag);
    a.add_flag("--mpi", mpi, "run as MPI ranks (mpirun -np K): rank r takes points r, r+K, ...; rank 0 merges")
        ->excludes(slurm_flag);
    add_common(a);
    merge = a.add_subcommand("merge", "merge a sweep directory's point records: CSV, JSON, Pareto chart (PNG, HTML)");
    merge->add_option("dir", dir, "sweep directory")->required();
    merge->add_flag("--json", json_output, "print one JSON object");
    run_point = a.add_subcommand("run-point", "evaluate one point of a sweep directory (what a Slurm task runs)");
    run_point->add_option("dir", dir, "sweep directory")->required();
    run_point->add_option("--index", index, "point index")->required();
    run_point->add_flag("--retry-failed", retry_failed, "evaluate the point again if its record is a failure");
    add_common(*run_point);
    return [this] { return run(); };
  }

  void add_common(CLI::App& a) {
    a.add_option("--threads", threads, "host threads (0 = all cores); results do not depend on it")
        ->check(CLI::Range(0, max_host_threads()))
        ->capture_default_str();
    a.add_flag("--json", json_output, "print one JSON object");
  }

  int run() {
    set_host_threads(threads);
    if (merge->parsed()) return run_merge(sweep::SweepDirectory::open(dir));
    if (run_point->parsed()) return run_one();
    if (spec_file.empty() || out.empty()) throw Error("sweep: give a SPEC and --out DIR (see --help)", kExitUsage);
    if (slurm && workers != 1) throw Error("--workers: with --slurm every point is its own task", kExitUsage);
    const sweep::SweepSpec spec = sweep::read_sweep_spec(spec_file);
    if (mpi) return run_mpi(spec);
    const sweep::SweepDirectory d = sweep::SweepDirectory::create(out, spec);
    if (slurm) return run_slurm(d);
    progress("sweep: " + with_commas(d.point_count()) + " points, " + std::to_string(workers) + " worker(s), into " + out);
    const sweep::RunSummary s = sweep::run_points(d, sweep::strided_indices(d.point_count(), 0, 1), run_options());
    return report(d, s, merge_and_report(d));
  }

  sweep::RunOptions run_options(const std::string& prefix = "") const {
    sweep::RunOptions o;
    o.workers = workers;
    o.retry_failed = retry_failed;
    o.progress = [prefix](const std::string& line) { progress(prefix + line); };
    return o;
  }

  int run_one() {
    const sweep::SweepDirectory d = sweep::SweepDirectory::open(dir);
    const sweep::RunSummary s = sweep::run_points(d, {index}, run_options());
    const json record = d.finished(d.point(index)).value_or(json());
    if (json_output) std::cout << record.dump(1) << "\n";
    else std::cout << d.point_path(d.point(index)) << (s.skipped ? " (finished before)" : "") << "\n";
    return kExitOk;
  }

  json merge_and_report(const sweep::SweepDirectory& d) const {
    const sweep::MergedSweep merged = sweep::merge_records(d);
    const sweep::MergeOutputs files = sweep::write_merged(d, merged);
    return {{"points", merged.records.size()},
            {"ok", merged.ok},
            {"failed", merged.failed},
            {"missing", merged.missing},
            {"pareto", merged.pareto},
            {"csv", files.csv},
            {"json", files.json},
            {"png", files.png},
            {"html", files.html}};
  }

  int run_merge(const sweep::SweepDirectory& d) const {
    const json merged = merge_and_report(d);
    print(json{{"out", d.path()}, {"merged", merged}});
    return kExitOk;
  }

  // The summary; exit 1 when no point of the directory compiled and some failed.
  int report(const sweep::SweepDirectory& d, const sweep::RunSummary& s, const json& merged) const {
    print(json{{"out", d.path()},
               {"evaluated", s.evaluated},
               {"skipped", s.skipped},
               {"failed", s.failed},
               {"seconds", s.seconds},
               {"point_seconds_median", median(s.point_seconds)},
               {"merged", merged}});
    return every_point_failed(merged) ? kExitFailure : kExitOk;
  }

  static bool every_point_failed(const json& counts) {
    if (counts["ok"] != 0 || counts["failed"] == 0) return false;
    progress("sweep: every point failed (" + counts["failed"].dump() + "): see their records' error messages");
    return true;
  }

  int run_slurm(const sweep::SweepDirectory& d) const {
    sweep::SlurmOptions o;
    o.tilevit = std::filesystem::read_symlink("/proc/self/exe").string();
    o.max_parallel = max_parallel;
    o.wait = wait;
    o.retry_failed = retry_failed;
    const sweep::SlurmJobs jobs = sweep::submit_slurm(d, o);
    progress("sweep: array job " + jobs.array_job + " (" + sweep::array_range(d.point_count(), max_parallel) +
             "), merge job " + jobs.merge_job + (wait ? " ended" : " after it"));
    json j = {{"out", d.path()},
              {"points", d.point_count()},
              {"slurm", {{"array_job", jobs.array_job}, {"merge_job", jobs.merge_job},
                         {"array_script", jobs.array_script}, {"merge_script", jobs.merge_script}}}};
    if (wait) j["merged"] = merged_counts(d);
    print(j);
    return wait && every_point_failed(j["merged"]) ? kExitFailure : kExitOk;
  }

  // What the merge job found, read back from the point records it merged.
  static json merged_counts(const sweep::SweepDirectory& d) {
    const sweep::MergedSweep merged = sweep::merge_records(d);
    return {{"ok", merged.ok}, {"failed", merged.failed}, {"missing", merged.missing}, {"pareto", merged.pareto}};
  }

  // Rank 0 prepares the directory; every rank takes its share; rank 0 merges after all
  // have finished. A rank that fails ends them all (the others would wait forever).
  int run_mpi(const sweep::SweepSpec& spec) {
    const mpi::World world;
    try {
      if (world.rank() == 0) sweep::SweepDirectory::create(out, spec);
      world.barrier();
      const sweep::SweepDirectory d = sweep::SweepDirectory::open(out);
      const std::string prefix = "rank " + std::to_string(world.rank()) + " of " + std::to_string(world.size()) + ": ";
      const sweep::RunSummary s = sweep::run_points(
          d, sweep::strided_indices(d.point_count(), world.rank(), world.size()), run_options(prefix));
      world.barrier();
      const sweep::RunSummary all = summary_over_ranks(world, s);
      if (world.rank() != 0) return kExitOk;
      json merged = merge_and_report(d);
      merged["ranks"] = world.size();
      return report(d, all, merged);
    } catch (const Error& e) {
      std::cerr << "tilevit: error: rank " << world.rank() << ": " << e.what() << "\n";
      world.abort(e.exit_code());
    }
  }

  // Rank 0's summary of every rank's points (the others send theirs to it); the wall
  // time is rank 0's, which ends last (after the barrier).
  static sweep::RunSummary summary_over_ranks(const mpi::World& world, const sweep::RunSummary& own) {
    constexpr int kCountsTag = 31, kSecondsTag = 32;
    std::uint64_t counts[4] = {own.evaluated, own.skipped, own.failed, own.point_seconds.size()};
    if (world.rank() != 0) {
      world.send(0, kCountsTag, counts, sizeof counts);
      world.send(0, kSecondsTag, own.point_seconds.data(), own.point_seconds.size() * sizeof(double));
      return own;
    }
    sweep::RunSummary all = own;
    for (int r = 1; r < world.size(); ++r) {
      world.receive(r, kCountsTag, counts, sizeof counts);
      std::vector<double> seconds(counts[3]);
      world.receive(r, kSecondsTag, seconds.data(), seconds.size() * sizeof(double));
      all.evaluated += counts[0];
      all.skipped += counts[1];
      all.failed += counts[2];
      all.point_seconds.insert(all.point_seconds.end(), seconds.begin(), seconds.end());
    }
    return all;
  }

  void print(const json& j) const {
    if (json_output) {
      std::cout << j.dump(1) << "\n";
      return;
    }
    for (const auto& [key, value] : j.items())
      if (value.is_object())
        for (const auto& [k, v] : value.items()) std::cout << key << "." << k << ": " << (v.is_string() ? v.get<std::string>() : v.dump()) << "\n";
      else
        std::cout << key << ": " << (value.is_string() ? value.get<std::string>() : value.dump()) << "\n";
  }
};

SweepCommand command;
const CommandRegistration registration("sweep", "compile and cost a grid of machine, model and plan variants",
                                       [](CLI::App& app) { return command.setup(app); });

}  // namespace
}  // namespace tilevit::cli
