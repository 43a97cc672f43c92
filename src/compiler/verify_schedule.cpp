#include "compiler/verify_schedule.hpp"

#include <algorithm>
#include <optional>
#include <tuple>

#include "compiler/exchange_schedule.hpp"

namespace tilevit::compiler {
namespace {

// One landing on one receiver, or one send on one lane: [start, end) in phase cycles, its
// length the piece's occupancy_cycles (the machine's bytes per cycle).
struct Slot {
  std::uint64_t start = 0, end = 0;
  std::uint32_t transfer = 0, destination = 0;
  bool operator<(const Slot& o) const { return std::tie(start, end, transfer) < std::tie(o.start, o.end, o.transfer); }
};

class ScheduleChecker {
 public:
  ScheduleChecker(const target::MachineDescription& m, const CompiledProgram& p, std::uint32_t step,
                  const std::function<void(const std::string&)>& fail)
      : m_(m), s_(p.steps[step]), step_(step), fail_(fail) {}

  void run() {
    std::vector<std::vector<Slot>> sends(m_.tiles), landings(m_.tiles);
    std::uint64_t last_end = 0;
    std::uint32_t last_tile = 0;
    for (std::uint32_t i = 0; i < s_.exchange.size(); ++i) {
      const Transfer& t = s_.exchange[i];
      if (t.words() > m_.max_transfer_words)
        fail(t.source.tile, t.send_cycle, "transfer of " + std::to_string(t.words()) + " words is over the longest " +
                                              std::to_string(m_.max_transfer_words));
      if (std::uint64_t(t.send_cycle) + transit_cycles(m_, t) > t.land_cycle)
        fail(t.source.tile, t.send_cycle, "a transfer sent here lands at cycle " + std::to_string(t.land_cycle) +
                                              ", before its transit of " + std::to_string(transit_cycles(m_, t)) + " cycles");
      if (t.source.tile < m_.tiles) sends[t.source.tile].push_back(Slot{t.send_cycle, send_end(m_, t), i, 0});
      for (std::uint32_t k = 0; k < t.destinations.size(); ++k)
        if (t.destinations[k].tile < m_.tiles) landings[t.destinations[k].tile].push_back(Slot{t.land_cycle, land_end(m_, t), i, k});
      if (i == 0 || land_end(m_, t) > last_end)
        last_end = land_end(m_, t), last_tile = t.destinations.empty() ? t.source.tile : t.destinations.front().tile;
    }
    if (s_.exchange_cycles != last_end)
      fail(last_tile, static_cast<std::uint32_t>(last_end),
           "the phase's scheduled length is " + std::to_string(s_.exchange_cycles) + " cycles, its last landing ends here");
    for (std::uint32_t tile = 0; tile < m_.tiles; ++tile) check_lane(tile, sends[tile]);
    std::vector<std::vector<SelectEvent>> events(m_.tiles);
    for (std::size_t i = 0; i < s_.selects.size(); ++i) {
      const SelectEvent& e = s_.selects[i];
      if (e.tile >= m_.tiles || e.source >= m_.tiles) {
        fail(e.tile, e.cycle, "select event names tile " + std::to_string(e.tile) + " and sender " +
                                  std::to_string(e.source) + " of " + std::to_string(m_.tiles));
        continue;
      }
      if (!events[e.tile].empty() && events[e.tile].back().cycle > e.cycle)
        fail(e.tile, e.cycle, "select events out of cycle order");
      events[e.tile].push_back(e);
    }
    for (std::uint32_t tile = 0; tile < m_.tiles; ++tile) {
      std::stable_sort(events[tile].begin(), events[tile].end(),
                       [](const SelectEvent& a, const SelectEvent& b) { return a.cycle < b.cycle; });
      check_receiver(tile, landings[tile], events[tile]);
    }
  }

 private:
  void fail(std::uint32_t tile, std::uint64_t cycle, const std::string& what) const {
    fail_("tile " + std::to_string(tile) + ", superstep " + std::to_string(step_) + " (" + s_.label + "), cycle " +
          std::to_string(cycle) + ": " + what);
  }

  void check_lane(std::uint32_t tile, std::vector<Slot>& sends) const {
    std::sort(sends.begin(), sends.end());
    for (std::size_t i = 1; i < sends.size(); ++i)
      if (sends[i].start < sends[i - 1].end) {
        fail(tile, sends[i].start, "send lane double-booked (transfers " + std::to_string(sends[i - 1].transfer) + " and " +
                                       std::to_string(sends[i].transfer) + ")");
        return;
      }
  }

  std::uint32_t sender(const Slot& l) const { return s_.exchange[l.transfer].source.tile; }

  // The receiver's landings in time against its select events.
  void check_receiver(std::uint32_t tile, std::vector<Slot>& landings, const std::vector<SelectEvent>& events) const {
    std::sort(landings.begin(), landings.end());
    std::optional<SelectEvent> listening;
    std::size_t next = 0;
    const Slot* previous = nullptr;
    for (const Slot& l : landings) {
      if (previous && l.start < previous->end) {
        fail(tile, l.start, "receive slots overlap: a landing here, the previous one ends at cycle " +
                                std::to_string(previous->end) + " (transfers " + std::to_string(previous->transfer) +
                                " and " + std::to_string(l.transfer) + ")");
        return;
      }
      bool selected = false;  // a select event since the previous landing ended
      for (; next < events.size() && events[next].cycle <= l.start; ++next) {
        const SelectEvent& e = events[next];
        if (previous && e.cycle < previous->end) {
          fail(tile, e.cycle, "selects tile " + std::to_string(e.source) + " while a word from tile " +
                                  std::to_string(sender(*previous)) + " is landing");
        } else {
          const bool same = previous && sender(*previous) == e.source;
          const std::uint32_t cost = same ? m_.pointer_switch_cycles : m_.source_switch_cycles;
          const std::uint64_t free = previous ? previous->end : 0;
          if (e.cycle < free + cost)
            fail(tile, e.cycle, "select of tile " + std::to_string(e.source) + " " + std::to_string(e.cycle - free) +
                                    " cycles after the previous landing; it takes " + std::to_string(cost));
          selected = true;
        }
        listening = e;
      }
      if (!listening || listening->source != sender(l)) {
        fail(tile, l.start, "a word from tile " + std::to_string(sender(l)) + " lands while the receiver listens to " +
                                (listening ? "tile " + std::to_string(listening->source) : std::string("no sender")));
      } else if (previous && !selected &&
                 !continues(s_.exchange[previous->transfer], s_.exchange[previous->transfer].destinations[previous->destination],
                            s_.exchange[l.transfer], s_.exchange[l.transfer].destinations[l.destination])) {
        fail(tile, l.start, "the write pointer moves without a select event");
      }
      previous = &l;
    }
    for (; previous && next < events.size() && events[next].cycle < previous->end; ++next)
      fail(tile, events[next].cycle, "select event while a word is landing");
  }

  const target::MachineDescription& m_;
  const Superstep& s_;
  std::uint32_t step_;
  const std::function<void(const std::string&)>& fail_;
};

}  // namespace

void check_exchange_schedule(const target::MachineDescription& machine, const CompiledProgram& program,
                             std::uint32_t step, const std::function<void(const std::string&)>& fail) {
  ScheduleChecker(machine, program, step, fail).run();
}

}  // namespace tilevit::compiler
