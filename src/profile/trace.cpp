#include "profile/trace.hpp"

#include <nlohmann/json.hpp>

namespace tilevit::profile {

std::string chrome_trace_json(const Profile& p) {
  const double us_per_cycle = 1e6 / double(p.clock_hz);
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"ph", "M"}, {"pid", 0}, {"name", "process_name"}, {"args", {{"name", p.machine_name + ": " + p.model}}}});
  for (std::size_t tile = 0; tile < p.samples.size(); ++tile) {
    if (p.samples[tile].empty()) continue;
    events.push_back({{"ph", "M"}, {"pid", 0}, {"tid", tile}, {"name", "thread_name"},
                      {"args", {{"name", "tile " + std::to_string(tile)}}}});
    events.push_back({{"ph", "M"}, {"pid", 0}, {"tid", tile}, {"name", "thread_sort_index"},
                      {"args", {{"sort_index", tile}}}});
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
      if (s.words_sent || s.words_received) {
        args["words_sent"] = s.words_sent;
        args["words_received"] = s.words_received;
      }
      events.push_back({{"ph", "X"},
                        {"pid", 0},
                        {"tid", tile},
                        {"name", name},
                        {"cat", m.kind == SampleKind::compute ? m.kernel : std::string(to_string(m.kind))},
                        {"ts", double(s.start) * us_per_cycle},
                        {"dur", double(s.end - s.start) * us_per_cycle},
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
