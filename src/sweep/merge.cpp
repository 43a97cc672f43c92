#include "sweep/merge.hpp"

#include <algorithm>
#include <filesystem>

#include "support/atomic_file.hpp"
#include "sweep/chart.hpp"

namespace tilevit::sweep {
namespace {

using nlohmann::json;

// Columns after the axes (CSV header, the record's field; "a.b" reads a nested one); a
// column that is also an axis appears once, among the axes.
constexpr const char* kFigureColumns[][2] = {
    {"machine", "machine"},
    {"model", "model"},
    {"layers", "layers"},
    {"batch", "batch"},
    {"tiles", "tiles"},
    {"clock_hz", "clock_hz"},
    {"estimated_cycles", "estimated_cycles"},
    {"compute_cycles", "compute_cycles"},
    {"exchange_cycles", "exchange_cycles"},
    {"sync_cycles", "sync_cycles"},
    {"latency_s", "latency_s"},
    {"throughput_images_per_s", "throughput_images_per_s"},
    {"tiles_used", "tiles_used"},
    {"peak_sram_tile_bytes", "peak_sram_tile_bytes"},
    {"gemm_tile_bytes_cap", "gemm_tile_bytes_cap"},
    {"peak_sram_total_bytes", "peak_sram_total_bytes"},
    {"sram_total_bytes", "sram_total_bytes"},
    {"calibrated_share", "calibrated_share"},
    {"device_cycles", "device.cycles"},
    {"device_min_cosine", "device.min_cosine"},
    {"compile_seconds", "compile_seconds"},
    {"seconds", "seconds"},
    {"pareto", "pareto"},
    {"exit_code", "error.exit_code"},
    {"error", "error.message"},
};

const json* field(const json& record, const std::string& path) {
  const json* at = &record;
  std::size_t from = 0;
  for (std::size_t dot; (dot = path.find('.', from)) != std::string::npos; from = dot + 1) {
    const auto it = at->find(path.substr(from, dot - from));
    if (it == at->end()) return nullptr;
    at = &*it;
  }
  const auto it = at->find(path.substr(from));
  return it == at->end() ? nullptr : &*it;
}

// RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled.
std::string csv_field(const json* v) {
  if (v == nullptr || v->is_null()) return "";
  const std::string text = v->is_string() ? v->get<std::string>() : v->dump();
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

Objectives objectives_of(const json& r) {
  return {r["latency_s"].get<double>(), r["throughput_images_per_s"].get<double>(),
          static_cast<double>(r["peak_sram_total_bytes"].get<std::uint64_t>())};
}

std::vector<std::size_t> pareto_front(const std::vector<Objectives>& p) {
  const auto dominates = [](const Objectives& a, const Objectives& b) {
    const bool no_worse = a.latency_s <= b.latency_s && a.throughput >= b.throughput && a.sram_bytes <= b.sram_bytes;
    const bool better = a.latency_s < b.latency_s || a.throughput > b.throughput || a.sram_bytes < b.sram_bytes;
    return no_worse && better;
  };
  std::vector<std::size_t> front;
  for (std::size_t i = 0; i < p.size(); ++i) {
    bool dominated = false;
    for (std::size_t j = 0; j < p.size() && !dominated; ++j) dominated = dominates(p[j], p[i]);
    if (!dominated) front.push_back(i);
  }
  return front;
}

MergedSweep merge_records(const SweepDirectory& sweep) {
  MergedSweep m;
  std::vector<Objectives> objectives;
  std::vector<std::size_t> ok_records;
  for (std::uint64_t i = 0; i < sweep.point_count(); ++i) {
    const SweepPoint p = sweep.point(i);
    json r = sweep.finished(p).value_or(json{{"tilevit_sweep_point", kPointFormat},
                                             {"index", p.index},
                                             {"id", p.id},
                                             {"parameters", parameters_json(sweep.spec(), p)},
                                             {"status", "missing"}});
    r["pareto"] = false;
    if (r["status"] == "ok") {
      ++m.ok;
      objectives.push_back(objectives_of(r));
      ok_records.push_back(m.records.size());
    } else {
      ++(r["status"] == "failed" ? m.failed : m.missing);
    }
    m.records.push_back(std::move(r));
  }
  for (const std::size_t k : pareto_front(objectives)) m.records[ok_records[k]]["pareto"] = true;
  m.pareto = pareto_front(objectives).size();
  return m;
}

std::string merged_csv(const SweepSpec& spec, const MergedSweep& merged) {
  std::string out = "index,id,status";
  for (const Axis& a : spec.axes) out += "," + a.key;
  const auto swept = [&](const char* column) {
    return std::any_of(spec.axes.begin(), spec.axes.end(), [&](const Axis& a) { return a.key == column; });
  };
  for (const auto& c : kFigureColumns)
    if (!swept(c[0])) out += std::string(",") + c[0];
  out += "\n";
  for (const json& r : merged.records) {
    out += csv_field(field(r, "index")) + "," + csv_field(field(r, "id")) + "," + csv_field(field(r, "status"));
    for (const Axis& a : spec.axes) out += "," + csv_field(field(r["parameters"], a.key));
    for (const auto& c : kFigureColumns)
      if (!swept(c[0])) out += "," + csv_field(field(r, c[1]));
    out += "\n";
  }
  return out;
}

json merged_json(const SweepSpec& spec, const MergedSweep& merged) {
  return {{"tilevit_sweep_merged", kPointFormat},
          {"spec", to_json(spec)},
          {"points", merged.records.size()},
          {"ok", merged.ok},
          {"failed", merged.failed},
          {"missing", merged.missing},
          {"pareto", merged.pareto},
          {"records", merged.records}};
}

MergeOutputs write_merged(const SweepDirectory& sweep, const MergedSweep& merged) {
  const std::filesystem::path dir(sweep.path());
  MergeOutputs out{(dir / "sweep.csv").string(), (dir / "sweep.json").string(), (dir / "pareto.png").string(),
                   (dir / "pareto.html").string()};
  write_text_atomically(out.csv, merged_csv(sweep.spec(), merged));
  write_text_atomically(out.json, merged_json(sweep.spec(), merged).dump(1) + "\n");
  const ChartData chart = chart_data(sweep.spec(), merged);
  write_bytes_atomically(out.png, render_pareto_png(chart));
  write_text_atomically(out.html, render_pareto_html(chart));
  return out;
}

}  // namespace tilevit::sweep
