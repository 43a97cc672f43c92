// Per-tile memory placement (docs/PLACEMENT.md).
//
// Phase 1 packs the whole-program allocations (parameters, support, and anything live
// at every step of the tile's program) downwards from the top of the free segments,
// best fit decreasing, so the rest of each segment stays one contiguous piece.
// Phase 2 places the others in decreasing size, each at the lowest address where it
// meets no placed allocation whose lifetime overlaps its own (and no element unit of a
// conflicting one). If that pass fails, a fixed list of other orders and fit policies is
// tried, then the primary order with the failing allocations promoted to the front.
// Everything is sequential per tile and fully tie-broken: the result is deterministic.
#include "compiler/placement.hpp"

#include <algorithm>
#include <iterator>
#include <limits>

#include "support/error.hpp"

namespace tilevit::compiler {

using target::MachineDescription;

namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint32_t kForever = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint32_t kMaxPromotions = 16;

enum class Fit { lowest, best };

using Segment = FreeSegment;
struct Range {
  std::uint64_t start = 0, end = 0;  // [start, end)
};

std::uint64_t align_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) & ~(a - 1); }
std::uint64_t align_down(std::uint64_t v, std::uint64_t a) { return v & ~(a - 1); }
bool is_power_of_two(std::uint32_t v) { return v != 0 && (v & (v - 1)) == 0; }

struct Item {
  std::uint32_t bytes = 0, align = 1;
  std::uint32_t first = 0, last = 0;  // effective lifetime: 0..kForever for whole-program kinds
  std::uint64_t regions = 0;          // bit r: machine region r satisfies the need
  bool fixed = false;                 // placed in phase 1
};

bool lifetimes_overlap(const Item& x, const Item& y) { return x.first <= y.last && y.first <= x.last; }

struct WalkResult {
  bool found = false;
  std::uint64_t address = 0;
  std::uint32_t region = 0;
  std::uint64_t gap = 0;          // size of the chosen gap
  std::uint64_t largest_gap = 0;  // only complete when the walk was not cut short
};

// Scans the free gaps of the segments in `regions` (address order) left by `obstacles`
// (sorted by start, may overlap each other) for `bytes` at `align`. Fit::lowest stops at
// the first gap that fits unless `scan_all`; Fit::best keeps the smallest fitting gap
// (ties: the lower address). The allocation goes at the (aligned) start of its gap.
WalkResult walk(const std::vector<Segment>& segments, std::uint64_t regions, const std::vector<Range>& obstacles,
                std::uint32_t bytes, std::uint32_t align, Fit fit, bool scan_all) {
  WalkResult r;
  auto consider = [&](std::uint64_t g0, std::uint64_t g1, std::uint32_t region) {
    r.largest_gap = std::max(r.largest_gap, g1 - g0);
    const std::uint64_t a = align_up(g0, align);
    if (a + bytes > g1) return false;
    if (!r.found || (fit == Fit::best && g1 - g0 < r.gap)) {
      r.found = true;
      r.address = a;
      r.region = region;
      r.gap = g1 - g0;
    }
    return fit == Fit::lowest && !scan_all;
  };
  for (const Segment& s : segments) {
    if (!(regions >> s.region & 1)) continue;
    std::uint64_t cur = s.start;
    for (const Range& o : obstacles) {
      if (o.end <= cur) continue;
      if (o.start >= s.end) break;
      if (o.start > cur && consider(cur, o.start, s.region)) return r;
      cur = std::max(cur, o.end);
      if (cur >= s.end) break;
    }
    if (cur < s.end && consider(cur, s.end, s.region)) return r;
  }
  return r;
}

struct Failure {
  std::uint32_t request = kNone;
  std::uint64_t free_bytes = 0, largest_hole = 0;
};

class TilePlacer {
 public:
  TilePlacer(const MachineDescription& machine, const TilePlacementInput& input, bool profiling)
      : machine_(machine), input_(input), machine_profiling_(profiling), segments_(free_segments(machine, profiling)) {}

