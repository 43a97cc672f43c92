#include "sweep/slurm.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "support/atomic_file.hpp"
#include "support/error.hpp"

extern char** environ;

namespace tilevit::sweep {
namespace fs = std::filesystem;

namespace {

std::string absolute_dir(const SweepDirectory& sweep) { return fs::absolute(sweep.path()).lexically_normal().string(); }

// The first `name` on PATH, or "".
std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "";
}

struct Finished {
  int status = 0;  // exit status, or 128 + signal
  std::string out;
};

// Runs `argv` with its standard output captured (its standard error is ours).
Finished run_captured(const std::vector<std::string>& argv) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) throw Error(argv[0] + ": cannot create a pipe", kExitResource);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[1]);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  Finished f;
  if (spawned != 0) {
    ::close(pipe_fds[0]);
    throw Error(argv[0] + ": cannot start it", kExitResource);
  }
  char buffer[4096];
  for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) != 0;)
    if (n > 0) f.out.append(buffer, static_cast<std::size_t>(n));
    else if (errno != EINTR) break;
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  f.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return f;
}

// sbatch --parsable prints "jobid" or "jobid;cluster".
std::string submit(const std::string& sbatch, std::vector<std::string> args, const std::string& what) {
  args.insert(args.begin(), {sbatch, "--parsable"});
  const Finished f = run_captured(args);
  const std::string id = f.out.substr(0, f.out.find_first_of(";\n"));
  if (f.status != 0 || id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
    throw Error("sbatch: submitting the " + what + " job failed (exit status " + std::to_string(f.status) + ")",
                kExitResource);
  return id;
}

// The job's state from `scontrol show job -o ID` ("COMPLETED", "RUNNING", ...); "" when
// Slurm no longer knows the job (purged after MinJobAge).
std::string job_state(const std::string& scontrol, const std::string& job) {
  const Finished f = run_captured({scontrol, "show", "job", "-o", job});
  const auto at = f.out.find("JobState=");
  if (f.status != 0 || at == std::string::npos) return "";
  return f.out.substr(at + 9, f.out.find_first_of(" \n", at) - at - 9);
}

// Polls once a second until the job has ended: its final state. (sbatch --wait polls
// ever more rarely: it returned 31 s after a 10 s sweep's merge job had ended.)
std::string wait_for_job(const std::string& scontrol, const std::string& job) {
  for (;;) {
    const std::string state = job_state(scontrol, job);
    if (state != "PENDING" && state != "RUNNING" && state != "CONFIGURING" && state != "COMPLETING" &&
        state != "SUSPENDED" && state != "REQUEUED")
      return state;
    ::sleep(1);
  }
}

std::string tool_on_path(const std::string& name) {
  const std::string path = find_on_path(name);
  if (path.empty())
    throw Error("--slurm: " + name + " is not on PATH (install Slurm's client, Debian slurm-client, or run without --slurm)",
                kExitResource);
  return path;
}

std::string header(const std::string& job_name, const std::string& log) {
  return "#!/bin/sh\n#SBATCH --job-name=" + job_name + "\n#SBATCH --output=" + log +
         "\n#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n";
}

}  // namespace

std::string shell_quote(const std::string& word) {
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string array_range(std::uint64_t points, std::uint32_t max_parallel) {
  std::string r = "0-" + std::to_string(points == 0 ? 0 : points - 1);
  return max_parallel > 0 ? r + "%" + std::to_string(max_parallel) : r;
}

std::string array_script_text(const SweepDirectory& sweep, const SlurmOptions& options) {
  const std::string dir = absolute_dir(sweep);
  return header("tilevit-sweep", dir + "/slurm/point-%a.log") +
         "# One sweep point per array task (tilevit sweep run-point skips a finished point).\n"
         "exec " + shell_quote(options.tilevit) + " sweep run-point " + shell_quote(dir) +
         " --index \"$SLURM_ARRAY_TASK_ID\" --threads 1" + (options.retry_failed ? " --retry-failed" : "") + "\n";
}

std::string merge_script_text(const SweepDirectory& sweep, const SlurmOptions& options) {
  const std::string dir = absolute_dir(sweep);
  return header("tilevit-sweep-merge", dir + "/slurm/merge.log") +
         "# After every array task succeeded: sweep.csv, sweep.json, pareto.png, pareto.html.\n"
         "exec " + shell_quote(options.tilevit) + " sweep merge " + shell_quote(dir) + "\n";
}

SlurmJobs submit_slurm(const SweepDirectory& sweep, const SlurmOptions& options) {
  const std::string sbatch = tool_on_path("sbatch");
  const std::string scontrol = options.wait ? tool_on_path("scontrol") : "";
  const fs::path dir = fs::path(absolute_dir(sweep)) / "slurm";
  fs::create_directories(dir);
  SlurmJobs jobs{(dir / "array.sh").string(), (dir / "merge.sh").string(), "", ""};
  write_text_atomically(jobs.array_script, array_script_text(sweep, options));
  write_text_atomically(jobs.merge_script, merge_script_text(sweep, options));
  jobs.array_job = submit(sbatch, {"--array=" + array_range(sweep.point_count(), options.max_parallel), jobs.array_script},
                          "array");
  jobs.merge_job = submit(
      sbatch, {"--dependency=afterok:" + jobs.array_job, "--kill-on-invalid-dep=yes", jobs.merge_script}, "merge");
  if (!options.wait) return jobs;
  const std::string state = wait_for_job(scontrol, jobs.merge_job);
  // A job Slurm has already forgotten ended at least MinJobAge ago: its outputs tell.
  const bool merged = state == "COMPLETED" || (state.empty() && fs::exists(fs::path(sweep.path()) / "sweep.csv"));
  if (!merged)
    throw Error("merge job " + jobs.merge_job + " ended " + (state.empty() ? "without a merged sweep.csv" : state) +
                    " (an array task failed? logs in " + dir.string() + ")",
                kExitFailure);
  return jobs;
}

}  // namespace tilevit::sweep
