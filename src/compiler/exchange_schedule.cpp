#include "compiler/exchange_schedule.hpp"

#include <algorithm>
#include <exception>
#include <map>
#include <numeric>
#include <tuple>
#include <utility>

#include "support/error.hpp"
#include "target/kernel_costs.hpp"

namespace tilevit::compiler {

void split_local_copies(CompiledProgram& program) {
  for (Superstep& step : program.steps) {
    std::vector<Transfer> remote;
    remote.reserve(step.exchange.size());
    for (Transfer& t : step.exchange) {
      std::vector<Endpoint> others;
      for (const Endpoint& d : t.destinations) {
        if (d.tile == t.source.tile)
          step.local_copies.push_back(LocalCopy{d.tile, t.source, t.bytes, t.source_layer_stride, d});
        else
          others.push_back(d);
      }
      if (others.empty()) continue;
      t.destinations = std::move(others);
      remote.push_back(std::move(t));
    }
    step.exchange = std::move(remote);
  }
}

std::uint32_t transit_cycles(const target::MachineDescription& m, const Transfer& t) {
  std::uint32_t farthest = 0;
  for (const Endpoint& d : t.destinations) farthest = std::max(farthest, m.transit_cycles(d.tile));
  return farthest;
}

std::uint32_t occupancy_cycles(const target::MachineDescription& m, const Transfer& t) {
  return static_cast<std::uint32_t>(m.exchange_cycles(t.bytes));  // at most bytes / 4: fits
}

std::uint64_t send_end(const target::MachineDescription& m, const Transfer& t) {
  return std::uint64_t(t.send_cycle) + occupancy_cycles(m, t);
}

std::uint64_t land_end(const target::MachineDescription& m, const Transfer& t) {
  return std::uint64_t(t.land_cycle) + occupancy_cycles(m, t);
}

bool continues(const Transfer& previous, const Endpoint& previous_destination, const Transfer& next,
               const Endpoint& next_destination) {
  return previous.source.tile == next.source.tile && previous_destination.allocation == next_destination.allocation &&
         std::uint64_t(previous_destination.offset) + previous.bytes == next_destination.offset;
}

std::uint64_t local_copy_cycles(const target::MachineDescription& m, std::uint64_t bytes) {
  return bytes == 0 ? 0 : target::copy_cycles(m, bytes);
}

namespace {

// One occupied window on a tile's lane: [start, end) cycles, piece `piece` (an index into
// the step's exchange), landing at its destination `destination` (receive lanes only).
struct Busy {
  std::uint32_t start = 0, end = 0;
  std::uint32_t piece = 0, destination = 0;
};

// A tile's landings or sends in the current section, in cycle order. Everything before
// `dense` is packed with gaps shorter than the section's shortest piece, so no search
// needs to look there again.
struct Lane {
  std::vector<Busy> busy;
  std::size_t dense = 0;
};

// The order pieces are placed in: pieces from one sender to one set of receivers form a
// group, taken together in destination order so that its receivers continue or only move
// their pointer; groups by the load of their busiest tile (cycles of its pieces plus a
// pointer move per piece received), busiest first, so the critical lanes fill from the section's start.
std::vector<std::size_t> priority_order(const std::vector<Transfer>& x, std::size_t first, std::size_t last,
                                        const target::MachineDescription& m) {
  std::vector<std::uint64_t> load(m.tiles, 0), sent(m.tiles, 0);
  for (std::size_t i = first; i < last; ++i) {
    const std::uint32_t cycles = occupancy_cycles(m, x[i]);
    sent[x[i].source.tile] += cycles;
    for (const Endpoint& d : x[i].destinations) load[d.tile] += cycles + m.pointer_switch_cycles;
  }
  struct Group {
    std::uint64_t priority = 0, cycles = 0;
    std::vector<std::size_t> pieces;
  };
  std::map<std::pair<std::uint32_t, std::vector<std::uint32_t>>, std::size_t> index;
  std::vector<Group> groups;
  std::vector<std::uint32_t> tiles;
  for (std::size_t i = first; i < last; ++i) {
    const Transfer& t = x[i];
    tiles.clear();
    for (const Endpoint& d : t.destinations) tiles.push_back(d.tile);
    const auto [at, added] = index.try_emplace({t.source.tile, tiles}, groups.size());
    if (added) {
      Group g{sent[t.source.tile], 0, {}};
      for (std::uint32_t tile : tiles) g.priority = std::max(g.priority, load[tile]);
      groups.push_back(std::move(g));
    }
    groups[at->second].cycles += occupancy_cycles(m, t);
    groups[at->second].pieces.push_back(i);
  }
  std::vector<std::size_t> by_priority(groups.size());
  std::iota(by_priority.begin(), by_priority.end(), 0);
  std::stable_sort(by_priority.begin(), by_priority.end(), [&](std::size_t a, std::size_t b) {
    return std::tie(groups[b].priority, groups[b].cycles) < std::tie(groups[a].priority, groups[a].cycles);
  });
  std::vector<std::size_t> order;
  order.reserve(last - first);
  for (std::size_t g : by_priority) {
    std::vector<std::size_t>& pieces = groups[g].pieces;
    std::stable_sort(pieces.begin(), pieces.end(), [&](std::size_t a, std::size_t b) {
      const Endpoint &da = x[a].destinations.front(), &db = x[b].destinations.front();
      return std::tie(da.allocation, da.offset) < std::tie(db.allocation, db.offset);
    });
    order.insert(order.end(), pieces.begin(), pieces.end());
  }
  return order;
}

// The other order tried: per sender, its pieces grouped into runs (one first receiver
// each, so a receiver takes a sender's pieces back to back), the runs ordered by first
// receiver rotated by the sender's number (so senders start on different receivers);
// then round robin over the senders, run by run, so every lane advances together. It
// packs unicast phases where senders and receivers are equally loaded (a near-permutation
// per round), where the busiest-first order leaves lanes waiting on each other.
std::vector<std::size_t> rotated_order(const std::vector<Transfer>& x, std::size_t first, std::size_t last,
                                     const target::MachineDescription& m) {
  struct Key {
    std::uint32_t sender, rotated, allocation, offset;
    std::size_t index;
    auto tie() const { return std::tie(sender, rotated, allocation, offset, index); }
  };
  std::vector<Key> keys;
  keys.reserve(last - first);
  for (std::size_t i = first; i < last; ++i) {
    const Transfer& t = x[i];
    const Endpoint& d = t.destinations.front();
    keys.push_back(Key{t.source.tile, (d.tile + m.tiles - t.source.tile) % m.tiles, d.allocation, d.offset, i});
  }
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) { return a.tie() < b.tie(); });
  // Run r of its sender, for each piece; then sort by (run, sender) keeping run order.
  struct Slot {
    std::uint32_t run, sender;
    std::size_t position;
  };
  std::vector<Slot> slots(keys.size());
  for (std::size_t k = 0, run = 0; k < keys.size(); ++k) {
    if (k > 0 && keys[k].sender != keys[k - 1].sender) run = 0;
    else if (k > 0 && keys[k].rotated != keys[k - 1].rotated) ++run;
    slots[k] = Slot{static_cast<std::uint32_t>(run), keys[k].sender, k};
  }
  std::sort(slots.begin(), slots.end(), [](const Slot& a, const Slot& b) {
    return std::tie(a.run, a.sender, a.position) < std::tie(b.run, b.sender, b.position);
  });
  std::vector<std::size_t> order;
  order.reserve(slots.size());
  for (const Slot& s : slots) order.push_back(keys[s.position].index);
  return order;
}


