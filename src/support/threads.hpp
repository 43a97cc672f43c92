#pragma once
// Host thread count for every parallel loop (OpenMP) and for oneDNN, which follows it.
// Results never depend on it: parallel loops split independent outputs only.
namespace tilevit {
void set_host_threads(int threads);  // 0 = all hardware threads
int host_threads();
}  // namespace tilevit
