#pragma once
// The modelled timeline in the Chrome trace event format (opens in Perfetto and
// chrome://tracing): one track per tile, a complete event per interval, cycles mapped to
// microseconds at the machine clock and kept raw in args.
#include <string>

#include "device/timeline.hpp"

namespace tilevit::profile {

std::string chrome_trace_json(const device::Timeline& timeline, const target::MachineDescription& machine,
                              const compiler::CompiledProgram& program);

}  // namespace tilevit::profile