  TilePlacement run() {
    validate_and_build();
    std::vector<std::uint32_t> address(items_.size(), 0), region_of(items_.size(), kNone);
    Failure failure;
    if (!place_fixed(address, region_of, failure)) fail(failure);
    build_dynamic_segments(address);

    std::vector<std::uint32_t> dynamic;
    for (std::uint32_t i = 0; i < items_.size(); ++i)
      if (!items_[i].fixed) dynamic.push_back(i);
    index_steps(dynamic);
    const auto by_size = [&](std::uint32_t a, std::uint32_t b) {
      const Item &x = items_[a], &y = items_[b];
      if (x.bytes != y.bytes) return x.bytes > y.bytes;
      if (x.first != y.first) return x.first < y.first;
      return a < b;
    };
    const auto constrained_first = [&](std::uint32_t a, std::uint32_t b) {
      const bool ca = (items_[a].regions & (items_[a].regions - 1)) == 0;
      const bool cb = (items_[b].regions & (items_[b].regions - 1)) == 0;
      return ca != cb ? ca : by_size(a, b);
    };
    const auto by_area = [&](std::uint32_t a, std::uint32_t b) {
      const Item &x = items_[a], &y = items_[b];
      const std::uint64_t ax = std::uint64_t{x.bytes} * (std::uint64_t{x.last} - x.first + 1);
      const std::uint64_t ay = std::uint64_t{y.bytes} * (std::uint64_t{y.last} - y.first + 1);
      return ax != ay ? ax > ay : by_size(a, b);
    };
    const auto by_first = [&](std::uint32_t a, std::uint32_t b) {
      const Item &x = items_[a], &y = items_[b];
      return x.first != y.first ? x.first < y.first : by_size(a, b);
    };
    std::vector<std::uint32_t> primary = dynamic;
    std::sort(primary.begin(), primary.end(), by_size);

    // The passes, in a fixed order (determinism): the primary (decreasing size, lowest
    // address); the same order with best fit; the allocations bound to one region first;
    // decreasing size x lifetime ("area"); program order with best fit.
    enum class Order { size, constrained, area, first };
    const std::pair<Order, Fit> passes[] = {{Order::size, Fit::lowest},
                                            {Order::size, Fit::best},
                                            {Order::constrained, Fit::lowest},
                                            {Order::area, Fit::lowest},
                                            {Order::first, Fit::best}};
    Failure primary_failure;
    std::uint32_t attempts = 0;
    std::vector<std::uint32_t> order;
    for (std::size_t p = 0; p < std::size(passes); ++p) {
      order = primary;
      switch (passes[p].first) {
        case Order::size: break;
        case Order::constrained: std::sort(order.begin(), order.end(), constrained_first); break;
        case Order::area: std::sort(order.begin(), order.end(), by_area); break;
        case Order::first: std::sort(order.begin(), order.end(), by_first); break;
      }
      ++attempts;
      std::vector<std::uint32_t> addr = address, reg = region_of;
      Failure f;
      if (place_dynamic(order, passes[p].second, addr, reg, f)) return finish(std::move(addr), attempts);
      if (p == 0) primary_failure = f;
    }
    // Promote the allocations that failed to the front of the primary order, one more each
    // round: a large or constrained allocation that the size order left for late often
    // fits when placed first.
    std::vector<std::uint32_t> promoted{primary_failure.request};
    for (std::uint32_t round = 0; round < kMaxPromotions; ++round) {
      order = promoted;
      for (std::uint32_t i : primary)
        if (std::find(promoted.begin(), promoted.end(), i) == promoted.end()) order.push_back(i);
      ++attempts;
      std::vector<std::uint32_t> addr = address, reg = region_of;
      Failure f;
      if (place_dynamic(order, Fit::lowest, addr, reg, f)) return finish(std::move(addr), attempts);
      if (std::find(promoted.begin(), promoted.end(), f.request) != promoted.end()) break;
      promoted.push_back(f.request);
    }
    fail(primary_failure);
  }

