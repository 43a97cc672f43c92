#pragma once
// The execution profile of one call: per tile, a list of samples (start and end cycle,
// what the tile did) over interned step metadata. It is what `tilevit run` records (as
// the device records its profiling buffers) and what the viewers, `profile query` and
// `profile diff` read. File format: profile_file.hpp, docs/PROFILE_FORMAT.md.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/profiling.hpp"
#include "compiler/program.hpp"
#include "target/machine.hpp"

namespace tilevit::profile {

using compiler::Granularity;

// idle: waiting for the slowest tile of a phase (not recorded on the device, derived from
// the gaps); repeat: one interval per tile standing for loop iterations not detailed;
// graph: the whole call on one tile (granularity graph).
enum class SampleKind : std::uint8_t { compute, idle, sync, exchange, repeat, graph };
inline constexpr std::size_t kSampleKinds = 6;
std::string_view to_string(SampleKind kind);
SampleKind sample_kind_from_string(std::string_view name);  // throws Error(kExitBadInput)

inline constexpr std::uint32_t kNoStep = UINT32_MAX;
// The operation of a compute sample whose tile only copies within its own SRAM (no kernel
// call, so no graph operation); profiles written before it have "" there.
inline constexpr const char* kLocalCopyOperation = "(local copy)";

// What a sample is: shared by every tile that did the same thing in the same step.
struct StepMeta {
  SampleKind kind = SampleKind::idle;
  std::uint32_t step = kNoStep;  // superstep index in the program
  std::int32_t layer = -1;       // encoder layer (loop iteration), -1 outside the loop
  std::string phase;             // superstep label, e.g. "layer.mlp_up"
  std::string kernel;            // compute: kernel name ("gemm_fp8"), "mixed" for several kinds
  std::string operation;         // compute: graph operation name(s), joined by '+'; kLocalCopyOperation
  std::string shape;             // compute: kernel dims, e.g. "81x192x160" or "3 x 81x192x160"
  bool operator==(const StepMeta&) const = default;
};

struct Sample {
  std::uint64_t start = 0, end = 0;  // cycles from the start of the call
  std::uint32_t meta = 0;            // index into Profile::meta
  std::uint32_t words_sent = 0, words_received = 0;  // exchange: 32-bit words of this tile
  std::uint64_t flops = 0;           // compute: floating-point operations of this tile
  // compute (and graph): of this sample's kernel cycles, those no measurement of the
  // machine's kernel generation covers (compiler/kernel_table.hpp); 0 when all calibrated.
  std::uint64_t uncalibrated_cycles = 0;
  bool operator==(const Sample&) const = default;
};

// The row group of a multi-chip profile's link rows (a row per IPU-Link); every other
// group is a chip's tiles.
inline constexpr const char* kLinkRowGroup = "links";

struct Profile {
  // Identity: what was profiled.
  std::string machine_name;
  std::uint32_t tiles = 0;
  std::uint64_t clock_hz = 0;
  std::uint32_t flop_per_cycle_fp16 = 0, flop_per_cycle_fp8 = 0;  // per tile: the peaks of achieved-vs-peak
  std::string package_sha256;  // hex; empty when not known
  std::string model;           // e.g. "so400m-patch14-378, 27 layers, batch 1"
  std::string plan;            // where the package's plan came from (the viewers' header); may be empty
  compiler::ProfileDetail options;
  std::uint32_t loop_begin = 0, loop_end = 0, loop_count = 1;
  std::uint32_t steps = 0;     // supersteps in the program
  // Measurements.
  std::uint64_t span = 0;      // cycles of the whole call
  std::array<std::uint64_t, kSampleKinds> tile_cycles{};  // summed over tiles, every iteration counted
  std::uint64_t uncalibrated_compute_cycles = 0;  // of tile_cycles[compute], likewise
  // Per tile, the most payload bytes live at one phase (the memory map's peak_bytes);
  // empty when not recorded (profiles written before it, or made without the map).
  std::vector<std::uint32_t> tile_peak_bytes;
  // Per graph operation, its lower bound in tile-cycles over the whole call
  // (compiler::operation_lower_bounds, rounded); empty when not recorded. A multi-chip
  // profile has each chip's: its stage's ops on that chip, every micro-batch counted.
  struct OperationBound {
    std::string name;
    std::uint64_t tile_cycles = 0;
    std::uint32_t row_group = 0;  // the group of the rows (chip) that ran it; 0 without groups
    bool operator==(const OperationBound&) const = default;
  };
  std::vector<OperationBound> operation_bounds;
  // Rows in named groups, in order (a multi-chip profile: "chip 0" .. and "links"); their
  // rows sum to `tiles`. Empty: every row is a tile of one chip.
  struct RowGroup {
    std::string name;
    std::uint32_t rows = 0;
    // A chip's loop (its stage's layers), in place of the profile's: the samples of layer
    // >= 0 on its rows are its first options.iterations_in_detail iterations, a repeat
    // sample stands for the rest. 0: no loop (link rows, a graph-granularity profile).
    std::uint32_t loop_count = 0;
    bool operator==(const RowGroup&) const = default;
  };
  std::vector<RowGroup> row_groups;
  std::vector<StepMeta> meta;
  std::vector<std::vector<Sample>> samples;  // per tile, in time order, not overlapping
};

// The modelled profile of one call of `program` (cycles from the calibrated cost model,
// the same as the compiler's estimate and the device model's count).
Profile build_profile(const target::MachineDescription& machine, const compiler::CompiledProgram& program,
                      const compiler::ProfileDetail& options);

}  // namespace tilevit::profile
