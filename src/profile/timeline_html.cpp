#include "profile/timeline_html.hpp"

#include <bit>
#include <cstring>
#include <string_view>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "profile/bounds.hpp"
#include "profile/html_escape.hpp"
#include "profile/rows.hpp"
#include "profile/web_page.hpp"
#include "support/error.hpp"
#include "target/model_validation.hpp"

// The page parts, compiled in from src/profile/web/ (src/profile/CMakeLists.txt).
namespace tilevit::profile::web {
extern const std::string_view columns_js, timeline_html, timeline_css, timeline_data_js, timeline_draw_js, timeline_panels_js,
    timeline_ui_js;
}

namespace tilevit::profile {
namespace {

static_assert(std::endian::native == std::endian::little, "columns are written little-endian");

// Our own names, in SampleKind order (the page indexes them by the enum value).
constexpr const char* kKindNames[kSampleKinds] = {"compute", "idle", "sync", "exchange", "repeat", "graph"};

std::string base64(const std::string& bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const std::uint32_t v = std::uint32_t(std::uint8_t(bytes[i])) << 16 | std::uint32_t(std::uint8_t(bytes[i + 1])) << 8 |
                            std::uint8_t(bytes[i + 2]);
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (i < bytes.size()) {
    const bool two = i + 1 < bytes.size();
    const std::uint32_t v = std::uint32_t(std::uint8_t(bytes[i])) << 16 | (two ? std::uint32_t(std::uint8_t(bytes[i + 1])) << 8 : 0);
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += two ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

// A column of unsigned integers in the narrowest typed array that holds its maximum
// (u8/u16/u32, else f64, exact to 2^53): keeps the main job's page a few MB.
template <typename T>
void append_as(std::string& bytes, const std::vector<std::uint64_t>& values) {
  bytes.resize(values.size() * sizeof(T));
  for (std::size_t i = 0; i < values.size(); ++i) {
    const T v = T(values[i]);
    std::memcpy(bytes.data() + i * sizeof(T), &v, sizeof(T));
  }
}

nlohmann::json column(const std::vector<std::uint64_t>& values) {
  std::uint64_t max = 0;
  for (const auto v : values) max = std::max(max, v);
  if (max >= (std::uint64_t(1) << 53)) throw Error("profile value " + std::to_string(max) + " exceeds 2^53");
  std::string bytes, type;
  if (max <= UINT8_MAX) type = "u8", append_as<std::uint8_t>(bytes, values);
  else if (max <= UINT16_MAX) type = "u16", append_as<std::uint16_t>(bytes, values);
  else if (max <= UINT32_MAX) type = "u32", append_as<std::uint32_t>(bytes, values);
  else type = "f64", append_as<double>(bytes, values);
  return {{"type", type}, {"length", values.size()}, {"base64", base64(bytes)}};
}

struct PayloadKey {
  std::uint32_t meta, sent, received;
  std::uint64_t flops, uncalibrated;
  bool operator==(const PayloadKey&) const = default;
};
struct PayloadHash {
  std::size_t operator()(const PayloadKey& k) const {
    std::uint64_t h = k.meta * 0x9E3779B97F4A7C15ull;
    h ^= (std::uint64_t(k.sent) << 32 | k.received) + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
    h ^= k.flops + 0x85EBCA77C2B2AE63ull + (h << 6) + (h >> 2);
    h ^= k.uncalibrated + 0xC2B2AE3D27D4EB4Full + (h << 6) + (h >> 2);
    return std::size_t(h);
  }
};

}  // namespace

nlohmann::json timeline_data_json(const Profile& p, const TimelinePeaks& peaks) {
  if (p.samples.size() != p.tiles)
    throw Error("profile: " + std::to_string(p.samples.size()) + " sample lists for " + std::to_string(p.tiles) + " tiles");
  nlohmann::json j;
  j["schema_version"] = 1;
  j["machine"] = p.machine_name;
  j["tiles"] = p.tiles;
  j["clock_hz"] = p.clock_hz;
  j["package_sha256"] = p.package_sha256;
  j["model"] = p.model;
  j["plan"] = p.plan;
  // How far the whole-program model is from the original's measured builds (docs/FIDELITY.md).
  j["model_validation"] = target::model_validation_line();
  j["granularity"] = std::string(compiler::to_string(p.options.granularity));
  j["iterations_in_detail"] = p.options.iterations_in_detail;
  j["loop"] = {p.loop_begin, p.loop_end, p.loop_count};
  j["steps"] = p.steps;
  j["span"] = p.span;
  j["kinds"] = kKindNames;
  j["tile_cycles"] = p.tile_cycles;
  j["uncalibrated_compute_cycles"] = p.uncalibrated_compute_cycles;
  if (const BoundReport bounds = bound_report(p); bounds.available) {  // ideal against achieved, whole call
    nlohmann::json ops = nlohmann::json::object();
    for (const BoundRow& b : bounds.operations) ops[b.key] = {b.achieved, b.bound};
    nlohmann::json steps = nlohmann::json::array();  // in time order; cycles of the whole call
    for (const BoundRow& b : bounds.steps) steps.push_back({b.key, b.achieved, b.bound});
    j["bounds"] = {{"call", {p.span, bounds.call_bound}}, {"operations", std::move(ops)}, {"steps", std::move(steps)}};
  }
  if (!p.row_groups.empty()) {  // a multi-chip profile: rows by chip (each with its loop), then the links
    nlohmann::json groups = nlohmann::json::array();
    for (const auto& g : p.row_groups) groups.push_back({g.name, g.rows, g.loop_count});
    j["row_groups"] = std::move(groups);
    j["rows_text"] = rows_text(p);
  }
  j["peak_flops_per_tile_cycle"] = {{"fp16", peaks.fp16_flops_per_tile_cycle}, {"fp8", peaks.fp8_flops_per_tile_cycle}};
  // Meta rows as arrays (kind, step, layer, phase, kernel, operation, shape): compact.
  nlohmann::json meta = nlohmann::json::array();
  for (const auto& m : p.meta) {
    if (std::size_t(m.kind) >= kSampleKinds) throw Error("profile: bad sample kind");
    meta.push_back({std::size_t(m.kind), m.step == kNoStep ? std::int64_t(-1) : std::int64_t(m.step), m.layer, m.phase,
                    m.kernel, m.operation, m.shape});
  }
  j["meta"] = std::move(meta);

  // Samples: tile-major (offsets per tile), start + duration + an index into the table of
  // distinct (meta, words sent, words received, FLOPs, uncalibrated cycles): the same step on
  // many tiles shares one.
  std::vector<std::uint64_t> offsets{0}, start, duration, payload;
  std::vector<std::uint64_t> p_meta, p_sent, p_received, p_flops, p_uncalibrated;
  std::unordered_map<PayloadKey, std::uint32_t, PayloadHash> interned;
  for (const auto& tile : p.samples) {
    for (const auto& s : tile) {
      if (s.meta >= p.meta.size()) throw Error("profile: sample meta " + std::to_string(s.meta) + " out of range");
      if (s.end < s.start) throw Error("profile: sample ends before it starts");
      const PayloadKey key{s.meta, s.words_sent, s.words_received, s.flops, s.uncalibrated_cycles};
      const auto [it, added] = interned.try_emplace(key, std::uint32_t(p_meta.size()));
      if (added) {
        p_meta.push_back(s.meta);
        p_sent.push_back(s.words_sent);
        p_received.push_back(s.words_received);
        p_flops.push_back(s.flops);
        p_uncalibrated.push_back(s.uncalibrated_cycles);
      }
      start.push_back(s.start);
      duration.push_back(s.end - s.start);
      payload.push_back(it->second);
    }
    offsets.push_back(start.size());
  }
  j["samples"] = start.size();
  j["payloads"] = p_meta.size();
  j["columns"] = {{"offsets", column(offsets)}, {"start", column(start)}, {"duration", column(duration)},
                  {"payload", column(payload)}};
  j["payload_columns"] = {{"meta", column(p_meta)}, {"sent", column(p_sent)}, {"received", column(p_received)},
                          {"flops", column(p_flops)}, {"uncalibrated", column(p_uncalibrated)}};
  return j;
}

std::string render_timeline_html(const Profile& profile, const TimelinePeaks& peak_flops_per_tile_cycle) {
  std::string page(web::timeline_html);
  std::string script;
  for (const auto part : {web::columns_js, web::timeline_data_js, web::timeline_draw_js, web::timeline_panels_js,
                          web::timeline_ui_js})
    script += std::string(part) + "\n";
  fill(page, "TITLE", html_escape("tilevit timeline: " + profile.model + " on " + profile.machine_name +
                                  (profile.plan.empty() ? "" : ", plan: " + profile.plan)));
  fill(page, "STYLE", "<style>\n" + std::string(web::timeline_css) + "</style>");
  fill(page, "DATA", "<script id=\"tilevit-data\" type=\"application/json\">" +
                         script_safe_json(timeline_data_json(profile, peak_flops_per_tile_cycle)) + "</script>");
  fill(page, "SCRIPT", "<script>\n" + script + "</script>");
  return page;
}

TimelinePeaks peaks_of(const Profile& p) {
  TimelinePeaks peaks;
  if (p.flop_per_cycle_fp16 > 0) peaks.fp16_flops_per_tile_cycle = p.flop_per_cycle_fp16;
  if (p.flop_per_cycle_fp8 > 0) peaks.fp8_flops_per_tile_cycle = p.flop_per_cycle_fp8;
  return peaks;
}

}  // namespace tilevit::profile
