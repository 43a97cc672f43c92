#include "compiler/exchange_bounds.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "compiler/exchange_schedule.hpp"

namespace tilevit::compiler {
namespace {

// One tile's share of a wave, as a receiver and as a sender.
struct TileLoad {
  std::uint64_t received = 0, sent = 0;
  std::uint32_t pieces_in = 0, continued_in = 0;
  std::uint32_t first_transit_in = UINT32_MAX, first_transit_out = UINT32_MAX;
  std::set<std::uint32_t> senders;
};

// The bound of one wave: pieces [first, last) of the step.
std::uint64_t wave_bound(const target::MachineDescription& m, const std::vector<Transfer>& x, std::size_t first,
                         std::size_t last) {
  std::map<std::uint32_t, TileLoad> tiles;
  // (receiver, sender, allocation, end offset) of every landing: the next one from the same
  // sender at that offset continues it without control.
  std::set<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint64_t>> ends;
  for (std::size_t i = first; i < last; ++i)
    for (const Endpoint& d : x[i].destinations) ends.emplace(d.tile, x[i].source.tile, d.allocation, std::uint64_t(d.offset) + x[i].bytes);
  for (std::size_t i = first; i < last; ++i) {
    const Transfer& t = x[i];
    const std::uint32_t transit = transit_cycles(m, t);
    TileLoad& s = tiles[t.source.tile];
    s.sent += t.words();
    s.first_transit_out = std::min(s.first_transit_out, transit);
    for (const Endpoint& d : t.destinations) {
      TileLoad& r = tiles[d.tile];
      r.received += t.words();
      r.pieces_in += 1;
      r.continued_in += ends.count({d.tile, t.source.tile, d.allocation, d.offset}) ? 1 : 0;
      r.first_transit_in = std::min(r.first_transit_in, transit);
      r.senders.insert(t.source.tile);
    }
  }
  std::uint64_t bound = 0;
  for (const auto& [tile, l] : tiles) {
    if (l.sent > 0) bound = std::max<std::uint64_t>(bound, l.first_transit_out + l.sent);
    if (l.pieces_in == 0) continue;
    const std::uint64_t runs = l.pieces_in - l.continued_in, senders = l.senders.size();
    const std::uint64_t control = m.source_switch_cycles * (senders - 1) + m.pointer_switch_cycles * (runs - std::min(runs, senders));
    bound = std::max<std::uint64_t>(bound, l.first_transit_in + l.received + control);
  }
  return bound;
}

}  // namespace

ExchangeBounds exchange_bounds(const target::MachineDescription& m, const Superstep& step) {
  ExchangeBounds b;
  std::vector<std::uint64_t> sent(m.tiles, 0), received(m.tiles, 0);
  for (const Transfer& t : step.exchange) {
    sent.at(t.source.tile) += t.words();
    for (const Endpoint& d : t.destinations) received.at(d.tile) += t.words();
  }
  if (step.exchange.empty()) return b;
  b.receive_floor = *std::max_element(received.begin(), received.end());
  b.send_floor = *std::max_element(sent.begin(), sent.end());
  for (std::size_t first = 0; first < step.exchange.size();) {
    std::size_t last = first;
    while (last < step.exchange.size() && step.exchange[last].wave == step.exchange[first].wave) ++last;
    b.rule_bound += (first == 0 ? 0 : m.section_join_cycles) + wave_bound(m, step.exchange, first, last);
    first = last;
  }
  return b;
}

}  // namespace tilevit::compiler