constexpr std::size_t kMaxRoundTable = std::size_t(1) << 22;  // 16 MiB of colour slots

// An order for sections of unicasts only: the pieces as a bipartite multigraph of senders
// and receivers, one edge per sender-receiver pair (all its pieces in destination order,
// so they continue each other), edge-coloured with as many colours as the busiest tile
// has edges (Konig's theorem; alternating paths swap two colours where the greedy choice
// clashes), then colour by colour. Each colour is a matching, a round in which no tile
// sends or receives twice, so edges of like sizes land in rounds without waiting. Empty
// when a piece has several receivers. (Colouring single pieces instead never did better
// on the main job.)
std::vector<std::size_t> round_order(const std::vector<Transfer>& x, std::size_t first, std::size_t last,
                                     const target::MachineDescription& m) {
  for (std::size_t i = first; i < last; ++i)
    if (x[i].destinations.size() != 1) return {};
  auto receiver = [&](std::size_t i) { return x[i].destinations.front().tile; };
  std::vector<std::size_t> pieces(last - first);
  std::iota(pieces.begin(), pieces.end(), first);
  std::stable_sort(pieces.begin(), pieces.end(), [&](std::size_t p, std::size_t q) {
    const Endpoint &a = x[p].destinations.front(), &b = x[q].destinations.front();
    return std::tie(x[p].source.tile, a.tile, a.allocation, a.offset) < std::tie(x[q].source.tile, b.tile, b.allocation, b.offset);
  });
  std::vector<std::size_t> edge_start;  // edge e: pieces[edge_start[e], edge_start[e + 1])
  for (std::size_t k = 0; k < pieces.size(); ++k)
    if (k == 0 || x[pieces[k]].source.tile != x[pieces[k - 1]].source.tile ||
        receiver(pieces[k]) != receiver(pieces[k - 1]))
      edge_start.push_back(k);
  const std::size_t edges = edge_start.size(), vertices = 2 * std::size_t(m.tiles);
  edge_start.push_back(pieces.size());
  auto end_of = [&](std::size_t e, bool in) -> std::size_t {
    const std::size_t i = pieces[edge_start[e]];
    return in ? m.tiles + receiver(i) : x[i].source.tile;
  };
  std::vector<std::uint32_t> degree(vertices, 0);
  for (std::size_t e = 0; e < edges; ++e) ++degree[end_of(e, false)], ++degree[end_of(e, true)];
  const std::size_t colours = *std::max_element(degree.begin(), degree.end());
  if (vertices * colours > kMaxRoundTable) return {};  // a few tiles with very many pieces: not worth it
  std::vector<std::int32_t> at(vertices * colours, -1);  // the edge of each colour at each vertex
  std::vector<std::size_t> colour(edges, 0);
  auto free_colour = [&](std::size_t v) {
    std::size_t c = 0;
    while (at[v * colours + c] >= 0) ++c;
    return c;
  };
  std::vector<std::size_t> path;
  for (std::size_t e = 0; e < edges; ++e) {
    const std::size_t u = end_of(e, false), v = end_of(e, true), a = free_colour(u), b = free_colour(v);
    if (at[v * colours + a] >= 0) {
      // Swap a and b along the path from v that starts with colour a: a becomes free at v.
      path.clear();
      for (std::size_t w = v, c = a; at[w * colours + c] >= 0; c = c == a ? b : a) {
        const auto f = static_cast<std::size_t>(at[w * colours + c]);
        path.push_back(f);
        w = end_of(f, false) == w ? end_of(f, true) : end_of(f, false);
      }
      for (std::size_t f : path) at[end_of(f, false) * colours + colour[f]] = at[end_of(f, true) * colours + colour[f]] = -1;
      for (std::size_t f : path) {
        colour[f] = colour[f] == a ? b : a;
        at[end_of(f, false) * colours + colour[f]] = at[end_of(f, true) * colours + colour[f]] = static_cast<std::int32_t>(f);
      }
    }
    colour[e] = a;
    at[u * colours + a] = at[v * colours + a] = static_cast<std::int32_t>(e);
  }
  std::vector<std::size_t> by_colour(edges), order;
  std::iota(by_colour.begin(), by_colour.end(), 0);
  std::stable_sort(by_colour.begin(), by_colour.end(), [&](std::size_t p, std::size_t q) { return colour[p] < colour[q]; });
  order.reserve(pieces.size());
  for (std::size_t e : by_colour) order.insert(order.end(), pieces.begin() + edge_start[e], pieces.begin() + edge_start[e + 1]);
  return order;
}

