#pragma once
// The verifier's check of one exchange phase's stored schedule (exchange_schedule.hpp,
// docs/EXCHANGE_SCHEDULE.md), re-derived from the transfers, the select events and the
// machine's [exchange] rules; it trusts nothing the scheduler computed.
#include <cstdint>
#include <functional>
#include <string>

#include "compiler/program.hpp"
#include "target/machine.hpp"

namespace tilevit::compiler {

// Calls `fail` once per violation, each message naming the tile, the superstep and the
// cycle: a piece over the machine's longest transfer; a landing earlier than its send
// plus the transit to its farthest receiver; a sender's lane or a receiver taking two
// words in one cycle; a word landing while its receiver listens to another sender (or
// to none), or a select event inside a landing; a select event sooner after the
// previous landing than its switch costs; a landing that neither continues the previous
// one (same sender, next bytes) nor follows a select event; a phase length other than
// its last landing's end; an event on a tile the machine does not have.
void check_exchange_schedule(const target::MachineDescription& machine, const CompiledProgram& program,
                             std::uint32_t step, const std::function<void(const std::string&)>& fail);

}  // namespace tilevit::compiler
