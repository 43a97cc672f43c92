#pragma once
// Merging a sweep: every point's record in index order (a point without a finished
// record is "missing"), the Pareto front of the points that compiled, and the merged
// sweep.csv and sweep.json beside the chart (chart.hpp). Front: no other point is at
// least as good on all three of modelled latency (lower), throughput (higher) and peak
// SRAM use summed over tiles (lower), and better on one.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sweep/sweep_dir.hpp"

namespace tilevit::sweep {

struct Objectives {
  double latency_s = 0, throughput = 0, sram_bytes = 0;
};

// Indices of the non-dominated entries, ascending. Equal entries are all on the front.
std::vector<std::size_t> pareto_front(const std::vector<Objectives>& points);

struct MergedSweep {
  std::vector<nlohmann::json> records;  // one per point, index order; each gains "pareto": bool
  std::uint64_t ok = 0, failed = 0, missing = 0, pareto = 0;
};

MergedSweep merge_records(const SweepDirectory& sweep);

// The merged table: one row per point, the spec's axes as columns after index, id and
// status, then the figures (docs/SWEEP.md, "Merged outputs").
std::string merged_csv(const SweepSpec& spec, const MergedSweep& merged);
nlohmann::json merged_json(const SweepSpec& spec, const MergedSweep& merged);

struct MergeOutputs {
  std::string csv, json, png, html;
};
// Writes sweep.csv, sweep.json, pareto.png and pareto.html into the sweep directory.
MergeOutputs write_merged(const SweepDirectory& sweep, const MergedSweep& merged);

// A record's objectives (it must be "ok").
Objectives objectives_of(const nlohmann::json& record);

}  // namespace tilevit::sweep
