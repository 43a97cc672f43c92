#pragma once
// Memory over time: per superstep, the live payload bytes of the fullest tile and of the
// whole chip by purpose, and the peak step with its largest allocations. Part of the
// memory map (MemoryMap::over_time): memory.json's "over_time", memory.html's "Memory over
// time" panel. Live as the placement's statistics count it (compiler::memory_stats):
// parameters and support allocations for the whole program, the others over their
// lifetime in phases; so the fullest tile's per-step maximum is its peak_bytes.
#include <array>
#include <functional>
#include <string>
#include <vector>

#include "compiler/program.hpp"

namespace tilevit::profile {

// weights: parameter allocations; exchange: activation allocations some transfer writes
// into (landing buffers of gathered operands, partial sums); activations: the other
// activation allocations; scratch; support (code, exchange tables, profile samples).
enum class MemoryPurpose : std::uint8_t { weights, activations, exchange, scratch, support };
inline constexpr std::array<const char*, 5> kMemoryPurposeNames{"weights", "activations", "exchange", "scratch", "support"};
inline constexpr std::size_t kMemoryPurposes = kMemoryPurposeNames.size();

struct MemoryAtPeak {
  std::uint32_t label = 0;  // index into MemoryMap::labels
  MemoryPurpose purpose = MemoryPurpose::activations;
  std::uint32_t bytes = 0, start = 0;
  bool operator==(const MemoryAtPeak&) const = default;
};

struct MemoryOverTime {
  std::uint32_t fullest_tile = 0;  // most peak bytes (the lowest such tile)
  std::vector<std::string> step_labels;  // the program's superstep labels, e.g. "layer.mlp_up"
  // Per step, at the step's fuller phase (compute or exchange; compute on a tie).
  std::vector<std::array<std::uint32_t, kMemoryPurposes>> fullest;  // the fullest tile
  std::vector<std::array<std::uint64_t, kMemoryPurposes>> chip;     // summed over every tile
  std::uint32_t peak_step = 0, peak_phase = 0, peak_bytes = 0;      // the fullest tile's peak
  std::vector<MemoryAtPeak> largest;  // live on the fullest tile at peak_phase, most bytes first, at most 10
  bool operator==(const MemoryOverTime&) const = default;
};

// label_of(i): the map's label index of program allocation i.
MemoryOverTime memory_over_time(const compiler::CompiledProgram& program, std::uint32_t tiles,
                                const std::function<std::uint32_t(std::uint32_t)>& label_of);

}  // namespace tilevit::profile
