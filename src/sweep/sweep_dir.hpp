#pragma once
// A sweep directory (docs/SWEEP.md, "Directory"): spec.json (the canonical spec, which
// run-point and merge read), points/<index>-<id>.json (one record per finished point,
// written atomically), the merged sweep.csv, sweep.json, pareto.png, pareto.html, and
// slurm/ (the job scripts and task logs of a --slurm run). A point is finished when its
// file holds a record with its id; a rerun skips it.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sweep/evaluate.hpp"
#include "sweep/points.hpp"

namespace tilevit::sweep {

inline constexpr std::size_t kMaxPointFileBytes = 1 << 20;

class SweepDirectory {
 public:
  // Creates `dir` and dir/points as needed and writes spec.json for `spec`; a directory
  // whose spec.json is another spec (or unreadable) is refused (Error(kExitBadInput)
  // naming it), so that one directory never mixes two specs' points.
  static SweepDirectory create(const std::string& dir, const SweepSpec& spec);
  // Reads dir/spec.json (Error(kExitBadInput) naming it when missing or invalid).
  static SweepDirectory open(const std::string& dir);

  const std::string& path() const { return dir_; }
  const SweepSpec& spec() const { return spec_; }
  const target::MachineDescription& base() const { return base_; }
  std::uint64_t point_count() const { return spec_.point_count(); }
  SweepPoint point(std::uint64_t index) const { return point_at(spec_, base_text_, index); }
  std::string point_path(const SweepPoint& point) const;
  // The point's record if it is finished (its file exists, parses and names its id).
  std::optional<nlohmann::json> finished(const SweepPoint& point) const;
  void write_record(const SweepPoint& point, const nlohmann::json& record) const;

 private:
  SweepDirectory(std::string dir, SweepSpec spec);
  std::string dir_;
  SweepSpec spec_;
  target::MachineDescription base_;
  std::string base_text_;
};

struct RunOptions {
  std::uint32_t workers = 1;      // points evaluated at once, each on one host thread
  bool retry_failed = false;      // evaluate again points whose record is a failure
  std::function<void(const std::string&)> progress;  // one line per point, may be empty
};

struct RunSummary {
  std::uint64_t evaluated = 0, skipped = 0, failed = 0;  // failed: of those evaluated
  double seconds = 0;
  std::vector<double> point_seconds;  // of the points evaluated, in index order
};

// Evaluates the listed points that are not finished, `workers` at a time; each record is
// written as soon as its point is done. Records do not depend on the worker count.
RunSummary run_points(const SweepDirectory& sweep, const std::vector<std::uint64_t>& indices, const RunOptions& options);

// Indices first, first + stride, ... below `count` (an MPI rank's share of the points).
std::vector<std::uint64_t> strided_indices(std::uint64_t count, std::uint64_t first, std::uint64_t stride);

}  // namespace tilevit::sweep
