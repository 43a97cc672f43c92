#pragma once
// The sweep's Pareto chart: modelled latency (x) against throughput (y), each point
// coloured by its peak SRAM use summed over tiles, the Pareto front ringed. As a PNG
// (libpng through profile::PaletteCanvas, like memory.png) and as a standalone HTML page
// (inline SVG with a tooltip per point, and tables of the front and of every point; no
// script, no network). Both draw from the same ChartData and ChartGeometry.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sweep/merge.hpp"

namespace tilevit::sweep {

struct ChartPoint {
  std::uint64_t index = 0;
  std::string id, parameters;  // parameters: "tiles=736 batch=2"
  double latency_ms = 0, throughput = 0, sram_mib = 0;
  bool pareto = false;
};

struct ChartData {
  std::string title;
  std::vector<ChartPoint> points;  // the points that compiled, index order
  std::uint64_t failed = 0, missing = 0;
};

ChartData chart_data(const SweepSpec& spec, const MergedSweep& merged);

inline constexpr int kSramBins = 6;

// Plot area, axis ranges (0 to a round maximum) and ticks, shared by PNG and HTML.
struct ChartGeometry {
  int width = 960, height = 640, left = 90, right = 190, top = 44, bottom = 64;
  double x_max = 1, y_max = 1, x_step = 1, y_step = 1;
  double sram_min = 0, sram_max = 0;
  int x_of(double latency_ms) const;
  int y_of(double throughput) const;
  int bin_of(double sram_mib) const;  // 0 .. kSramBins-1
  double bin_low(int bin) const;      // lower edge of a bin, MiB
};
ChartGeometry chart_geometry(const ChartData& data);

std::vector<std::byte> render_pareto_png(const ChartData& data);
std::string render_pareto_html(const ChartData& data);

// "12.5", "0.25", "1.2e+04": a tick or table number.
std::string short_number(double v);

}  // namespace tilevit::sweep
