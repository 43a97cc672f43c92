#include "profile/system_profile.hpp"

#include <algorithm>

#include "support/error.hpp"

namespace tilevit::profile {
namespace {

// Fills the gaps of a row over [0, span] with idle samples of meta `idle`.
void fill_idle(std::vector<Sample>& row, std::uint32_t idle, std::uint64_t span) {
  std::vector<Sample> out;
  std::uint64_t at = 0;
  for (const Sample& s : row) {
    if (s.start > at) out.push_back(Sample{at, s.start, idle});
    out.push_back(s);
    at = s.end;
  }
  if (span > at) out.push_back(Sample{at, span, idle});
  row = std::move(out);
}

}  // namespace

Profile system_profile(const std::string& machine_name, const std::vector<Profile>& stages,
                       const std::vector<SystemLinkRun>& links, const std::vector<std::vector<std::uint64_t>>& starts,
                       std::uint64_t span) {
  if (stages.empty() || links.size() + 1 != stages.size())
    throw Error("system profile: " + std::to_string(stages.size()) + " stages and " + std::to_string(links.size()) + " links",
                kExitInternal);
  const Profile& first = stages.front();
  Profile p;
  p.machine_name = machine_name;
  p.clock_hz = first.clock_hz;
  p.flop_per_cycle_fp16 = first.flop_per_cycle_fp16;
  p.flop_per_cycle_fp8 = first.flop_per_cycle_fp8;
  p.options = first.options;
  p.span = span;
  std::uint32_t steps_per_batch = 0;
  for (const Profile& s : stages) steps_per_batch += s.steps;
  const std::uint32_t batches = static_cast<std::uint32_t>(starts.size());
  p.steps = steps_per_batch * batches + std::uint32_t(links.size()) * batches;
  const std::uint32_t idle = static_cast<std::uint32_t>(p.meta.size());
  p.meta.push_back(StepMeta{SampleKind::idle});
  std::uint32_t step_offset = 0, chip = 0;
  for (std::size_t s = 0; s < stages.size(); ++s, ++chip) {
    const Profile& stage = stages[s];
    const std::size_t first_row = p.samples.size();
    p.samples.resize(first_row + stage.tiles);
    for (std::uint32_t i = 0; i < batches; ++i) {
      if (starts[i].size() != stages.size()) throw Error("system profile: a micro-batch's starts", kExitInternal);
      // This stage's meta for micro-batch i: phases named by chip and micro-batch, steps made unique.
      const std::uint32_t base = static_cast<std::uint32_t>(p.meta.size());
      for (StepMeta m : stage.meta) {
        if (m.kind != SampleKind::idle) {
          m.phase = "chip " + std::to_string(chip) + ", micro-batch " + std::to_string(i) + ": " + m.phase;
          if (m.step != kNoStep) m.step += i * steps_per_batch + step_offset;
        }
        p.meta.push_back(std::move(m));
      }
      const std::uint64_t at = starts[i][s];
      for (std::uint32_t t = 0; t < stage.tiles; ++t)
        for (Sample x : stage.samples[t]) {
          if (stage.meta[x.meta].kind == SampleKind::idle) continue;  // refilled below
          x.start += at, x.end += at, x.meta += base;
          p.samples[first_row + t].push_back(x);
        }
    }
    for (std::size_t k = 0; k < kSampleKinds; ++k)
      if (SampleKind(k) != SampleKind::idle) p.tile_cycles[k] += stage.tile_cycles[k] * batches;
    p.uncalibrated_compute_cycles += stage.uncalibrated_compute_cycles * batches;
    if (!stage.tile_peak_bytes.empty()) {
      p.tile_peak_bytes.resize(first_row, 0);
      p.tile_peak_bytes.insert(p.tile_peak_bytes.end(), stage.tile_peak_bytes.begin(), stage.tile_peak_bytes.end());
    }
    const bool looped = stage.loop_end > stage.loop_begin;
    p.row_groups.push_back({"chip " + std::to_string(chip), stage.tiles, looped ? stage.loop_count : 0});
    for (const Profile::OperationBound& b : stage.operation_bounds)  // the stage's ops, on this chip, every micro-batch
      p.operation_bounds.push_back({b.name, b.tile_cycles * batches, std::uint32_t(s)});
    step_offset += stage.steps;
  }
  // A row per link: each micro-batch's transfer after its stage's span on the sending chip.
  for (std::size_t l = 0; l < links.size(); ++l) {
    std::vector<Sample>& row = p.samples.emplace_back();
    for (std::uint32_t i = 0; i < batches; ++i) {
      const std::uint32_t meta = static_cast<std::uint32_t>(p.meta.size());
      p.meta.push_back(StepMeta{SampleKind::exchange, steps_per_batch * batches + i * std::uint32_t(links.size()) + std::uint32_t(l),
                                -1, links[l].name + ", micro-batch " + std::to_string(i), "", "", std::to_string(links[l].bytes) + " B"});
      const std::uint64_t begin = starts[i][l] + stages[l].span;
      const std::uint32_t words = static_cast<std::uint32_t>(std::min<std::uint64_t>(links[l].bytes / 4, UINT32_MAX));
      if (links[l].cycles > 0) row.push_back(Sample{begin, begin + links[l].cycles, meta, words, 0});
      p.tile_cycles[std::size_t(SampleKind::exchange)] += links[l].cycles;
    }
  }
  if (!links.empty()) p.row_groups.push_back({kLinkRowGroup, std::uint32_t(links.size())});
  if (!p.tile_peak_bytes.empty()) p.tile_peak_bytes.resize(p.samples.size(), 0);
  p.tiles = static_cast<std::uint32_t>(p.samples.size());
  for (auto& row : p.samples) {
    std::stable_sort(row.begin(), row.end(), [](const Sample& a, const Sample& b) { return a.start < b.start; });
    fill_idle(row, idle, span);
    for (const Sample& x : row)
      if (x.meta == idle) p.tile_cycles[std::size_t(SampleKind::idle)] += x.end - x.start;
  }
  return p;
}

}  // namespace tilevit::profile
