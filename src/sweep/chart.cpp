#include "sweep/chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "profile/html_escape.hpp"
#include "profile/png_canvas.hpp"

namespace tilevit::sweep {
namespace {

using profile::html_escape;
using profile::Rgb;

// Blue (little SRAM) to yellow (much), one colour per bin (viridis samples).
constexpr Rgb kBinColours[kSramBins] = {{68, 1, 84}, {65, 68, 135}, {42, 120, 142},
                                        {34, 168, 132}, {122, 209, 81}, {253, 231, 37}};
enum : std::uint8_t { kWhite, kText, kAxis, kGrid, kRing, kFirstBin };

// A round step (1, 2 or 5 x 10^k) giving about five ticks up to `max`.
double tick_step(double max) {
  if (!(max > 0)) return 1;
  const double raw = max / 5, power = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0})
    if (raw <= m * power) return m * power;
  return 10 * power;
}

std::string css_colour(const Rgb& c) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c[0], c[1], c[2]);
  return buf;
}

std::string x_label() { return "modelled latency per call (ms)"; }
std::string y_label() { return "throughput (images/s)"; }

}  // namespace

std::string short_number(double v) {
  char buf[32];
  if (v == std::floor(v) && std::fabs(v) < 1e9)
    std::snprintf(buf, sizeof buf, "%.0f", v);  // 40000, not 4e+04
  else
    std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

ChartData chart_data(const SweepSpec& spec, const MergedSweep& merged) {
  ChartData d;
  d.title = "tilevit sweep: " + std::to_string(merged.records.size()) + " points on " + spec.machine + ", " +
            std::to_string(merged.ok) + " compiled, " + std::to_string(merged.pareto) + " on the Pareto front";
  d.failed = merged.failed;
  d.missing = merged.missing;
  for (const auto& r : merged.records) {
    if (r["status"] != "ok") continue;
    std::string parameters;
    for (const auto& [key, value] : r["parameters"].items())
      parameters += (parameters.empty() ? "" : " ") + key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
    const Objectives o = objectives_of(r);
    d.points.push_back({r["index"].get<std::uint64_t>(), r["id"].get<std::string>(), parameters, o.latency_s * 1e3,
                        o.throughput, o.sram_bytes / (1024.0 * 1024.0), r["pareto"].get<bool>()});
  }
  return d;
}

ChartGeometry chart_geometry(const ChartData& data) {
  ChartGeometry g;
  double x = 0, y = 0;
  g.sram_min = data.points.empty() ? 0 : data.points[0].sram_mib;
  for (const ChartPoint& p : data.points) {
    x = std::max(x, p.latency_ms);
    y = std::max(y, p.throughput);
    g.sram_min = std::min(g.sram_min, p.sram_mib);
    g.sram_max = std::max(g.sram_max, p.sram_mib);
  }
  g.x_step = tick_step(x);
  g.y_step = tick_step(y);
  g.x_max = std::max(1.0, std::ceil(x / g.x_step)) * g.x_step;
  g.y_max = std::max(1.0, std::ceil(y / g.y_step)) * g.y_step;
  return g;
}

int ChartGeometry::x_of(double v) const {
  return left + static_cast<int>(std::lround(v / x_max * (width - left - right)));
}
int ChartGeometry::y_of(double v) const {
  return height - bottom - static_cast<int>(std::lround(v / y_max * (height - top - bottom)));
}
int ChartGeometry::bin_of(double sram) const {
  if (!(sram_max > sram_min)) return 0;
  return std::clamp(static_cast<int>((sram - sram_min) / (sram_max - sram_min) * kSramBins), 0, kSramBins - 1);
}
double ChartGeometry::bin_low(int bin) const { return sram_min + (sram_max - sram_min) * bin / kSramBins; }

namespace {

void png_axes(profile::PaletteCanvas& c, const ChartGeometry& g) {
  const int x0 = g.left, x1 = g.width - g.right, y0 = g.height - g.bottom, y1 = g.top;
  for (double v = 0; v <= g.x_max * 1.0000001; v += g.x_step) {
    const int x = g.x_of(v);
    c.line(x, y1, x, y0, kGrid);
    const std::string t = short_number(v);
    c.text(static_cast<unsigned>(x - 3 * static_cast<int>(t.size())), static_cast<unsigned>(y0 + 6), t, kText);
  }
  for (double v = 0; v <= g.y_max * 1.0000001; v += g.y_step) {
    const int y = g.y_of(v);
    c.line(x0, y, x1, y, kGrid);
    const std::string t = short_number(v);
    c.text(static_cast<unsigned>(x0 - 6 - 6 * static_cast<int>(t.size())), static_cast<unsigned>(y - 3), t, kText);
  }
  c.line(x0, y0, x1, y0, kAxis);
  c.line(x0, y0, x0, y1, kAxis);
  c.text(static_cast<unsigned>((x0 + x1) / 2 - 90), static_cast<unsigned>(y0 + 24), x_label(), kText);
  c.text(4, static_cast<unsigned>(y1 - 14), y_label(), kText);
}

void png_legend(profile::PaletteCanvas& c, const ChartGeometry& g) {
  const unsigned x = static_cast<unsigned>(g.width - g.right + 16);
  unsigned y = static_cast<unsigned>(g.top);
  c.text(x, y, "peak SRAM (MiB)", kText);
  for (int b = kSramBins - 1; b >= 0; --b) {
    y += 14;
    c.fill(x, y, 8, 8, static_cast<std::uint8_t>(kFirstBin + b));
    c.text(x + 14, y, "from " + short_number(g.bin_low(b)), kText);
  }
  y += 24;
  for (int i = 0; i < 360; i += 10) {
    const double a = i * 3.14159265358979 / 180;
    c.set(x + 4 + static_cast<unsigned>(std::lround(5 * std::cos(a)) + 1), y + 4 + static_cast<unsigned>(std::lround(5 * std::sin(a)) + 1), kRing);
  }
  c.text(x + 14, y + 1, "pareto front", kText);
}

void png_point(profile::PaletteCanvas& c, const ChartGeometry& g, const ChartPoint& p) {
  const int x = g.x_of(p.latency_ms), y = g.y_of(p.throughput);
  c.fill(static_cast<unsigned>(x - 2), static_cast<unsigned>(y - 2), 5, 5, static_cast<std::uint8_t>(kFirstBin + g.bin_of(p.sram_mib)));
  if (!p.pareto) return;
  for (int i = 0; i < 360; i += 6) {
    const double a = i * 3.14159265358979 / 180;
    const int px = x + static_cast<int>(std::lround(5 * std::cos(a))), py = y + static_cast<int>(std::lround(5 * std::sin(a)));
    if (px >= 0 && py >= 0) c.set(static_cast<unsigned>(px), static_cast<unsigned>(py), kRing);
  }
}

}  // namespace

std::vector<std::byte> render_pareto_png(const ChartData& data) {
  const ChartGeometry g = chart_geometry(data);
  profile::PaletteCanvas canvas(static_cast<unsigned>(g.width), static_cast<unsigned>(g.height), kWhite);
  canvas.text(8, 8, data.title, kText);
  png_axes(canvas, g);
  png_legend(canvas, g);
  for (const ChartPoint& p : data.points) png_point(canvas, g, p);
  for (const ChartPoint& p : data.points)  // rings on top
    if (p.pareto) png_point(canvas, g, p);
  std::vector<Rgb> palette = {{255, 255, 255}, {34, 34, 34}, {0, 0, 0}, {225, 225, 225}, {220, 20, 60}};
  palette.insert(palette.end(), std::begin(kBinColours), std::end(kBinColours));
  return profile::encode_palette_png(canvas, palette, "pareto.png");
}

namespace {

std::string svg_chart(const ChartData& data, const ChartGeometry& g) {
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(g.width) + "\" height=\"" +
                  std::to_string(g.height) + "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  const int x0 = g.left, x1 = g.width - g.right, y0 = g.height - g.bottom, y1 = g.top;
  const auto line = [&](int ax, int ay, int bx, int by, const char* colour) {
    s += "<line x1=\"" + std::to_string(ax) + "\" y1=\"" + std::to_string(ay) + "\" x2=\"" + std::to_string(bx) +
         "\" y2=\"" + std::to_string(by) + "\" stroke=\"" + colour + "\"/>\n";
  };
  const auto text = [&](int x, int y, const std::string& t, const char* anchor) {
    s += "<text x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) + "\" text-anchor=\"" + anchor + "\">" +
         html_escape(t) + "</text>\n";
  };
  for (double v = 0; v <= g.x_max * 1.0000001; v += g.x_step) {
    line(g.x_of(v), y1, g.x_of(v), y0, "#e1e1e1");
    text(g.x_of(v), y0 + 16, short_number(v), "middle");
  }
  for (double v = 0; v <= g.y_max * 1.0000001; v += g.y_step) {
    line(x0, g.y_of(v), x1, g.y_of(v), "#e1e1e1");
    text(x0 - 6, g.y_of(v) + 4, short_number(v), "end");
  }
  line(x0, y0, x1, y0, "#000");
  line(x0, y0, x0, y1, "#000");
  text((x0 + x1) / 2, y0 + 40, x_label(), "middle");
  text(x0, y1 - 12, y_label(), "start");
  for (const ChartPoint& p : data.points) {
    s += "<circle class=\"point" + std::string(p.pareto ? " pareto" : "") + "\" cx=\"" + std::to_string(g.x_of(p.latency_ms)) +
         "\" cy=\"" + std::to_string(g.y_of(p.throughput)) + "\" r=\"" + (p.pareto ? "5" : "3.5") + "\" fill=\"" +
         css_colour(kBinColours[g.bin_of(p.sram_mib)]) + "\"" + (p.pareto ? " stroke=\"#dc143c\" stroke-width=\"2\"" : "") +
         "><title>#" + std::to_string(p.index) + " " + html_escape(p.parameters) + ": " + short_number(p.latency_ms) +
         " ms, " + short_number(p.throughput) + " images/s, " + short_number(p.sram_mib) + " MiB" +
         (p.pareto ? " (Pareto front)" : "") + "</title></circle>\n";
  }
  int y = g.top;
  text(x1 + 16, y, "peak SRAM (MiB)", "start");
  for (int b = kSramBins - 1; b >= 0; --b) {
    y += 18;
    s += "<rect x=\"" + std::to_string(x1 + 16) + "\" y=\"" + std::to_string(y - 9) + "\" width=\"10\" height=\"10\" fill=\"" +
         css_colour(kBinColours[b]) + "\"/>\n";
    text(x1 + 32, y, "from " + short_number(g.bin_low(b)), "start");
  }
  s += "<circle cx=\"" + std::to_string(x1 + 21) + "\" cy=\"" + std::to_string(y + 22) +
       "\" r=\"5\" fill=\"none\" stroke=\"#dc143c\" stroke-width=\"2\"/>\n";
  text(x1 + 32, y + 26, "Pareto front", "start");
  return s + "</svg>\n";
}

std::string html_table(const ChartData& data, bool pareto_only) {
  std::string s = "<table><tr><th>#</th><th>id</th><th>parameters</th><th>latency (ms)</th><th>images/s</th>"
                  "<th>peak SRAM (MiB)</th><th>Pareto</th></tr>\n";
  for (const ChartPoint& p : data.points) {
    if (pareto_only && !p.pareto) continue;
    s += "<tr><td>" + std::to_string(p.index) + "</td><td>" + p.id + "</td><td>" + html_escape(p.parameters) + "</td><td>" +
         short_number(p.latency_ms) + "</td><td>" + short_number(p.throughput) + "</td><td>" + short_number(p.sram_mib) +
         "</td><td>" + (p.pareto ? "yes" : "") + "</td></tr>\n";
  }
  return s + "</table>\n";
}

}  // namespace

std::string render_pareto_html(const ChartData& data) {
  const ChartGeometry g = chart_geometry(data);
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + html_escape(data.title) +
         "</title>\n<style>body{font-family:sans-serif;margin:16px}table{border-collapse:collapse;font-size:12px}"
         "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}</style></head><body>\n<h1>" +
         html_escape(data.title) + "</h1>\n<p>Failed points: " + std::to_string(data.failed) +
         "; missing: " + std::to_string(data.missing) +
         ". Hover a point for its parameters. Front: no other point has lower or equal latency, higher or equal "
         "throughput and lower or equal peak SRAM, one of them strictly.</p>\n" +
         svg_chart(data, g) + "<h2>Pareto front</h2>\n" + html_table(data, true) + "<h2>All compiled points</h2>\n" +
         html_table(data, false) + "</body></html>\n";
}

}  // namespace tilevit::sweep
