// Placement, continued: names and region rules, free segments, statistics of a placement,
// their text/JSON forms, and the parallel loop over tiles. The placer is placement.cpp.
#include "compiler/placement.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <optional>
#include <nlohmann/json.hpp>

#include "support/error.hpp"

namespace tilevit::compiler {

std::string_view to_string(AllocationKind kind) {
  switch (kind) {
    case AllocationKind::parameter: return "parameter";
    case AllocationKind::activation: return "activation";
    case AllocationKind::scratch: return "scratch";
    case AllocationKind::support: return "support";
  }
  return "?";
}

std::string_view to_string(RegionNeed need) {
  switch (need) {
    case RegionNeed::any: return "any";
    case RegionNeed::interleaved: return "interleaved";
    case RegionNeed::standard: return "standard";
  }
  return "?";
}

std::string_view support_label(AllocationPurpose purpose) {
  switch (purpose) {
    case AllocationPurpose::tensor_data: return "";
    case AllocationPurpose::kernel_code: return "support.code";
    case AllocationPurpose::exchange_tables: return "support.exchange_tables";
    case AllocationPurpose::profile_samples: return "support.profile_samples";
  }
  return "";
}

AllocationPurpose purpose_of_support_label(std::string_view label) {
  for (AllocationPurpose p : {AllocationPurpose::kernel_code, AllocationPurpose::exchange_tables,
                              AllocationPurpose::profile_samples})
    if (label == support_label(p)) return p;
  return AllocationPurpose::tensor_data;
}

bool is_whole_program(AllocationKind kind) {
  return kind == AllocationKind::parameter || kind == AllocationKind::support;
}

bool region_satisfies(const target::MemoryRegion& region, RegionNeed need) {
  switch (need) {
    case RegionNeed::any: return true;
    case RegionNeed::interleaved: return region.load_bytes_per_cycle >= 16;
    case RegionNeed::standard: return region.code;
  }
  return false;
}

std::vector<FreeSegment> free_segments(const target::MachineDescription& machine, bool profiling) {
  std::vector<target::ReservedRange> reserved;
  for (const auto& r : machine.reserved)
    if (r.when == target::ReservedWhen::always || profiling) reserved.push_back(r);
  std::sort(reserved.begin(), reserved.end(), [](const auto& x, const auto& y) { return x.start < y.start; });
  std::vector<FreeSegment> out;
  for (std::uint32_t i = 0; i < machine.regions.size(); ++i) {
    const target::MemoryRegion& g = machine.regions[i];
    std::uint64_t cur = g.start;
    for (const auto& r : reserved) {
      const std::uint64_t end = std::uint64_t{r.start} + r.size;
      if (end <= cur || r.start >= g.end) continue;
      if (r.start > cur) out.push_back({static_cast<std::uint32_t>(cur), r.start, i});
      cur = std::max(cur, end);
    }
    if (cur < g.end) out.push_back({static_cast<std::uint32_t>(cur), g.end, i});
  }
  std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.start < y.start; });
  return out;
}

PeakLive peak_live(const TilePlacementInput& input) {
  const auto& requests = input.requests;
  // Live bytes only rise where a lifetime begins: evaluate at every distinct first phase.
  auto whole = [&](std::size_t i) { return is_whole_program(requests[i].kind); };
  std::vector<std::uint32_t> phases;
  for (std::size_t i = 0; i < requests.size(); ++i)
    if (!whole(i)) phases.push_back(requests[i].first);
  std::sort(phases.begin(), phases.end());
  phases.erase(std::unique(phases.begin(), phases.end()), phases.end());
  std::uint64_t always = 0;
  std::vector<std::int64_t> delta(phases.size() + 1, 0);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (whole(i)) {
      always += requests[i].bytes;
      continue;
    }
    const auto lo = std::lower_bound(phases.begin(), phases.end(), requests[i].first) - phases.begin();
    const auto hi = std::upper_bound(phases.begin(), phases.end(), requests[i].last) - phases.begin();
    delta[static_cast<std::size_t>(lo)] += requests[i].bytes;
    delta[static_cast<std::size_t>(hi)] -= requests[i].bytes;
  }
  PeakLive peak{always, 0};
  std::int64_t running = 0;
  for (std::size_t k = 0; k < phases.size(); ++k) {
    running += delta[k];
    const std::uint64_t live = always + static_cast<std::uint64_t>(running);
    if (k == 0 || live > peak.bytes) peak = {live, phases[k]};
  }
  return peak;
}