 private:
  TilePlacement finish(std::vector<std::uint32_t> address, std::uint32_t attempts) {
    TilePlacement out;
    out.stats = memory_stats(machine_, input_, address, machine_profiling_);
    out.address = std::move(address);
    out.attempts = attempts;
    return out;
  }

  std::string where(std::uint32_t i) const {
    return "tile " + std::to_string(input_.tile) + ": request " + std::to_string(i) + " \"" +
           input_.requests[i].label + "\"";
  }

  void validate_and_build() {
    const auto internal = [](const std::string& m) { throw Error(m, kExitInternal); };
    if (input_.tile >= machine_.tiles)
      internal("tile " + std::to_string(input_.tile) + ": placement input for a tile outside the machine (" +
               std::to_string(machine_.tiles) + " tiles)");
    if (machine_.regions.size() > 64)
      internal("machine " + machine_.name + ": placement supports at most 64 memory regions");
    const std::size_t n = input_.requests.size();
    if (n >= kNone) internal("tile " + std::to_string(input_.tile) + ": too many allocation requests");
    items_.resize(n);
    std::uint32_t lo = kForever, hi = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
      const AllocationRequest& q = input_.requests[i];
      Item& it = items_[i];
      if (q.bytes == 0) internal(where(i) + ": size is 0 B");
      if (!is_power_of_two(q.alignment))
        internal(where(i) + ": alignment " + std::to_string(q.alignment) + " is not a power of two");
      if (static_cast<unsigned>(q.kind) >= kAllocationKinds || static_cast<unsigned>(q.region) > 2)
        internal(where(i) + ": invalid kind or region need");
      it.bytes = q.bytes;
      it.align = q.alignment;
      for (std::uint32_t r = 0; r < machine_.regions.size(); ++r)
        if (region_satisfies(machine_.regions[r], q.region)) it.regions |= std::uint64_t{1} << r;
      if (is_whole_program(q.kind)) {
        it.first = 0;
        it.last = kForever;
        it.fixed = true;
      } else {
        if (q.first > q.last)
          internal(where(i) + ": lifetime phases " + std::to_string(q.first) + ".." + std::to_string(q.last) +
                   " is empty");
        it.first = q.first;
        it.last = q.last;
        lo = std::min(lo, q.first);
        hi = std::max(hi, q.last);
      }
    }
    // Allocations live at every step of this tile's program collide with everything: they
    // are placed with the whole-program ones.
    for (Item& it : items_)
      if (!it.fixed && it.first <= lo && it.last >= hi) it.fixed = true;
    partners_.assign(n, {});
    for (const ElementConflict& c : input_.conflicts) {
      if (c.a >= n || c.b >= n || c.a == c.b)
        internal("tile " + std::to_string(input_.tile) + ": element conflict " + std::to_string(c.a) + "/" +
                 std::to_string(c.b) + " does not name two requests of " + std::to_string(n));
      partners_[c.a].push_back(c.b);
      partners_[c.b].push_back(c.a);
    }
    for (auto& p : partners_) {
      std::sort(p.begin(), p.end());
      p.erase(std::unique(p.begin(), p.end()), p.end());
    }
  }

  // The element units that placed request `q` occupies, as an address range.
  Range unit_range(std::uint32_t q, const std::vector<std::uint32_t>& address,
                   const std::vector<std::uint32_t>& region_of) const {
    const target::MemoryRegion& g = machine_.regions[region_of[q]];
    const std::uint64_t unit = std::max<std::uint64_t>(1, g.unit_bytes());
    const std::uint64_t a = address[q] - std::uint64_t{g.start}, b = a + items_[q].bytes;
    return {g.start + a / unit * unit, std::min<std::uint64_t>(g.end, g.start + (b + unit - 1) / unit * unit)};
  }

  // Unit ranges of the placed conflict partners of `i` that live while `i` does, sorted.
  void conflict_ranges(std::uint32_t i, const std::vector<std::uint32_t>& address,
                       const std::vector<std::uint32_t>& region_of, std::vector<Range>& out) const {
    out.clear();
    for (std::uint32_t q : partners_[i])
      if (region_of[q] != kNone && lifetimes_overlap(items_[i], items_[q]))
        out.push_back(unit_range(q, address, region_of));
    std::sort(out.begin(), out.end(), [](const Range& x, const Range& y) { return x.start < y.start; });
  }

  // Per region: usable bytes minus what must go there: the whole-program allocations
  // that only it can hold, and 1.25 x the peak live bytes of the others that only it can
  // hold.
  std::vector<std::int64_t> region_slack() const {
    const std::size_t regions = machine_.regions.size();
    std::vector<std::int64_t> slack(regions, 0);
    for (const Segment& s : segments_) slack[s.region] += s.end - s.start;
    std::vector<std::vector<std::pair<std::uint32_t, std::int64_t>>> events(regions);
    for (const Item& it : items_) {
      if (it.regions == 0 || (it.regions & (it.regions - 1)) != 0) continue;
      const auto r = static_cast<std::size_t>(__builtin_ctzll(it.regions));
      if (it.fixed) {
        slack[r] -= it.bytes;
      } else {
        events[r].push_back({it.first, it.bytes});
        if (it.last != kForever) events[r].push_back({it.last + 1, -std::int64_t{it.bytes}});
      }
    }
    for (std::size_t r = 0; r < regions; ++r) {
      std::sort(events[r].begin(), events[r].end());  // at equal steps the frees come first
      std::int64_t live = 0, peak = 0;
      for (const auto& e : events[r]) peak = std::max(peak, live += e.second);
      slack[r] -= peak + peak / 4;  // a quarter more: room for the dynamic placement's own waste
    }
    return slack;
  }

  // Whether a segment of `regions` still has room for `it` below its phase-1 low mark
  // (ignoring element conflicts).
  bool fits_somewhere(const Item& it, std::uint64_t regions, const std::vector<std::uint64_t>& low) const {
    for (std::size_t k = 0; k < segments_.size(); ++k)
      if ((regions >> segments_[k].region & 1) && low[k] >= std::uint64_t{segments_[k].start} + it.bytes &&
          align_down(low[k] - it.bytes, it.align) >= segments_[k].start)
        return true;
    return false;
  }

  // Phase 1: best fit decreasing, each segment filled downwards from its top.
  bool place_fixed(std::vector<std::uint32_t>& address, std::vector<std::uint32_t>& region_of, Failure& failure) {
    std::vector<std::uint32_t> order;
    for (std::uint32_t i = 0; i < items_.size(); ++i)
      if (items_[i].fixed) order.push_back(i);
    // The allocations only one region can hold choose first; then the flexible ones.
    const auto flexible_item = [&](std::uint32_t i) { return (items_[i].regions & (items_[i].regions - 1)) != 0; };
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      const Item &x = items_[a], &y = items_[b];
      if (flexible_item(a) != flexible_item(b)) return flexible_item(b);
      if (x.bytes != y.bytes) return x.bytes > y.bytes;
      if (x.align != y.align) return x.align > y.align;
      return a < b;
    });
    std::vector<std::uint64_t> low(segments_.size());
    for (std::size_t k = 0; k < segments_.size(); ++k) low[k] = segments_[k].end;
    std::vector<std::int64_t> slack = region_slack();
    std::vector<Range> conflicts;
    for (std::uint32_t i : order) {
      const Item& it = items_[i];
      conflict_ranges(i, address, region_of, conflicts);
      // A flexible allocation goes where the allocations bound to one region leave room
      // for it ("safe" regions), best fit among those; constrained ones: best fit.
      const bool flexible = flexible_item(i);
      std::uint64_t allowed = it.regions;
      if (flexible) {
        std::uint64_t safe = 0;
        for (std::uint32_t r = 0; r < slack.size(); ++r)
          if ((it.regions >> r & 1) && slack[r] >= static_cast<std::int64_t>(it.bytes)) safe |= std::uint64_t{1} << r;
        if (safe && fits_somewhere(it, safe, low)) {
          allowed = safe;
        } else {  // no safe region: the one with the most slack that can hold it
          std::int64_t most = std::numeric_limits<std::int64_t>::min();
          for (std::uint32_t r = 0; r < slack.size(); ++r)
            if ((it.regions >> r & 1) && slack[r] > most && fits_somewhere(it, std::uint64_t{1} << r, low)) {
              most = slack[r];
              allowed = std::uint64_t{1} << r;
            }
        }
      }
      std::size_t best = segments_.size();
      std::uint64_t best_pos = 0;
      for (std::size_t k = 0; k < segments_.size(); ++k) {
        const Segment& s = segments_[k];
        if (!(allowed >> s.region & 1) || low[k] < std::uint64_t{s.start} + it.bytes) continue;
        std::uint64_t pos = align_down(low[k] - it.bytes, it.align);
        for (bool moved = true; moved && pos >= s.start;) {  // step below conflicting units
          moved = false;
          for (const Range& c : conflicts)
            if (pos < c.end && c.start < pos + it.bytes) {
              if (c.start < std::uint64_t{s.start} + it.bytes) {
                pos = 0;
                break;
              }
              pos = align_down(c.start - it.bytes, it.align);
              moved = true;
            }
        }
        if (pos < s.start) continue;
        if (best == segments_.size() || pos - s.start < best_pos - segments_[best].start) {
          best = k;
          best_pos = pos;
        }
      }
      if (best == segments_.size()) {
        failure = diagnose(i, address, region_of, segments_, /*placed_fixed_only=*/true);
        return false;
      }
      address[i] = static_cast<std::uint32_t>(best_pos);
      region_of[i] = segments_[best].region;
      low[best] = best_pos;
      if (flexible) slack[region_of[i]] -= it.bytes;
    }
    return true;
  }

  // The free segments left to phase 2: segments_ minus the phase-1 allocations.
  void build_dynamic_segments(const std::vector<std::uint32_t>& address) {
    std::vector<Range> used;
    for (std::uint32_t i = 0; i < items_.size(); ++i)
      if (items_[i].fixed) used.push_back({address[i], std::uint64_t{address[i]} + items_[i].bytes});
    std::sort(used.begin(), used.end(), [](const Range& x, const Range& y) { return x.start < y.start; });
    dynamic_segments_.clear();
    for (const Segment& s : segments_) {
      std::uint64_t cur = s.start;
      for (const Range& u : used) {
        if (u.end <= cur || u.start >= s.end) continue;
        if (u.start > cur) dynamic_segments_.push_back({static_cast<std::uint32_t>(cur), static_cast<std::uint32_t>(u.start), s.region});
        cur = std::max(cur, u.end);
      }
      if (cur < s.end) dynamic_segments_.push_back({static_cast<std::uint32_t>(cur), s.end, s.region});
    }
  }

  // Step index for phase 2: the distinct first steps of the dynamic allocations. Two
  // lifetimes overlap iff both contain the later of their first steps, so an allocation
  // is registered at, and queries, the indexed steps inside its lifetime.
  void index_steps(const std::vector<std::uint32_t>& dynamic) {
    steps_.clear();
    for (std::uint32_t i : dynamic) steps_.push_back(items_[i].first);
    std::sort(steps_.begin(), steps_.end());
    steps_.erase(std::unique(steps_.begin(), steps_.end()), steps_.end());
    step_lo_.assign(items_.size(), 0);
    step_hi_.assign(items_.size(), 0);
    for (std::uint32_t i : dynamic) {
      step_lo_[i] = static_cast<std::uint32_t>(std::lower_bound(steps_.begin(), steps_.end(), items_[i].first) -
                                               steps_.begin());
      step_hi_[i] = static_cast<std::uint32_t>(std::upper_bound(steps_.begin(), steps_.end(), items_[i].last) -
                                               steps_.begin());  // exclusive
    }
  }

  // Phase 2: one pass over `order`.
  bool place_dynamic(const std::vector<std::uint32_t>& order, Fit fit, std::vector<std::uint32_t>& address,
                     std::vector<std::uint32_t>& region_of, Failure& failure) {
    struct Placed {
      std::uint32_t start, end, first, last;
    };
    std::vector<Placed> placed;  // sorted by start: the dense path
    placed.reserve(order.size());
    std::vector<std::vector<std::uint32_t>> at_step(steps_.size());  // the sparse path
    std::vector<std::uint32_t> seen(items_.size(), kNone);
    std::vector<Range> obstacles, conflicts;
    const auto by_start = [](const Range& x, const Range& y) { return x.start < y.start; };
    for (std::uint32_t n = 0; n < order.size(); ++n) {
      const std::uint32_t i = order[n];
      const Item& it = items_[i];
      // Obstacles: the placed allocations whose lifetimes overlap, in address order.
      obstacles.clear();
      std::size_t candidates = 0;
      for (std::uint32_t k = step_lo_[i]; k < step_hi_[i]; ++k) candidates += at_step[k].size();
      if (candidates < placed.size()) {
        for (std::uint32_t k = step_lo_[i]; k < step_hi_[i]; ++k)
          for (std::uint32_t q : at_step[k])
            if (seen[q] != n) {
              seen[q] = n;
              obstacles.push_back({address[q], std::uint64_t{address[q]} + items_[q].bytes});
            }
        std::sort(obstacles.begin(), obstacles.end(), by_start);
      } else {
        for (const Placed& p : placed)
          if (p.first <= it.last && it.first <= p.last) obstacles.push_back({p.start, p.end});
      }
      conflict_ranges(i, address, region_of, conflicts);
      if (!conflicts.empty()) {
        const auto mid = obstacles.insert(obstacles.end(), conflicts.begin(), conflicts.end());
        std::inplace_merge(obstacles.begin(), mid, obstacles.end(), by_start);
      }
      const WalkResult r = walk(dynamic_segments_, it.regions, obstacles, it.bytes, it.align, fit, false);
      if (!r.found) {
        failure = diagnose(i, address, region_of, dynamic_segments_, false);
        return false;
      }
      address[i] = static_cast<std::uint32_t>(r.address);
      region_of[i] = r.region;
      const Placed p{address[i], static_cast<std::uint32_t>(r.address + it.bytes), it.first, it.last};
      placed.insert(std::upper_bound(placed.begin(), placed.end(), p,
                                     [](const Placed& x, const Placed& y) { return x.start < y.start; }),
                    p);
      for (std::uint32_t k = step_lo_[i]; k < step_hi_[i]; ++k) at_step[k].push_back(i);
    }
    return true;
  }

  // Why request `i` did not fit: the free bytes of its eligible regions at the worst step
  // of its lifetime (capacity minus the placed allocations live then; padding counts as
  // free), and the largest range free for its whole lifetime in `segments`.
  Failure diagnose(std::uint32_t i, const std::vector<std::uint32_t>& address,
                   const std::vector<std::uint32_t>& region_of, const std::vector<Segment>& segments,
                   bool placed_fixed_only) const {
    const Item& it = items_[i];
    Failure f;
    f.request = i;
    std::uint64_t capacity = 0;
    for (const Segment& s : segments_)
      if (it.regions >> s.region & 1) capacity += s.end - s.start;
    std::vector<std::uint32_t> live;  // placed, in an eligible region, lifetime overlapping
    std::vector<Range> obstacles;
    for (std::uint32_t q = 0; q < items_.size(); ++q) {
      if (region_of[q] == kNone || !lifetimes_overlap(it, items_[q])) continue;
      if (placed_fixed_only && !items_[q].fixed) continue;
      obstacles.push_back({address[q], std::uint64_t{address[q]} + items_[q].bytes});
      if (it.regions >> region_of[q] & 1) live.push_back(q);
    }
    std::vector<Range> conflicts;
    conflict_ranges(i, address, region_of, conflicts);
    obstacles.insert(obstacles.end(), conflicts.begin(), conflicts.end());
    std::sort(obstacles.begin(), obstacles.end(), [](const Range& x, const Range& y) { return x.start < y.start; });
    f.largest_hole = walk(segments, it.regions, obstacles, it.bytes, it.align, Fit::best, true).largest_gap;
    // Live bytes peak at the start of some lifetime: check the steps where one begins.
    std::uint64_t worst = 0;
    auto live_at = [&](std::uint32_t t) {
      std::uint64_t sum = 0;
      for (std::uint32_t q : live)
        if (items_[q].first <= t && t <= items_[q].last) sum += items_[q].bytes;
      return sum;
    };
    worst = live_at(it.first);
    for (std::uint32_t q : live)
      if (items_[q].first > it.first && items_[q].first <= it.last) worst = std::max(worst, live_at(items_[q].first));
    f.free_bytes = capacity > worst ? capacity - worst : 0;
    return f;
  }

  [[noreturn]] void fail(const Failure& f) const {
    const AllocationRequest& q = input_.requests[f.request];
    std::string regions;
    for (std::uint32_t r = 0; r < machine_.regions.size(); ++r)
      if (items_[f.request].regions >> r & 1) regions += (regions.empty() ? "" : "+") + machine_.regions[r].name;
    if (regions.empty()) regions = "no " + std::string(to_string(q.region)) + " region";
    const std::string steps =
        is_whole_program(q.kind) ? "whole program" : describe_phase(q.first) + ".." + describe_phase(q.last);
    throw DoesNotFit("tile " + std::to_string(input_.tile) + ": cannot place \"" + q.label + "\" (" +
                    std::to_string(q.bytes) + " B, align " + std::to_string(q.alignment) + ", " +
                    std::string(to_string(q.region)) + ", " + steps + "): " + std::to_string(f.free_bytes) +
                    " B free in " + regions + " at that time, largest hole " + std::to_string(f.largest_hole) +
                    " B",
                overflow(f));
  }

  TileOverflow overflow(const Failure& f) const {
    std::uint64_t capacity = 0;
    for (const Segment& s : segments_) capacity += s.end - s.start;
    const PeakLive peak = peak_live(input_);
    if (peak.bytes > capacity) return {input_.tile, false, peak.bytes, capacity, peak.phase};
    const AllocationRequest& q = input_.requests[f.request];
    return {input_.tile, true, q.bytes, f.largest_hole, is_whole_program(q.kind) ? 0 : q.first};
  }

  const MachineDescription& machine_;
  const TilePlacementInput& input_;
  const bool machine_profiling_;
  const std::vector<Segment> segments_;  // free parts of the regions (reserved ranges removed)
  std::vector<Segment> dynamic_segments_;
  std::vector<Item> items_;
  std::vector<std::vector<std::uint32_t>> partners_;
  std::vector<std::uint32_t> steps_, step_lo_, step_hi_;  // index_steps
};

}  // namespace

TilePlacement place_tile(const MachineDescription& machine, const TilePlacementInput& input, bool profiling) {
  return TilePlacer(machine, input, profiling).run();
}

}  // namespace tilevit::compiler
