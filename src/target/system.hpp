#pragma once
// Systems of several identical chips joined by IPU-Links: the [system] and [link A-B]
// sections of a machine description (docs/MACHINE_FORMAT.md), the cost of a payload
// crossing them, and the embedded multi-C600 systems.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "target/machine.hpp"

namespace tilevit::target {

// Each way between two neighbouring C600 cards: 4 IPU-Links per card, 1 Tbps in total
// both ways (C600 datasheet) = 62.5 GB/s each way per card; a cable between neighbours
// carries 2 of the 4 links: 31.25 GB/s each way. Derived, not measured.
inline constexpr std::uint64_t kC600LinkBytesPerSecond = 31'250'000'000;
// No absolute IPU-Link latency is published in our sources: 1 us at the C600's clock,
// a chosen parameter of the order of other chip-to-chip links (Tenstorrent Ethernet
// ~0.65 us per hop). Every report marks it uncalibrated.
inline constexpr std::uint32_t kDefaultLinkLatencyCycles = 1500;

// What a payload crossing from one chip to another costs: each hop's latency, then the
// bytes at the narrowest link of the route (cut-through: the hops overlap).
struct LinkCost {
  std::uint32_t hops = 0;
  std::uint64_t latency_cycles = 0;
  std::uint64_t transfer_cycles = 0;
  std::uint64_t cycles() const { return latency_cycles + transfer_cycles; }
};

// Chips between `from` and `to` on the line plus one (0 when equal).
std::uint32_t hops(const SystemDescription& system, std::uint32_t from, std::uint32_t to);
// Throws Error(kExitInternal) for a chip outside the system.
LinkCost link_cost(const MachineDescription& machine, std::uint32_t from, std::uint32_t to, std::uint64_t bytes);

// The chip alone: the description with chips = 1 and no links (what one stage compiles for).
MachineDescription one_chip(const MachineDescription& machine);
// `chip` repeated `chips` times on a line, neighbours joined by identical links.
MachineDescription line_of_chips(const MachineDescription& chip, std::uint32_t chips, std::uint64_t bytes_per_second,
                                 std::uint32_t latency_cycles);

// {"chips", "topology", "links": [...], "link_latency_calibrated": false}.
nlohmann::json system_json(const SystemDescription& system);
std::string_view to_string(Topology topology);

namespace detail {
struct Section;
// The [system] section (nullptr: one chip) and the [link A-B] sections, validated:
// chips in range, links between neighbours, every chip reachable. Errors are one line
// naming the source, line and section.
SystemDescription read_system(const Section* system, const std::vector<const Section*>& links, const std::string& source,
                              int last_line);
// Canonical text of the sections; empty for one chip.
std::string system_text(const SystemDescription& system);
}  // namespace detail

}  // namespace tilevit::target
