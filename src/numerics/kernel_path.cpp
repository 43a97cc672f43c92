#include "numerics/kernel_path.hpp"

#include "numerics/cpu.hpp"

namespace tilevit::numerics {
namespace {

// Empty: no ScopedKernelPath is live, the CPU decides.
std::optional<KernelPath> g_selected;

KernelPath fastest_available() { return has_avx512() ? KernelPath::avx512 : KernelPath::avx2; }

}  // namespace

KernelPath kernel_path() {
  if (!g_selected) return fastest_available();
  if (*g_selected == KernelPath::avx512 && !has_avx512()) return KernelPath::avx2;
  return *g_selected;
}

std::vector<KernelPath> available_kernel_paths() {
  std::vector<KernelPath> paths{KernelPath::scalar, KernelPath::avx2};
  if (has_avx512()) paths.push_back(KernelPath::avx512);
  return paths;
}

const char* kernel_path_name(KernelPath path) {
  switch (path) {
    case KernelPath::scalar: return "scalar";
    case KernelPath::avx2: return "avx2";
    case KernelPath::avx512: return "avx512";
  }
  return "unknown";
}

ScopedKernelPath::ScopedKernelPath(KernelPath path) : previous_(g_selected) { g_selected = path; }
ScopedKernelPath::~ScopedKernelPath() { g_selected = previous_; }

}  // namespace tilevit::numerics
