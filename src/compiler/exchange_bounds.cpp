#include "compiler/exchange_bounds.hpp"

#include <algorithm>
#include <tuple>

#include "compiler/exchange_schedule.hpp"

namespace tilevit::compiler {

std::uint64_t wave_rule_bound(const target::MachineDescription& m, const std::vector<Transfer>& x, std::size_t first,
                         std::size_t last) {
  using Landing = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint64_t>;  // receiver, sender, allocation, offset
  std::vector<Landing> starts, ends;
  std::vector<std::uint64_t> received(m.tiles, 0), sent(m.tiles, 0);
  std::vector<std::uint32_t> transit_in(m.tiles, UINT32_MAX), transit_out(m.tiles, UINT32_MAX);
  for (std::size_t i = first; i < last; ++i) {
    const Transfer& t = x[i];
    const std::uint32_t transit = transit_cycles(m, t), cycles = occupancy_cycles(m, t);
    sent[t.source.tile] += cycles;
    transit_out[t.source.tile] = std::min(transit_out[t.source.tile], transit);
    for (const Endpoint& d : t.destinations) {
      received[d.tile] += cycles;
      transit_in[d.tile] = std::min(transit_in[d.tile], transit);
      starts.emplace_back(d.tile, t.source.tile, d.allocation, d.offset);
      ends.emplace_back(d.tile, t.source.tile, d.allocation, std::uint64_t(d.offset) + t.bytes);
    }
  }
  std::sort(starts.begin(), starts.end());
  std::sort(ends.begin(), ends.end());
  // Per receiver: its senders, and its runs (landings that no other landing of the same
  // sender ends right before, so each needs control of its own).
  std::vector<std::uint64_t> senders(m.tiles, 0), runs(m.tiles, 0);
  for (std::size_t i = 0; i < starts.size(); ++i) {
    const auto [tile, sender, allocation, offset] = starts[i];
    if (i == 0 || std::get<0>(starts[i - 1]) != tile || std::get<1>(starts[i - 1]) != sender) ++senders[tile];
    if (!std::binary_search(ends.begin(), ends.end(), starts[i])) ++runs[tile];
  }
  std::uint64_t bound = 0;
  for (std::uint32_t tile = 0; tile < m.tiles; ++tile) {
    if (sent[tile] > 0) bound = std::max<std::uint64_t>(bound, transit_out[tile] + sent[tile]);
    if (senders[tile] == 0) continue;
    const std::uint64_t control = m.source_switch_cycles * (senders[tile] - 1) +
                                  m.pointer_switch_cycles * (runs[tile] - std::min(runs[tile], senders[tile]));
    bound = std::max<std::uint64_t>(bound, transit_in[tile] + received[tile] + control);
  }
  return bound;
}

// The busiest tile's cycles in or out over pieces [first, last) (a multicast sent once).
static std::uint64_t wave_floor(const target::MachineDescription& m, const std::vector<Transfer>& pieces,
                                std::size_t first, std::size_t last) {
  std::vector<std::uint64_t> sent(m.tiles, 0), received(m.tiles, 0);
  for (std::size_t i = first; i < last; ++i) {
    const std::uint32_t cycles = occupancy_cycles(m, pieces[i]);
    sent.at(pieces[i].source.tile) += cycles;
    for (const Endpoint& d : pieces[i].destinations) received.at(d.tile) += cycles;
  }
  return std::max(*std::max_element(sent.begin(), sent.end()), *std::max_element(received.begin(), received.end()));
}

ExchangeBounds exchange_bounds(const target::MachineDescription& m, const Superstep& step) {
  ExchangeBounds b;
  std::vector<std::uint64_t> sent(m.tiles, 0), received(m.tiles, 0);
  for (const Transfer& t : step.exchange) {
    const std::uint32_t cycles = occupancy_cycles(m, t);
    sent.at(t.source.tile) += cycles;
    for (const Endpoint& d : t.destinations) received.at(d.tile) += cycles;
  }
  if (step.exchange.empty()) return b;
  b.receive_floor = *std::max_element(received.begin(), received.end());
  b.send_floor = *std::max_element(sent.begin(), sent.end());
  for (std::size_t first = 0; first < step.exchange.size();) {
    std::size_t last = first;
    while (last < step.exchange.size() && step.exchange[last].wave == step.exchange[first].wave) ++last;
    b.rule_bound += (first == 0 ? 0 : m.section_join_cycles) + wave_rule_bound(m, step.exchange, first, last);
    b.wave_floor += wave_floor(m, step.exchange, first, last);
    first = last;
  }
  return b;
}

}  // namespace tilevit::compiler
