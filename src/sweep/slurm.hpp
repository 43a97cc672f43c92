#pragma once
// A sweep through Slurm: a job array with one task per point (each runs
// `tilevit sweep run-point DIR --index $SLURM_ARRAY_TASK_ID`, which skips a finished
// point), at most K tasks at once, and a merge job that starts when every task has
// succeeded (--dependency=afterok, cancelled if one failed). The scripts are kept in
// DIR/slurm/ with the tasks' logs. A point's own failure is recorded in its file and the
// task still succeeds; a task fails only when it cannot write its record.
#include <cstdint>
#include <string>
#include <vector>

#include "sweep/sweep_dir.hpp"

namespace tilevit::sweep {

struct SlurmOptions {
  std::string tilevit;             // absolute path of the binary the tasks run
  std::uint32_t max_parallel = 0;  // K of --array=0-(N-1)%K; 0: Slurm's own limit
  bool wait = false;               // block until the merge job has ended (polls scontrol once a second)
  bool retry_failed = false;       // tasks evaluate again points whose record is a failure
};

struct SlurmJobs {
  std::string array_script, merge_script;  // paths
  std::string array_job, merge_job;        // Slurm job ids
};

// The job scripts' text (POSIX sh, paths single-quoted).
std::string array_script_text(const SweepDirectory& sweep, const SlurmOptions& options);
std::string merge_script_text(const SweepDirectory& sweep, const SlurmOptions& options);
// "0-199%2"
std::string array_range(std::uint64_t points, std::uint32_t max_parallel);

// Writes the scripts and submits both jobs. sbatch (or, with wait, scontrol) not on PATH,
// or sbatch failing: Error(kExitResource), one line. With options.wait, returns once the
// merge job has ended; a merge job that failed or was cancelled (an array task failed) is
// Error(kExitFailure).
SlurmJobs submit_slurm(const SweepDirectory& sweep, const SlurmOptions& options);

// `word` quoted for sh: 'it'\''s'.
std::string shell_quote(const std::string& word);

}  // namespace tilevit::sweep
