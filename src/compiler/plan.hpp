#pragma once
// A plan: every choice of the mapping that a user or the plan search may fix. The per-op
// pins (gemm_plan.hpp: GEMM grids, attention blocks, tile offsets, split LayerNorms,
// FP8-output GELUs, FP8 attention) and the exchange stream words W. One type carries it
// everywhere: the plan search's candidates, plan files (plan_file.hpp), a pipeline stage's
// plan (system/pipeline.hpp) and the compiler's options (CompileOptions). Each lever is
// described once, in the lever table (levers.hpp).
#include <cstdint>
#include <string>

#include "compiler/gemm_plan.hpp"

namespace tilevit::compiler {

// W: no tile sends or receives more words than this in one exchange wave.
inline constexpr std::uint32_t kDefaultStreamWords = 1024;
inline constexpr std::uint32_t kMinStreamWords = 16, kMaxStreamWords = 1u << 20;

struct Plan {
  PlanPins pins;  // ops without a pin are planned by the compiler's estimate
  std::uint32_t exchange_stream_words = kDefaultStreamWords;
  // Canonical text of the plan (the lever table's order): tells duplicates apart and
  // breaks ties between equally fast plans, so a choice never depends on the order
  // candidates finished in.
  std::string key() const;
};

}  // namespace tilevit::compiler
