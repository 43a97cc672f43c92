#pragma once
// The program in time: the steps before the loop, the loop body loop_count times, the
// steps after it. Everything that follows the program's execution (statistics, the
// device model, profiles, inspect, the verifier's per-iteration ranges) walks it here.
#include <algorithm>
#include <cstdint>

#include "compiler/program.hpp"

namespace tilevit::compiler {

inline bool in_loop(const CompiledProgram& p, std::uint32_t step) { return step >= p.loop_begin && step < p.loop_end; }
// How many times a call executes the superstep.
inline std::uint32_t executions(const CompiledProgram& p, std::uint32_t step) {
  return in_loop(p, step) ? p.loop_count : 1;
}
// The layer (loop iteration) of an execution, -1 outside the loop.
inline std::int32_t layer_of(const CompiledProgram& p, std::uint32_t step, std::uint32_t iteration) {
  return in_loop(p, step) ? static_cast<std::int32_t>(iteration) : -1;
}

// Calls visit(step, iteration) for every executed superstep in time order (iteration 0
// outside the loop), and loop_done() once after the loop's last iteration. Loop bounds
// outside the program (a package the verifier rejects) are clamped, never overrun.
template <typename Visit, typename LoopDone>
void walk_program(const CompiledProgram& p, Visit&& visit, LoopDone&& loop_done) {
  const auto steps = static_cast<std::uint32_t>(p.steps.size());
  const std::uint32_t end = std::min(p.loop_end, steps), begin = std::min(p.loop_begin, end);
  for (std::uint32_t s = 0; s < begin; ++s) visit(s, 0u);
  for (std::uint32_t it = 0; it < p.loop_count && begin < end; ++it)
    for (std::uint32_t s = begin; s < end; ++s) visit(s, it);
  loop_done();
  for (std::uint32_t s = end; s < steps; ++s) visit(s, 0u);
}
template <typename Visit>
void walk_program(const CompiledProgram& p, Visit&& visit) {
  walk_program(p, visit, [] {});
}

}  // namespace tilevit::compiler
