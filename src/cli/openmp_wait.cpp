// Idle OpenMP workers sleep instead of spinning: OMP_WAIT_POLICY=passive unless the user
// chose a policy.
//
// libgomp reads OMP_WAIT_POLICY and GOMP_SPINCOUNT once, in its own constructor, and by
// default lets a worker that finished its share of a parallel loop spin for 300,000
// pause loops (milliseconds) before it sleeps, unless there are more threads than CPUs
// (then 100). With as many threads as cores on a loaded machine, the spinning workers hold
// cores that the thread with work, or other processes, need, and a worker that spun out
// its time slice waits for the next one at every loop: a one-layer small-model forward
// pass took 0.31 s at --threads 2 where it takes 0.001 s at 1 or 3 (issue 34; figures in
// docs/BENCHMARKS.md). Sleeping workers are woken by the next loop at once.
//
// The environment must hold the setting before libgomp starts, and libc rebuilds it from
// the process's initial one after any code of ours could run. So the first thing the
// executable runs (a .preinit_array entry, before every shared library's constructor)
// executes the binary again with OMP_WAIT_POLICY=passive added to that environment. A
// user's own OMP_WAIT_POLICY or GOMP_SPINCOUNT is left as it is (OMP_WAIT_POLICY=active
// gives libgomp's spinning back); if the binary cannot be executed again, it goes on as
// it is.
#include <unistd.h>

#include <cstring>

namespace {

constexpr const char* kPolicy = "OMP_WAIT_POLICY=passive";
constexpr int kMaxEnvironment = 4096;  // entries; a larger environment is left as it is

bool starts_with(const char* text, const char* prefix) { return std::strncmp(text, prefix, std::strlen(prefix)) == 0; }

void sleep_idle_openmp_workers(int, char** argv, char** envp) {
  static char* environment[kMaxEnvironment + 2];
  int n = 0;
  for (; envp != nullptr && envp[n] != nullptr; ++n) {
    if (starts_with(envp[n], "OMP_WAIT_POLICY=") || starts_with(envp[n], "GOMP_SPINCOUNT=") || n == kMaxEnvironment)
      return;
    environment[n] = envp[n];
  }
  environment[n] = const_cast<char*>(kPolicy);
  environment[n + 1] = nullptr;
  ::execve("/proc/self/exe", argv, environment);  // returns only if it failed
}

[[gnu::section(".preinit_array"), gnu::used]] void (*const preinit_openmp_wait)(int, char**, char**) =
    sleep_idle_openmp_workers;

}  // namespace
