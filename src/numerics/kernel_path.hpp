#pragma once
// Which instruction set the device kernels (device_kernels.hpp) and the bulk FP16
// conversions (fp16.hpp) run on. Every path gives the bits of the scalar one, which is the
// definition (device_kernels_scalar.cpp, docs/NUMERICS.md), so the choice is one of speed;
// tests select each path in turn to check that.
#include <optional>
#include <vector>

namespace tilevit::numerics {

enum class KernelPath { scalar, avx2, avx512 };

// The path in effect: the one the innermost live ScopedKernelPath selected, else the
// fastest the CPU has (AVX-512 with F, VL and BW, else AVX2). A selected AVX-512 path on a
// CPU without it runs as AVX2.
KernelPath kernel_path();
// The paths this CPU can run, scalar first.
std::vector<KernelPath> available_kernel_paths();
const char* kernel_path_name(KernelPath path);

// Selects `path` for its lifetime and then restores the selection before it. The selection
// is process-wide (the kernels' OpenMP threads follow it): make it before starting
// parallel work, not inside it.
class ScopedKernelPath {
 public:
  explicit ScopedKernelPath(KernelPath path);
  ~ScopedKernelPath();
  ScopedKernelPath(const ScopedKernelPath&) = delete;
  ScopedKernelPath& operator=(const ScopedKernelPath&) = delete;

 private:
  std::optional<KernelPath> previous_;
};

}  // namespace tilevit::numerics
