#pragma once
// Profiling builds: what the device records per tile and how much SRAM that takes. The
// placement reserves each tile's sample buffer (a support allocation) and the machine's
// profiling range, as on the device, so a profiled package differs in addresses from an
// unprofiled one. Recording is modelled as free of cycles (docs/PROFILE_FORMAT.md).
#include <cstdint>
#include <string_view>
#include <vector>

namespace tilevit::compiler {

struct CompiledProgram;

// graph: one sample per tile for the whole call; phase: per superstep one compute, one
// sync and one exchange sample per participating tile; kernel: one sample per kernel call
// and per exchange wave the tile takes part in.
enum class Granularity : std::uint8_t { graph, phase, kernel };
std::string_view to_string(Granularity granularity);
Granularity granularity_from_string(std::string_view name);  // throws Error(kExitUsage)

// What a profile records: its granularity and how many loop iterations sample by sample
// (the rest are one repeat sample per tile).
struct ProfileDetail {
  Granularity granularity = Granularity::phase;
  std::uint32_t iterations_in_detail = 1;
  bool operator==(const ProfileDetail&) const = default;
};

// A build's profiling: whether the tiles record (and reserve buffers for) a profile, and its detail.
struct ProfilingOptions {
  bool enabled = false;
  ProfileDetail detail;
  bool operator==(const ProfilingOptions&) const = default;
};

// One record in a tile's profiling buffer: start cycle, end cycle and the step/kind word
// (u32 each) of one non-idle sample.
inline constexpr std::uint32_t kProfileRecordBytes = 12;

// Non-idle samples each tile records in one call (idle time is the gaps between them).
std::vector<std::uint64_t> profile_records_per_tile(const CompiledProgram& program, std::uint32_t tiles,
                                                    const ProfilingOptions& options);

}  // namespace tilevit::compiler