// A fourth order, for multicasts: rounds by greedy colouring, widest pieces first, each
// into the first round in which none of its tiles (sender or receivers) is used yet,
// then round by round: like-sized multicasts whose receiver sets overlap take turns
// in rounds instead of waiting on each other piece by piece.
std::vector<std::size_t> multicast_round_order(const std::vector<Transfer>& x, std::size_t first, std::size_t last,
                                               const target::MachineDescription& m) {
  std::vector<std::size_t> pieces(last - first);
  std::iota(pieces.begin(), pieces.end(), first);
  std::stable_sort(pieces.begin(), pieces.end(),
                   [&](std::size_t p, std::size_t q) { return x[p].destinations.size() > x[q].destinations.size(); });
  std::vector<std::vector<bool>> used;  // per round, per tile
  std::vector<std::size_t> round(x.size(), 0), lowest(m.tiles, 0);  // each tile's first free round
  auto mark = [&](std::size_t r, std::uint32_t tile) {
    used[r][tile] = true;
    while (lowest[tile] < used.size() && used[lowest[tile]][tile]) ++lowest[tile];
  };
  for (std::size_t p : pieces) {
    std::size_t r = lowest[x[p].source.tile];
    for (const Endpoint& d : x[p].destinations) r = std::max(r, lowest[d.tile]);
    for (;; ++r) {
      if (r == used.size()) used.emplace_back(m.tiles, false);
      bool free = !used[r][x[p].source.tile];
      for (const Endpoint& d : x[p].destinations) free = free && !used[r][d.tile];
      if (free) break;
    }
    round[p] = r;
    mark(r, x[p].source.tile);
    for (const Endpoint& d : x[p].destinations) mark(r, d.tile);
  }
  std::stable_sort(pieces.begin(), pieces.end(), [&](std::size_t p, std::size_t q) { return round[p] < round[q]; });
  return pieces;
}

