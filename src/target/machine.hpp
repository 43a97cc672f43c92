#pragma once
// The target machine, as data: tile count, per-tile memory geometry, exchange and sync
// costs, matrix-unit peaks and the kernel cost coefficients. Everything the compiler and
// the simulator know about the hardware comes from a MachineDescription, which is read
// from a versioned text file (format: docs/MACHINE_FORMAT.md) so a different machine
// or a re-calibration never needs a code change.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace tilevit::target {

// The most SRAM one chip may have, tiles x sram_size: the device model maps a chip's SRAM
// on the host (docs/MACHINE_FORMAT.md, [memory]); the C600 has 897 MiB.
inline constexpr std::uint64_t kMaxChipSramBytes = std::uint64_t{4} << 30;

// One contiguous memory region of a tile's SRAM: [start, end).
struct MemoryRegion {
  std::string name;
  std::uint32_t start = 0;
  std::uint32_t end = 0;
  std::uint32_t element_bytes = 0;         // one SRAM element serves one access per cycle
  std::uint32_t unit_elements = 1;         // elements ganged into one unit (2 = interleaved pairs)
  std::uint32_t load_bytes_per_cycle = 0;  // widest load a worker can issue from here
  bool code = false;                       // may hold executable code
  std::uint32_t size() const { return end - start; }
  std::uint32_t unit_bytes() const { return element_bytes * unit_elements; }
  bool operator==(const MemoryRegion&) const = default;
};

enum class ReservedKind { exchange, runtime, unreachable, profiling };
enum class ReservedWhen { always, profiling };

// Bytes of every tile that tensors may not use: [start, start + size).
struct ReservedRange {
  std::string name;
  ReservedKind kind = ReservedKind::runtime;
  std::uint32_t start = 0;
  std::uint32_t size = 0;
  ReservedWhen when = ReservedWhen::always;
  std::uint32_t end() const { return start + size; }
  bool operator==(const ReservedRange&) const = default;
};

// GEMM on the matrix unit: the right operand is consumed in panels of
// panel_inner x panel_columns; cycles = base + panels * (per_row * rows + per_panel).
struct GemmCoefficients {
  std::uint32_t panel_inner = 16;
  std::uint32_t panel_columns = 16;
  double base = 0;
  double per_row = 0;
  double per_panel = 0;
  bool operator==(const GemmCoefficients&) const = default;
};

// Coefficients of the kernel cost model (formulas: kernel_costs.hpp, docs/COST_MODEL.md).
// "vector" = one worker vector instruction group of vector_elements FP16 elements; work is
// dealt to the workers in grains of worker_grain elements.
struct CostCoefficients {
  // The kernel generation the coefficients were fitted to ("2026-09-11": the kernels as
  // measured up to that date, docs/COST_MODEL.md); empty = not a fit, all uncalibrated.
  std::string generation;
  std::uint32_t vector_elements = 4;
  std::uint32_t worker_grain = 16;
  std::uint32_t softmax_split_segments = 3;  // segments per row in split-mode softmax
  GemmCoefficients gemm_fp16;
  GemmCoefficients gemm_fp8;
  double layernorm_base = 0, layernorm_per_row = 0, layernorm_per_row_vector = 0;
  double softmax_whole_base = 0, softmax_whole_per_row_vector = 0;
  double softmax_split_base = 0, softmax_split_per_row = 0, softmax_split_per_segment_vector = 0;
  double gelu_base = 0, gelu_per_vector = 0;
  double reduce_add_base = 0, reduce_add_per_vector = 0, reduce_add_per_vector_partial = 0;
  double add_base = 0, add_per_vector = 0;
  double cast_base = 0, cast_per_vector = 0;
  double layer_norm_moments_base = 0, layer_norm_moments_per_vector = 0;
  double layer_norm_apply_base = 0, layer_norm_apply_per_vector = 0;
  double gelu_f8out_base = 0, gelu_f8out_per_vector = 0;
  double copy_base = 0, copy_bytes_per_cycle = 1;
  bool operator==(const CostCoefficients&) const = default;
};

// Chips joined by IPU-Links (docs/MACHINE_FORMAT.md, [system] and [link A-B]). A link
// carries `bytes_per_second` each way; a payload of B bytes crossing it takes
// latency_cycles + ceil(B x clock_hz / bytes_per_second) cycles of the chips' clock.
enum class Topology { line };  // a line of cards, each joined to its neighbours by a cable

struct ChipLink {
  std::uint32_t from = 0, to = 0;  // chips, from < to
  std::uint64_t bytes_per_second = 0;
  std::uint32_t latency_cycles = 0;  // uncalibrated: no measured IPU-Link latency exists
  bool operator==(const ChipLink&) const = default;
};

struct SystemDescription {
  std::uint32_t chips = 1;  // identical chips, each the [machine] ... [costs] description
  Topology topology = Topology::line;
  std::vector<ChipLink> links;  // sorted by (from, to); every chip reachable from chip 0
  bool operator==(const SystemDescription&) const = default;
};

