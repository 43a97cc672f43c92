#include "compiler/exchange_schedule.hpp"

#include <algorithm>
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

bool continues(const Transfer& previous, const Endpoint& previous_destination, const Transfer& next,
               const Endpoint& next_destination) {
  return previous.source.tile == next.source.tile && previous_destination.allocation == next_destination.allocation &&
         std::uint64_t(previous_destination.offset) + previous.bytes == next_destination.offset;
}

std::uint64_t local_copy_cycles(const target::MachineDescription& m, std::uint64_t bytes) {
  return bytes == 0 ? 0 : target::copy_cycles(m, bytes);
}

namespace {

// What a receiver last took in the current section.
struct Receiver {
  bool active = false;            // has landed something in this section
  std::uint32_t end = 0;          // its last landing's end
  const Transfer* last = nullptr;  // that landing and where it wrote
  Endpoint last_destination;
};

class PhaseScheduler {
 public:
  PhaseScheduler(const target::MachineDescription& m, Superstep& step)
      : m_(m), step_(step), sender_free_(m.tiles, 0), receivers_(m.tiles) {}

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
    for (Receiver& r : receivers_) r.active = false;
    std::fill(sender_free_.begin(), sender_free_.end(), base);
    std::uint32_t end = base;
    for (std::size_t i : section_order(first, last)) end = std::max(end, place(step_.exchange[i], base));
    return end;
  }

  // The order pieces are placed in. Per sender, its pieces grouped into runs (one first
  // receiver each, so a receiver takes a sender's pieces back to back), the runs ordered
  // by first receiver rotated by the sender's number (so senders start on different
  // receivers); then round robin over the senders, run by run, so every lane advances.
  std::vector<std::size_t> section_order(std::size_t first, std::size_t last) const {
    struct Key {
      std::uint32_t sender, rotated, allocation, offset;
      std::size_t index;
      auto tie() const { return std::tie(sender, rotated, allocation, offset, index); }
    };
    std::vector<Key> keys;
    keys.reserve(last - first);
    for (std::size_t i = first; i < last; ++i) {
      const Transfer& t = step_.exchange[i];
      const Endpoint& d = t.destinations.front();
      keys.push_back(Key{t.source.tile, (d.tile + m_.tiles - t.source.tile) % m_.tiles, d.allocation, d.offset, i});
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

  // When receiver `r` could take a landing of `t` into `d`, and the control it needs first
  // (0: none, it continues the previous landing).
  std::uint32_t ready(const Receiver& r, const Transfer& t, const Endpoint& d, std::uint32_t base,
                      std::uint32_t& control) const {
    if (!r.active) return (control = m_.source_switch_cycles, base + control);
    if (continues(*r.last, r.last_destination, t, d)) return (control = 0, r.end);
    control = r.last->source.tile == t.source.tile ? m_.pointer_switch_cycles : m_.source_switch_cycles;
    return r.end + control;
  }

  std::uint32_t place(Transfer& t, std::uint32_t base) {
    const std::uint32_t transit = transit_cycles(m_, t);
    std::uint64_t land = std::uint64_t(std::max(base, sender_free_[t.source.tile])) + transit;
    for (const Endpoint& d : t.destinations) {
      std::uint32_t control = 0;
      land = std::max<std::uint64_t>(land, ready(receivers_[d.tile], t, d, base, control));
    }
    if (land + t.words() > UINT32_MAX) throw Error("compiler: exchange schedule longer than 2^32 cycles", kExitInternal);
    t.land_cycle = static_cast<std::uint32_t>(land);
    t.send_cycle = t.land_cycle - transit;
    sender_free_[t.source.tile] = t.send_cycle + t.words();
    for (const Endpoint& d : t.destinations) {
      Receiver& r = receivers_[d.tile];
      std::uint32_t control = 0;
      const std::uint32_t selected = ready(r, t, d, base, control);
      if (control > 0) step_.selects.push_back(SelectEvent{d.tile, selected, t.source.tile});
      r = Receiver{true, t.land_end(), &t, d};
    }
    return t.land_end();
  }

  const target::MachineDescription& m_;
  Superstep& step_;
  std::vector<std::uint32_t> sender_free_;
  std::vector<Receiver> receivers_;
};

}  // namespace

void schedule_exchange(CompiledProgram& program, const target::MachineDescription& machine) {
  for (Superstep& step : program.steps) {
    step.selects.clear();
    step.exchange_cycles = 0;
    // A receiver takes one word per cycle: a multicast cannot land twice on one tile.
    std::vector<std::size_t> seen(machine.tiles, SIZE_MAX);
    for (std::size_t i = 0; i < step.exchange.size(); ++i) {
      const Transfer& t = step.exchange[i];
      if (t.destinations.empty()) throw Error("compiler: transfer without a destination", kExitInternal);
      for (const Endpoint& d : t.destinations)
        if (std::exchange(seen.at(d.tile), i) == i)
          throw Error("compiler: a multicast lands twice on tile " + std::to_string(d.tile), kExitInternal);
    }
    PhaseScheduler(machine, step).run();
  }
}

}  // namespace tilevit::compiler