class PhaseScheduler {
 public:
  PhaseScheduler(const target::MachineDescription& m, Superstep& step)
      : m_(m), step_(step), senders_(m.tiles), receivers_(m.tiles) {}

  void run() {
    std::uint32_t end = 0;
    for (std::size_t first = 0; first < step_.exchange.size();) {
      std::size_t last = first;
      while (last < step_.exchange.size() && step_.exchange[last].wave == step_.exchange[first].wave) ++last;
      // A wave is a timed section; the next one starts after the last landing plus the join.
      const std::uint32_t base = first == 0 ? 0 : end + m_.section_join_cycles;
      end = std::max(end, section(first, last, base));
      first = last;
    }
    std::stable_sort(step_.selects.begin(), step_.selects.end(),
                     [](const SelectEvent& a, const SelectEvent& b) { return a.tile != b.tile ? a.tile < b.tile : a.cycle < b.cycle; });
    step_.exchange_cycles = end;
  }

 private:
  // Schedules pieces [first, last) from cycle `base`; returns the section's last landing end.
  std::uint32_t section(std::size_t first, std::size_t last, std::uint32_t base) {
    shortest_ = UINT32_MAX;
    first_ = first;
    transit_.clear();
    occupancy_.clear();
    for (std::size_t i = first; i < last; ++i) {
      occupancy_.push_back(occupancy_cycles(m_, step_.exchange[i]));
      shortest_ = std::min(shortest_, occupancy_.back());
      transit_.push_back(transit_cycles(m_, step_.exchange[i]));
    }
    // Each order in turn, the first shortest kept (re-placed if a later one was tried).
    // (Stopping once one reaches the rule bound saved less than the bound costs.)
    std::vector<std::size_t> best_order;
    std::uint32_t best_end = UINT32_MAX;
    bool placed_best = false;
    for (int o = 0; o < 4; ++o) {
      std::vector<std::size_t> order = o == 0   ? priority_order(step_.exchange, first, last, m_)
                                       : o == 1 ? rotated_order(step_.exchange, first, last, m_)
                                       : o == 2 ? round_order(step_.exchange, first, last, m_)
                                                : multicast_round_order(step_.exchange, first, last, m_);
      if (order.empty()) continue;  // an order that does not apply
      const std::uint32_t end = place_all(order, base);
      placed_best = end < best_end;
      if (placed_best) best_end = end, best_order = std::move(order);
    }
    if (!placed_best) place_all(best_order, base);
    add_selects(base);
    return best_end;
  }