TileMemoryStats memory_stats(const target::MachineDescription& machine, const TilePlacementInput& input,
                             const std::vector<std::uint32_t>& address, bool profiling) {
  const auto& requests = input.requests;
  if (address.size() != requests.size())
    throw Error("tile " + std::to_string(input.tile) + ": " + std::to_string(address.size()) + " addresses for " +
                    std::to_string(requests.size()) + " allocation requests",
                kExitInternal);
  const std::vector<FreeSegment> segments = free_segments(machine, profiling);
  TileMemoryStats st;
  std::uint64_t capacity = 0;
  for (const FreeSegment& s : segments) capacity += s.end - s.start;
  st.capacity = static_cast<std::uint32_t>(capacity);

  const PeakLive peak_at = peak_live(input);
  const std::uint64_t peak = peak_at.bytes;
  st.peak_phase = peak_at.phase;
  auto whole = [&](std::size_t i) { return is_whole_program(requests[i].kind); };
  st.peak_live = static_cast<std::uint32_t>(peak);
  st.free_at_peak = static_cast<std::uint32_t>(capacity > peak ? capacity - peak : 0);

  // Holes at the peak step, per free segment.
  struct Span {
    std::uint64_t start, end;
  };
  std::vector<Span> live, all;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const Span s{address[i], std::uint64_t{address[i]} + requests[i].bytes};
    all.push_back(s);
    if (whole(i) || (requests[i].first <= st.peak_phase && st.peak_phase <= requests[i].last)) {
      live.push_back(s);
      st.bytes_by_kind[static_cast<std::size_t>(requests[i].kind)] += requests[i].bytes;
    }
  }
  const auto by_start = [](const Span& x, const Span& y) { return x.start < y.start; };
  std::sort(live.begin(), live.end(), by_start);
  std::uint64_t hole_sum = 0, largest = 0;
  for (const FreeSegment& seg : segments) {
    std::uint64_t cur = seg.start, seg_largest = 0;
    for (const Span& s : live) {
      if (s.end <= cur || s.start >= seg.end) continue;
      if (s.start > cur) seg_largest = std::max(seg_largest, s.start - cur);
      cur = std::max(cur, s.end);
    }
    if (cur < seg.end) seg_largest = std::max<std::uint64_t>(seg_largest, seg.end - cur);
    hole_sum += seg_largest;
    largest = std::max(largest, seg_largest);
  }
  st.largest_hole_at_peak = static_cast<std::uint32_t>(largest);
  st.fragmentation = st.free_at_peak == 0 ? 0.0
                                          : std::clamp(1.0 - static_cast<double>(hole_sum) / st.free_at_peak, 0.0, 1.0);

  // High water: measure of the union of every allocation's range.
  std::sort(all.begin(), all.end(), by_start);
  std::uint64_t covered = 0, cur = 0;
  for (const Span& s : all) {
    const std::uint64_t from = std::max(cur, s.start);
    if (s.end > from) covered += s.end - from;
    cur = std::max(cur, s.end);
  }
  st.high_water = static_cast<std::uint32_t>(covered);
  return st;
}

std::string describe_phase(std::uint32_t phase) {
  return "step " + std::to_string(step_of_phase(phase)) + (phase % 2 == 0 ? " (compute)" : " (exchange)");
}

