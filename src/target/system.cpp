#include "target/system.hpp"

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <sstream>

#include "support/error.hpp"
#include "target/machine_sections.hpp"

namespace tilevit::target {

namespace {

constexpr std::uint32_t kMaxChips = 1024;

// "[link 0-1]" -> chips 0 and 1.
bool parse_link_label(const std::string& label, std::uint32_t& a, std::uint32_t& b) {
  const auto dash = label.find('-');
  if (dash == std::string::npos) return false;
  const char* end = label.data() + label.size();
  const auto ra = std::from_chars(label.data(), label.data() + dash, a);
  const auto rb = std::from_chars(label.data() + dash + 1, end, b);
  return ra.ec == std::errc() && ra.ptr == label.data() + dash && rb.ec == std::errc() && rb.ptr == end && dash > 0;
}

ChipLink read_link(const detail::Section& s, std::uint32_t chips, const std::string& source) {
  detail::SectionReader r(s, source);
  ChipLink link;
  auto fail = [&](const std::string& what) { throw Error(source + ":" + std::to_string(s.line) + ": " + s.title() + ": " + what); };
  if (!parse_link_label(s.label, link.from, link.to)) fail("expected two chips, e.g. [link 0-1]");
  for (std::uint32_t chip : {link.from, link.to})
    if (chip >= chips) fail("unknown chip " + std::to_string(chip) + ": the system has chips 0 to " + std::to_string(chips - 1));
  if (link.from > link.to) std::swap(link.from, link.to);
  if (link.to - link.from != 1) fail("a line joins neighbouring chips only, not " + s.label);
  link.bytes_per_second = r.integer("bytes_per_second", 1, 100'000'000'000'000ULL);
  link.latency_cycles = r.u32("latency_cycles", 0, 1u << 30);
  r.finish();
  return link;
}

// Chip `c` is reachable from chip 0 through the links (a line: every link below it).
void require_connected(const SystemDescription& system, const std::string& source, int line) {
  std::vector<std::uint32_t> component(system.chips);
  for (std::uint32_t c = 0; c < system.chips; ++c) component[c] = c;
  auto find = [&](std::uint32_t c) {
    while (component[c] != c) c = component[c] = component[component[c]];
    return c;
  };
  for (const ChipLink& l : system.links) component[find(l.to)] = find(l.from);
  for (std::uint32_t c = 1; c < system.chips; ++c)
    if (find(c) != find(0)) throw Error(source + ":" + std::to_string(line) + ": [system] links do not connect chip " + std::to_string(c));
}

}  // namespace

std::string_view to_string(Topology) { return "line"; }

std::uint32_t hops(const SystemDescription& system, std::uint32_t from, std::uint32_t to) {
  if (from >= system.chips || to >= system.chips)
    throw Error("system: chip " + std::to_string(std::max(from, to)) + " outside the " + std::to_string(system.chips) + " chips",
                kExitInternal);
  return from > to ? from - to : to - from;
}

LinkCost link_cost(const MachineDescription& machine, std::uint32_t from, std::uint32_t to, std::uint64_t bytes) {
  LinkCost cost;
  cost.hops = hops(machine.system, from, to);
  if (cost.hops == 0) return cost;
  std::uint64_t narrowest = UINT64_MAX;
  for (const ChipLink& l : machine.system.links)
    if (l.from >= std::min(from, to) && l.to <= std::max(from, to)) {
      cost.latency_cycles += l.latency_cycles;
      narrowest = std::min(narrowest, l.bytes_per_second);
    }
  // ceil(bytes x clock / bandwidth) in 128-bit arithmetic: no overflow for any valid input
  const unsigned __int128 scaled = static_cast<unsigned __int128>(bytes) * machine.clock_hz;
  cost.transfer_cycles = static_cast<std::uint64_t>((scaled + narrowest - 1) / narrowest);
  return cost;
}

MachineDescription one_chip(const MachineDescription& machine) {
  MachineDescription chip = machine;
  chip.system = SystemDescription{};
  return chip;
}

MachineDescription line_of_chips(const MachineDescription& chip, std::uint32_t chips, std::uint64_t bytes_per_second,
                                 std::uint32_t latency_cycles) {
  MachineDescription m = one_chip(chip);
  m.system.chips = chips;
  for (std::uint32_t c = 0; c + 1 < chips; ++c) m.system.links.push_back(ChipLink{c, c + 1, bytes_per_second, latency_cycles});
  return m;
}

nlohmann::json system_json(const SystemDescription& system) {
  nlohmann::json links = nlohmann::json::array();
  for (const ChipLink& l : system.links)
    links.push_back({{"from", l.from}, {"to", l.to}, {"bytes_per_second", l.bytes_per_second}, {"latency_cycles", l.latency_cycles}});
  return {{"chips", system.chips},
          {"topology", to_string(system.topology)},
          {"links", links},
          {"link_latency_calibrated", false}};
}

namespace detail {

SystemDescription read_system(const Section* section, const std::vector<const Section*>& links, const std::string& source,
                              int last_line) {
  SystemDescription system;
  if (!section) {
    if (!links.empty())
      throw Error(source + ":" + std::to_string(links.front()->line) + ": " + links.front()->title() +
                  ": links need a [system] section with chips > 1");
    return system;
  }
  SectionReader r(*section, source);
  system.chips = r.u32("chips", 1, kMaxChips);
  system.topology = r.choice("topology", {Topology::line});
  r.finish();
  for (const Section* s : links) system.links.push_back(read_link(*s, system.chips, source));
  std::sort(system.links.begin(), system.links.end(), [](auto& a, auto& b) { return a.from < b.from; });
  for (std::size_t i = 1; i < system.links.size(); ++i)
    if (system.links[i].from == system.links[i - 1].from)
      throw Error(source + ":" + std::to_string(last_line) + ": [link " + std::to_string(system.links[i].from) + "-" +
                  std::to_string(system.links[i].to) + "] given twice");
  require_connected(system, source, section->line);
  return system;
}

std::string system_text(const SystemDescription& system) {
  if (system.chips == 1 && system.links.empty()) return {};
  std::ostringstream out;
  out << "\n[system]\nchips = " << system.chips << "\ntopology = " << to_string(system.topology) << "\n";
  for (const ChipLink& l : system.links)
    out << "\n[link " << l.from << "-" << l.to << "]\nbytes_per_second = " << grouped(l.bytes_per_second)
        << "\nlatency_cycles = " << l.latency_cycles << "\n";
  return out.str();
}

}  // namespace detail

namespace {
// The embedded line of `chips` copies of `chip` with the default links, built once.
template <std::uint32_t Chips, const MachineDescription& (*Chip)()>
const MachineDescription& embedded_line() {
  static const MachineDescription m = line_of_chips(Chip(), Chips, kC600LinkBytesPerSecond, kDefaultLinkLatencyCycles);
  return m;
}
}  // namespace

const MachineDescription& c600x2() { return embedded_line<2, c600>(); }
const MachineDescription& c600x4() { return embedded_line<4, c600>(); }
const MachineDescription& c600x8() { return embedded_line<8, c600>(); }
const MachineDescription& test16x2() { return embedded_line<2, test16>(); }

}  // namespace tilevit::target
