#include "device/timeline.hpp"

#include <algorithm>

#include "compiler/compile.hpp"

namespace tilevit::device {

const char* activity_name(Activity a) {
  switch (a) {
    case Activity::compute: return "compute";
    case Activity::idle: return "idle";
    case Activity::sync: return "sync";
    case Activity::exchange: return "exchange";
    case Activity::repeat: return "repeat";
  }
  return "?";
}

namespace {

struct Builder {
  const target::MachineDescription& m;
  Timeline& t;
  bool detail = true;

  void add(std::uint32_t tile, std::uint64_t start, std::uint64_t end, Activity a, std::uint32_t step, std::uint32_t it) {
    if (end <= start) return;
    t.tile_cycles[static_cast<std::size_t>(a)] += end - start;
    if (!detail) return;
    auto& list = t.tiles[tile];
    if (!list.empty() && list.back().activity == a && list.back().end == start && list.back().step == step &&
        list.back().iteration == it) {
      list.back().end = end;  // merge with the previous interval of the same kind
      return;
    }
    list.push_back(Interval{start, end, a, step, it});
  }

  // One superstep starting at cycle `at`; returns its end.
  std::uint64_t step(const compiler::Superstep& s, std::uint32_t index, std::uint32_t it, std::uint64_t at) {
    const auto busy = compiler::tile_compute_cycles(m, s);
    const std::uint64_t compute = *std::max_element(busy.begin(), busy.end());
    for (std::uint32_t tile = 0; tile < m.tiles; ++tile) {
      add(tile, at, at + busy[tile], Activity::compute, index, it);
      add(tile, at + busy[tile], at + compute, Activity::idle, index, it);
    }
    at += compute;
    if (s.exchange.empty()) return at;
    for (std::uint32_t tile = 0; tile < m.tiles; ++tile) add(tile, at, at + m.sync_cycles, Activity::sync, index, it);
    at += m.sync_cycles;
    for (const auto& cycles : compiler::tile_wave_cycles(m, s)) {
      const std::uint64_t length = *std::max_element(cycles.begin(), cycles.end());
      for (std::uint32_t tile = 0; tile < m.tiles; ++tile) {
        add(tile, at, at + cycles[tile], Activity::exchange, index, it);
        add(tile, at + cycles[tile], at + length, Activity::idle, index, it);
      }
      at += length;
    }
    return at;
  }
};

}  // namespace

Timeline build_timeline(const target::MachineDescription& m, const compiler::CompiledProgram& p,
                        std::uint32_t iterations_in_detail) {
  Timeline t;
  t.tiles.resize(m.tiles);
  Builder b{m, t};
  std::uint64_t at = 0;
  for (std::uint32_t s = 0; s < p.loop_begin; ++s) at = b.step(p.steps[s], s, 0, at);
  std::uint64_t repeat_start = 0;
  for (std::uint32_t it = 0; it < p.loop_count; ++it) {
    b.detail = it < iterations_in_detail;
    if (it == iterations_in_detail) repeat_start = at;
    for (std::uint32_t s = p.loop_begin; s < p.loop_end; ++s) at = b.step(p.steps[s], s, it, at);
  }
  if (iterations_in_detail < p.loop_count)  // one "repeat remainder" interval per tile
    for (auto& list : t.tiles) list.push_back(Interval{repeat_start, at, Activity::repeat, p.loop_begin, iterations_in_detail});
  b.detail = true;
  for (std::uint32_t s = p.loop_end; s < p.steps.size(); ++s) at = b.step(p.steps[s], s, 0, at);
  t.span = at;
  return t;
}

}  // namespace tilevit::device
