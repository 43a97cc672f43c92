#include "profile/trace.hpp"

#include <nlohmann/json.hpp>

namespace tilevit::profile {

std::string chrome_trace_json(const device::Timeline& timeline, const target::MachineDescription& machine,
                              const compiler::CompiledProgram& program) {
  const double us_per_cycle = 1e6 / double(machine.clock_hz);
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"ph", "M"}, {"pid", 0}, {"name", "process_name"}, {"args", {{"name", machine.name}}}});
  for (std::size_t tile = 0; tile < timeline.tiles.size(); ++tile) {
    if (timeline.tiles[tile].empty()) continue;
    events.push_back({{"ph", "M"}, {"pid", 0}, {"tid", tile}, {"name", "thread_name"},
                      {"args", {{"name", "tile " + std::to_string(tile)}}}});
    events.push_back({{"ph", "M"}, {"pid", 0}, {"tid", tile}, {"name", "thread_sort_index"},
                      {"args", {{"sort_index", tile}}}});
    for (const auto& i : timeline.tiles[tile]) {
      const bool repeat = i.activity == device::Activity::repeat;
      const std::string label = i.step < program.steps.size() ? program.steps[i.step].label : "";
      const std::string name = repeat ? "layers " + std::to_string(i.iteration + 1) + "-" +
                                            std::to_string(program.loop_count) + " (repeat remainder)"
                                      : std::string(device::activity_name(i.activity)) + " " + label;
      events.push_back({{"ph", "X"},
                        {"pid", 0},
                        {"tid", tile},
                        {"name", name},
                        {"cat", device::activity_name(i.activity)},
                        {"ts", double(i.start) * us_per_cycle},
                        {"dur", double(i.end - i.start) * us_per_cycle},
                        {"args",
                         {{"start_cycle", i.start}, {"end_cycle", i.end}, {"superstep", i.step}, {"iteration", i.iteration}}}});
    }
  }
  nlohmann::json trace{{"traceEvents", events}, {"displayTimeUnit", "ns"},
                       {"otherData", {{"clock_hz", machine.clock_hz}, {"span_cycles", timeline.span}}}};
  return trace.dump();
}

}  // namespace tilevit::profile