  // Places pieces in `order` on empty lanes from cycle `base`; returns the last landing end.
  std::uint32_t place_all(const std::vector<std::size_t>& order, std::uint32_t base) {
    for (Lane& l : senders_) l.busy.clear(), l.dense = 0;  // keeping their memory
    for (Lane& l : receivers_) l.busy.clear(), l.dense = 0;
    std::uint32_t end = base;
    for (std::size_t i : order) end = std::max(end, place(i, base));
    return end;
  }

  // Control a receiver needs between landing `a` and landing piece `p` at its destination
  // `k`: none when it continues (same sender, next bytes), a pointer move for the same
  // sender, a source select for another.
  std::uint32_t control(const Busy& a, std::uint32_t p, std::uint32_t k) const {
    const Transfer& x = step_.exchange[a.piece];
    const Transfer& y = step_.exchange[p];
    if (continues(x, x.destinations[a.destination], y, y.destinations[k])) return 0;
    return x.source.tile == y.source.tile ? m_.pointer_switch_cycles : m_.source_switch_cycles;
  }
  std::uint32_t control(std::uint32_t p, std::uint32_t k, const Busy& b) const {
    return control(Busy{0, 0, p, k}, b.piece, b.destination);
  }

  // First lane position whose start is after `cycle`, never inside the dense prefix.
  static std::size_t position(const Lane& lane, std::uint32_t cycle) {
    const auto from = lane.busy.begin() + static_cast<std::ptrdiff_t>(lane.dense);
    return static_cast<std::size_t>(
        std::upper_bound(from, lane.busy.end(), cycle, [](std::uint32_t c, const Busy& b) { return c < b.start; }) -
        lane.busy.begin());
  }

  // The earliest cycle >= `cycle` at which piece p can land on its destination k's lane,
  // with each neighbour's control gap kept (backfilling any gap wide enough).
  std::uint64_t receiver_fit(const Lane& lane, std::uint32_t p, std::uint32_t k, std::uint64_t cycle,
                             std::uint32_t base) const {
    const std::uint32_t cycles = occupancy_[p - first_];
    std::size_t i = position(lane, static_cast<std::uint32_t>(std::min<std::uint64_t>(cycle, UINT32_MAX)));
    // The first landing of a section follows a select made at its start.
    cycle = std::max<std::uint64_t>(cycle, base + m_.source_switch_cycles);
    for (;; ++i) {
      if (i > 0) cycle = std::max<std::uint64_t>(cycle, lane.busy[i - 1].end + control(lane.busy[i - 1], p, k));
      if (i == lane.busy.size() || cycle + cycles + control(p, k, lane.busy[i]) <= lane.busy[i].start) return cycle;
    }
  }

  // The earliest cycle >= `cycle` at which the sender's lane is free for `cycles`.
  static std::uint64_t sender_fit(const Lane& lane, std::uint32_t cycles, std::uint64_t cycle) {
    std::size_t i = position(lane, static_cast<std::uint32_t>(std::min<std::uint64_t>(cycle, UINT32_MAX)));
    for (;; ++i) {
      if (i > 0) cycle = std::max<std::uint64_t>(cycle, lane.busy[i - 1].end);
      if (i == lane.busy.size() || cycle + cycles <= lane.busy[i].start) return cycle;
    }
  }

  // Puts `busy` into the lane in cycle order and extends its dense prefix.
  void insert(Lane& lane, const Busy& busy) const {
    lane.busy.insert(lane.busy.begin() + static_cast<std::ptrdiff_t>(position(lane, busy.start)), busy);
    while (lane.dense + 1 < lane.busy.size() && lane.busy[lane.dense + 1].start < lane.busy[lane.dense].end + shortest_)
      ++lane.dense;
  }