struct MachineDescription {
  // [machine]
  std::string name;
  std::uint32_t tiles = 0;
  std::uint32_t rows = 0;     // physical layout rows x columns == tiles
  std::uint32_t columns = 0;
  std::uint64_t clock_hz = 0;
  std::uint32_t launch_cycles = 0;  // supervisor cost to start one kernel call
  // [tile]
  std::uint32_t workers = 0;  // worker contexts; they issue round robin, one every `workers` cycles
  // [memory]
  std::uint32_t sram_base = 0;
  std::uint32_t sram_size = 0;
  std::uint32_t vector_alignment = 0;  // bytes, operands of vector kernels
  std::uint32_t matrix_alignment = 0;  // bytes, operands of the matrix unit
  std::vector<MemoryRegion> regions;   // sorted by start, disjoint, inside SRAM
  std::vector<ReservedRange> reserved; // sorted by start, disjoint, inside SRAM
  // [exchange]
  std::uint32_t exchange_send_bytes_per_cycle = 0;     // per tile
  std::uint32_t exchange_receive_bytes_per_cycle = 0;  // per tile
  // The exchange's timing rules (docs/EXCHANGE_SCHEDULE.md; figures from
  // /work/shared/reference/measurements/EXCHANGE.md).
  std::uint32_t latency_cycles = 0;           // send to landing: latency_cycles + latency_cycles_per_row x physical row
  std::uint32_t latency_cycles_per_row = 0;
  std::uint32_t max_transfer_words = 0;       // longest single transfer (MAX_TRANSFER_WORDS)
  std::uint32_t source_switch_cycles = 0;     // receiver selects another sender and sets its pointer
  std::uint32_t pointer_switch_cycles = 0;    // receiver moves its write pointer only
  std::uint32_t section_join_cycles = 0;      // joining two timed exchange sections (between waves)
  std::uint32_t phase_overhead_cycles = 0;    // sync and set-up per exchange phase (measured residual)
  // Tiles leave a sync at different times: a compute phase spans its slowest tile's work
  // plus this spread of start times (measured on uniform phases; optional, 0 when absent).
  std::uint32_t phase_entry_skew_cycles = 0;
  // [matrix]: FLOP per tile per cycle (a multiply-add counts 2)
  std::uint32_t flop_per_cycle_fp32 = 0;
  std::uint32_t flop_per_cycle_fp16 = 0;
  std::uint32_t flop_per_cycle_fp8 = 0;
  // [costs]
  CostCoefficients costs;
  // [system], [link A-B]: absent for one chip (chips = 1, no links)
  SystemDescription system;

  std::uint32_t sram_end() const { return sram_base + sram_size; }
  // Physical row of a tile (tiles are numbered row by row, `columns` to a row).
  std::uint32_t physical_row(std::uint32_t tile) const { return columns ? tile / columns : 0; }
  // Cycles from a word's send to its landing on `tile`.
  std::uint32_t transit_cycles(std::uint32_t tile) const { return latency_cycles + latency_cycles_per_row * physical_row(tile); }
  // Cycles `bytes` of one exchange piece occupy its sender's lane and each receiver: a
  // multicast lands on all its receivers in the same cycles as it leaves, so the slower
  // of the two rates paces it, and a part-filled last cycle is still a cycle. The one
  // place the exchange turns bytes into cycles (docs/EXCHANGE_SCHEDULE.md).
  std::uint64_t exchange_cycles(std::uint64_t bytes) const {
    const std::uint64_t rate = exchange_send_bytes_per_cycle < exchange_receive_bytes_per_cycle
                                   ? exchange_send_bytes_per_cycle
                                   : exchange_receive_bytes_per_cycle;
    return (bytes + rate - 1) / rate;
  }
  // Bytes per tile left for tensors, code and tables once reserved ranges are taken out.
  std::uint32_t free_bytes_per_tile(bool profiling) const;
  // The region holding `address`, or nullptr.
  const MemoryRegion* region_at(std::uint32_t address) const;
  bool operator==(const MachineDescription&) const = default;
};

// Parses and validates a description. `source_name` prefixes every error message:
// "<source_name>:<line>: [<section>] <key>: <what is wrong>".
MachineDescription parse_machine(std::string_view text, const std::string& source_name);

// Canonical text (no comments, fixed key order); parse_machine(to_text(m)) == m.
std::string to_text(const MachineDescription& machine);

// Reads and parses a file (at most 1 MiB); errors name the path.
MachineDescription load_machine(const std::string& path);

// The shipped descriptions, parsed once from text embedded at build time from
// src/target/machines/*.machine.
const MachineDescription& c600();
const MachineDescription& test16();
// The C600 with the 2026-09-13 kernels' costs (the best published build's generation).
const MachineDescription& c600_2026_09_13();
// An embedded description by name: "c600", "c600-2026-09-13", "test16"; nullptr if none.
const MachineDescription* builtin_machine(std::string_view name);
// What a --machine option names: empty = the C600, an embedded name, else a file path.
MachineDescription machine_from_option(const std::string& option);
std::string_view c600_text();
std::string_view test16_text();

// The multi-chip systems of the C600 (a line of 2, 4 or 8 cards, system.cpp).
const MachineDescription& c600x2();
const MachineDescription& c600x4();
const MachineDescription& c600x8();
// The one-chip test machine twice, joined by the C600's link (multi-chip tests).
const MachineDescription& test16x2();
// The names builtin_machine() knows, comma-separated (for help texts).
std::string builtin_machine_names();

// Description plus derived figures (total SRAM, peak FLOP/s per precision, free bytes).
nlohmann::json to_json(const MachineDescription& machine);

double peak_flops(const MachineDescription& machine, std::uint32_t flop_per_cycle);

std::string_view to_string(ReservedKind kind);
std::string_view to_string(ReservedWhen when);

}  // namespace tilevit::target