std::string describe(const TileMemoryStats& s) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "capacity %u B, peak live %u B at %s (%.1f%%), high water %u B, free at peak %u B, "
                "largest hole %u B, fragmentation %.3f; at peak: parameter %u B, activation %u B, scratch %u B, "
                "support %u B",
                s.capacity, s.peak_live, describe_phase(s.peak_phase).c_str(), s.capacity ? 100.0 * s.peak_live / s.capacity : 0.0,
                s.high_water, s.free_at_peak, s.largest_hole_at_peak, s.fragmentation, s.bytes_by_kind[0],
                s.bytes_by_kind[1], s.bytes_by_kind[2], s.bytes_by_kind[3]);
  return buf;
}

nlohmann::json to_json(const TileMemoryStats& s) {
  nlohmann::json by_kind = nlohmann::json::object();
  for (std::size_t k = 0; k < kAllocationKinds; ++k)
    by_kind[std::string(to_string(static_cast<AllocationKind>(k)))] = s.bytes_by_kind[k];
  return {{"capacity", s.capacity},
          {"peak_live", s.peak_live},
          {"peak_phase", s.peak_phase},
          {"free_at_peak", s.free_at_peak},
          {"high_water", s.high_water},
          {"largest_hole_at_peak", s.largest_hole_at_peak},
          {"bytes_by_kind_at_peak", by_kind},
          {"fragmentation", s.fragmentation}};
}

std::string describe(const TileOverflow& o) {
  std::string text = "tile " + std::to_string(o.tile) + " needs " + std::to_string(o.needed) + " B" +
                     (o.one_piece ? " in one piece" : "") + " at " + describe_phase(o.phase) + ", " +
                     std::to_string(o.available) + " B " + (o.one_piece ? "is its largest free range" : "available");
  if (o.tiles_over > 1) text += " (and " + std::to_string(o.tiles_over - 1) + " more tiles)";
  return text;
}

namespace {

// A tile over its capacity is worse than one short of a contiguous range; then the larger
// shortfall; then the lower tile (deterministic).
bool worse(const TileOverflow& a, const TileOverflow& b) {
  if (a.one_piece != b.one_piece) return !a.one_piece;
  const auto shortfall = [](const TileOverflow& o) { return o.needed > o.available ? o.needed - o.available : 0; };
  if (shortfall(a) != shortfall(b)) return shortfall(a) > shortfall(b);
  return a.tile < b.tile;
}

}  // namespace

std::vector<TilePlacement> place_all(const target::MachineDescription& machine,
                                     const std::vector<TilePlacementInput>& tiles, bool profiling) {
  std::vector<TilePlacement> out(tiles.size());
  std::vector<std::exception_ptr> errors(tiles.size());
  const long n = static_cast<long>(tiles.size());
  // Tiles are independent: each result depends only on its own input.
#pragma omp parallel for schedule(dynamic, 8)
  for (long i = 0; i < n; ++i) {
    try {
      out[static_cast<std::size_t>(i)] = place_tile(machine, tiles[static_cast<std::size_t>(i)], profiling);
    } catch (...) {
      errors[static_cast<std::size_t>(i)] = std::current_exception();
    }
  }
  std::size_t failed = 0;
  std::exception_ptr first;
  std::optional<TileOverflow> worst;
  for (const auto& e : errors) {
    if (!e) continue;
    ++failed;
    if (!first) first = e;
    try {
      std::rethrow_exception(e);
    } catch (const DoesNotFit& d) {
      if (!worst || worse(d.overflow(), *worst)) worst = d.overflow();
    } catch (...) {
    }
  }
  if (!first) return out;
  try {
    std::rethrow_exception(first);
  } catch (const DoesNotFit& e) {
    TileOverflow o = *worst;
    o.tiles_over = static_cast<std::uint32_t>(failed);
    throw DoesNotFit(failed == 1 ? e.what() : std::string(e.what()) + " (and " + std::to_string(failed - 1) + " more tiles)",
                     o);
  } catch (const Error& e) {
    if (failed == 1) throw;
    throw Error(std::string(e.what()) + " (and " + std::to_string(failed - 1) + " more tiles)", e.exit_code());
  }
}

}  // namespace tilevit::compiler
