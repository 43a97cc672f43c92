#pragma once
// The exchange as an explicit cycle-level schedule (docs/EXCHANGE_SCHEDULE.md). After the
// waves (exchange_waves.hpp) every piece gets a send cycle on its sender's lane and a
// landing window on all its receivers, under the machine's [exchange] rules: a piece
// occupies its sender's lane and every receiver for the machine's exchange_cycles(bytes),
// a multicast landing on every receiver in the same cycles (its transit set by its
// farthest receiver), a receiver selecting the sender and setting
// its pointer before the piece lands, waves run as timed sections joined one after another.
#include <cstdint>

#include "compiler/program.hpp"
#include "target/machine.hpp"

namespace tilevit::compiler {

// Moves every destination on its sender's own tile out of the exchange into a LocalCopy
// of that superstep (data a tile holds is read by its workers, not looped back); a
// transfer left without destinations is dropped. Run before the waves.
void split_local_copies(CompiledProgram& program);

// Sets every transfer's send_cycle and land_cycle, each step's select events and its
// exchange_cycles. Deterministic list scheduling with backfilling per wave: each piece at
// the earliest cycle its sender's lane and all its receivers (with their control gaps)
// allow; of up to four placement orders the shortest schedule is kept (busiest tiles
// first; rotated round robin over senders; for unicast waves, edge-coloured rounds of
// sender-receiver pairs; greedy rounds of multicasts). Steps run in parallel; the result
// does not depend on the thread count.
void schedule_exchange(CompiledProgram& program, const target::MachineDescription& machine);

// Cycles a multicast takes from its sender's lane to its farthest receiver.
std::uint32_t transit_cycles(const target::MachineDescription& machine, const Transfer& transfer);

// Cycles a piece occupies its sender's lane and each of its receivers
// (MachineDescription::exchange_cycles of its bytes).
std::uint32_t occupancy_cycles(const target::MachineDescription& machine, const Transfer& transfer);

// The cycle after a piece's last bytes leave its sender's lane, and after they land.
std::uint64_t send_end(const target::MachineDescription& machine, const Transfer& transfer);
std::uint64_t land_end(const target::MachineDescription& machine, const Transfer& transfer);

// Whether landing `next` on a tile continues `previous` there without any control: the
// same sender, written just after it (the receiver's pointer advances by itself).
bool continues(const Transfer& previous, const Endpoint& previous_destination, const Transfer& next,
               const Endpoint& next_destination);

// Words a tile's workers copy locally in a step, and the cycles of that one copy call
// (target::copy_cycles: the six-worker local copy rule, MACHINE.md).
std::uint64_t local_copy_cycles(const target::MachineDescription& machine, std::uint64_t bytes);

}  // namespace tilevit::compiler
