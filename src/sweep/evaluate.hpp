#pragma once
// One sweep point, evaluated in-process through the compiler's API: the point's machine
// (the base with its machine keys applied), its model and plan; compile (with the plan
// search when optimization_steps > 0) and cost; optionally one call on the device model
// with the random test model, checked against the FP32 reference. The answer is the
// point's record (docs/SWEEP.md, "Point files"): figures on success, or the error's one
// line and exit code, so that a failed point never stops the sweep.
#include <nlohmann/json.hpp>

#include "sweep/points.hpp"
#include "target/machine.hpp"

namespace tilevit::sweep {

inline constexpr int kPointFormat = 1;

struct EvaluateOptions {
  std::uint32_t search_threads = 1;  // candidates the plan search compiles at once
};

// Never throws for a point's own failure (an invalid machine, a model that does not fit,
// an internal error): the record says "status": "failed" with the error. std::bad_alloc
// propagates.
nlohmann::json evaluate_point(const SweepSpec& spec, const target::MachineDescription& base, const SweepPoint& point,
                              const EvaluateOptions& options);

// The record's deterministic part: the record without its host timings (compile_seconds, seconds,
// device host seconds). Two evaluations of the same point agree on it.
nlohmann::json without_timings(nlohmann::json record);

}  // namespace tilevit::sweep