  // Lands piece p at the earliest cycle its sender's lane and all its receivers allow.
  std::uint32_t place(std::size_t p, std::uint32_t base) {
    Transfer& t = step_.exchange[p];
    const std::uint32_t transit = transit_[p - first_], cycles = occupancy_[p - first_];
    const auto piece = static_cast<std::uint32_t>(p);
    std::uint64_t land = std::uint64_t(base) + transit;
    for (;;) {  // until the sender and every receiver take the same cycle
      std::uint64_t next = sender_fit(senders_[t.source.tile], cycles, land - transit) + transit;
      for (std::uint32_t k = 0; k < t.destinations.size(); ++k)
        next = receiver_fit(receivers_[t.destinations[k].tile], piece, k, next, base);
      if (next == land) break;
      land = next;
    }
    if (land + cycles > UINT32_MAX) throw Error("compiler: exchange schedule longer than 2^32 cycles", kExitInternal);
    t.land_cycle = static_cast<std::uint32_t>(land);
    t.send_cycle = t.land_cycle - transit;
    insert(senders_[t.source.tile], Busy{t.send_cycle, t.send_cycle + cycles, piece, 0});
    for (std::uint32_t k = 0; k < t.destinations.size(); ++k)
      insert(receivers_[t.destinations[k].tile], Busy{t.land_cycle, t.land_cycle + cycles, piece, k});
    return t.land_cycle + cycles;
  }

  // Each receiver's select events: before every landing that does not continue the
  // previous one, as early as the control allows.
  void add_selects(std::uint32_t base) {
    for (std::uint32_t tile = 0; tile < m_.tiles; ++tile) {
      const Lane& lane = receivers_[tile];
      for (std::size_t i = 0; i < lane.busy.size(); ++i) {
        const Busy& b = lane.busy[i];
        const std::uint32_t cost = i == 0 ? m_.source_switch_cycles : control(lane.busy[i - 1], b.piece, b.destination);
        if (cost == 0) continue;
        const std::uint32_t from = i == 0 ? base : lane.busy[i - 1].end;
        step_.selects.push_back(SelectEvent{tile, from + cost, step_.exchange[b.piece].source.tile});
      }
    }
  }

  const target::MachineDescription& m_;
  Superstep& step_;
  std::vector<Lane> senders_, receivers_;
  std::uint32_t shortest_ = 0;          // the section's shortest piece, in cycles
  std::size_t first_ = 0;               // its first piece
  std::vector<std::uint32_t> transit_;  // each of its pieces' transit
  std::vector<std::uint32_t> occupancy_;  // and its cycles on a lane (occupancy_cycles)
};

}  // namespace

void schedule_exchange(CompiledProgram& program, const target::MachineDescription& machine) {
  for (Superstep& step : program.steps) {
    step.selects.clear();
    step.exchange_cycles = 0;
    // A receiver takes one piece at a time: a multicast cannot land twice on one tile.
    std::vector<std::size_t> seen(machine.tiles, SIZE_MAX);
    for (std::size_t i = 0; i < step.exchange.size(); ++i) {
      const Transfer& t = step.exchange[i];
      if (t.destinations.empty()) throw Error("compiler: transfer without a destination", kExitInternal);
      for (const Endpoint& d : t.destinations)
        if (std::exchange(seen.at(d.tile), i) == i)
          throw Error("compiler: a multicast lands twice on tile " + std::to_string(d.tile), kExitInternal);
    }
  }
  // Phases are independent: each schedule depends only on its own step.
  std::vector<std::exception_ptr> errors(program.steps.size());
  const long n = static_cast<long>(program.steps.size());
#pragma omp parallel for schedule(dynamic, 1)
  for (long i = 0; i < n; ++i) {
    try {
      PhaseScheduler(machine, program.steps[static_cast<std::size_t>(i)]).run();
    } catch (...) {
      errors[static_cast<std::size_t>(i)] = std::current_exception();
    }
  }
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace tilevit::compiler
