#include "profile/trace.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace tilevit::profile {

std::string chrome_trace_json(const Profile& p) {
  // Times as whole nanoseconds, written in µs with a quarter-ns bias: an importer that
  // truncates and one that rounds both read back exactly these integers, so an event
  // ends exactly where its neighbour starts.
  const auto ns = [&](std::uint64_t cycle) {
    const unsigned __int128 scaled = static_cast<unsigned __int128>(cycle) * 1000000000u + p.clock_hz / 2;
    return static_cast<std::int64_t>(scaled / p.clock_hz);
  };
  const auto us = [](std::int64_t nanoseconds) { return (double(nanoseconds) + 0.25) / 1000.0; };
  nlohmann::json events = nlohmann::json::array();
  // One process per row group (a multi-chip profile: per chip, and the links), else one.
  std::vector<std::pair<std::size_t, std::size_t>> place(p.samples.size());  // row -> (pid, tid)
  std::vector<std::string> names{p.machine_name + ": " + p.model};
  if (!p.row_groups.empty()) {
    names.clear();
    std::size_t row = 0;
    for (std::size_t g = 0; g < p.row_groups.size(); ++g) {
      names.push_back(p.row_groups[g].name + " (" + p.machine_name + ": " + p.model + ")");
      for (std::uint32_t r = 0; r < p.row_groups[g].rows && row < place.size(); ++r) place[row++] = {g, r};
    }
  } else {
    for (std::size_t row = 0; row < place.size(); ++row) place[row] = {0, row};
  }
  for (std::size_t g = 0; g < names.size(); ++g) {
    events.push_back({{"ph", "M"}, {"pid", g}, {"name", "process_name"}, {"args", {{"name", names[g]}}}});
    events.push_back({{"ph", "M"}, {"pid", g}, {"name", "process_sort_index"}, {"args", {{"sort_index", g}}}});
  }
  for (std::size_t tile = 0; tile < p.samples.size(); ++tile) {
    if (p.samples[tile].empty()) continue;
    const auto [pid, tid] = place[tile];
    const bool link = !p.row_groups.empty() && p.row_groups[pid].name == kLinkRowGroup;
    events.push_back({{"ph", "M"}, {"pid", pid}, {"tid", tid}, {"name", "thread_name"},
                      {"args", {{"name", (link ? "link " : "tile ") + std::to_string(tid)}}}});
    events.push_back({{"ph", "M"}, {"pid", pid}, {"tid", tid}, {"name", "thread_sort_index"},
                      {"args", {{"sort_index", tid}}}});
    for (const Sample& s : p.samples[tile]) {
      const StepMeta& m = p.meta[s.meta];
      if (m.kind == SampleKind::idle) continue;  // gaps: keeps the trace small
      std::string name = m.kind == SampleKind::compute ? m.operation : std::string(to_string(m.kind)) + " " + m.phase;
      if (m.kind == SampleKind::repeat || m.kind == SampleKind::graph) name = m.phase;
      nlohmann::json args{{"start_cycle", s.start}, {"end_cycle", s.end}, {"phase", m.phase}};
      if (m.step != kNoStep) args["superstep"] = m.step;
      if (m.layer >= 0) args["layer"] = m.layer;
      if (!m.kernel.empty()) args["kernel"] = m.kernel;
      if (!m.shape.empty()) args["shape"] = m.shape;
      if (s.flops) args["flops"] = s.flops;
      // Kernel cycles no measurement covers (0: all calibrated; docs/FIDELITY.md).
      if (m.kind == SampleKind::compute || m.kind == SampleKind::graph) args["uncalibrated_cycles"] = s.uncalibrated_cycles;
      if (s.words_sent || s.words_received) {
        args["words_sent"] = s.words_sent;
        args["words_received"] = s.words_received;
      }
      events.push_back({{"ph", "X"},
                        {"pid", pid},
                        {"tid", tid},
                        {"name", name},
                        {"cat", m.kind == SampleKind::compute ? m.kernel : std::string(to_string(m.kind))},
                        {"ts", us(ns(s.start))},
                        {"dur", us(ns(s.end) - ns(s.start))},
                        {"args", std::move(args)}});
    }
  }
  nlohmann::json trace{{"traceEvents", std::move(events)},
                       {"displayTimeUnit", "ns"},
                       {"otherData",
                        {{"clock_hz", p.clock_hz},
                         {"span_cycles", p.span},
                         {"package_sha256", p.package_sha256},
                         {"granularity", compiler::to_string(p.options.granularity)}}}};
  return trace.dump();
}

}  // namespace tilevit::profile
