#pragma once
// Lower bounds on an exchange phase's scheduled length (docs/EXCHANGE_SCHEDULE.md), the
// yardsticks its schedule is judged by: the payload floors (the cycles each tile's pieces
// occupy its receive or send lane, occupancy_cycles) and a bound that adds what the
// [exchange] rules make unavoidable.
#include <cstdint>

#include "compiler/program.hpp"
#include "target/machine.hpp"

namespace tilevit::compiler {

struct ExchangeBounds {
  std::uint64_t receive_floor = 0;  // most cycles one tile spends receiving in the phase
  std::uint64_t send_floor = 0;     // most cycles one tile spends sending (a multicast once)
  // Per wave, the busiest tile's piece cycles plus its unavoidable control: the shortest transit
  // of its pieces, a source select (27) per sender after the first, a pointer move (13)
  // per further non-contiguous run of one sender; waves summed with their joins (46).
  std::uint64_t rule_bound = 0;
  // The payload floor of each wave (busiest tile's cycles in or out) summed: waves run in
  // sequence, so this is the floor of the phase as split into waves.
  std::uint64_t wave_floor = 0;
  std::uint64_t floor() const { return receive_floor > send_floor ? receive_floor : send_floor; }
};

// The rule bound of one wave, pieces [first, last) of a step, from the wave's start.
std::uint64_t wave_rule_bound(const target::MachineDescription& machine, const std::vector<Transfer>& pieces,
                              std::size_t first, std::size_t last);

ExchangeBounds exchange_bounds(const target::MachineDescription& machine, const Superstep& step);

}  // namespace tilevit::compiler
