#pragma once
// Per-tile timelines of one call: what every tile does in every cycle of the modelled
// run (compute, idle, sync, exchange), from the calibrated kernel costs and the exchange
// model (docs/COST_MODEL.md). Its span equals the compiler's estimate.
#include <array>
#include <cstdint>
#include <vector>

#include "compiler/program.hpp"
#include "target/machine.hpp"

namespace tilevit::device {

// `repeat` marks one interval per tile standing for loop iterations that are summarised
// rather than detailed; it is not counted in tile_cycles (its activities are).
enum class Activity : std::uint8_t { compute, idle, sync, exchange, repeat };
inline constexpr std::size_t kActivities = 4;
const char* activity_name(Activity activity);

struct Interval {
  std::uint64_t start = 0, end = 0;  // cycles from the start of the call
  Activity activity = Activity::idle;
  std::uint32_t step = 0;            // superstep
  std::uint32_t iteration = 0;       // loop iteration (0 outside the loop)
};

struct Timeline {
  std::uint64_t span = 0;                                      // cycles of the whole call
  std::vector<std::vector<Interval>> tiles;                    // per tile, in time order
  std::array<std::uint64_t, kActivities> tile_cycles{};       // summed over tiles, per activity
};

// With `iterations_in_detail` < loop_count, later loop iterations are summed into their
// totals (and the span) without intervals, which keeps a 27-layer timeline small.
Timeline build_timeline(const target::MachineDescription& machine, const compiler::CompiledProgram& program,
                        std::uint32_t iterations_in_detail = UINT32_MAX);

}  // namespace tilevit::device
