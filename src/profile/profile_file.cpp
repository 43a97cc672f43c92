#include "profile/profile_file.hpp"

#include <nlohmann/json.hpp>

#include "package/container.hpp"
#include "support/atomic_file.hpp"
#include "support/error.hpp"
#include "support/json_number.hpp"
#include "support/utf8.hpp"

namespace tilevit::profile {
namespace {

constexpr std::uint32_t kMaxTiles = 1u << 16;
constexpr std::uint32_t kMaxMeta = 1u << 26;
constexpr std::size_t kMaxText = 4096;
constexpr std::size_t kSampleBytes = 8 + 8 + 4 + 4 + 4 + 8 + 8;

std::vector<std::byte> text_bytes(const std::string& text) {
  const auto* p = reinterpret_cast<const std::byte*>(text.data());
  return {p, p + text.size()};
}

nlohmann::json header_json(const Profile& p) {
  nlohmann::json totals;
  for (std::size_t k = 0; k < kSampleKinds; ++k) totals[std::string(to_string(SampleKind(k)))] = p.tile_cycles[k];
  nlohmann::json j{{"format", "tilevit-profile"},
          {"version", kProfileFormatVersion},
          {"machine",
           {{"name", p.machine_name},
            {"tiles", p.tiles},
            {"clock_hz", p.clock_hz},
            {"flop_per_cycle_fp16", p.flop_per_cycle_fp16},
            {"flop_per_cycle_fp8", p.flop_per_cycle_fp8}}},
          {"package_sha256", p.package_sha256},
          {"model", p.model},
          {"plan", p.plan},
          {"granularity", compiler::to_string(p.options.granularity)},
          {"iterations_in_detail", p.options.iterations_in_detail},
          {"loop", {{"begin", p.loop_begin}, {"end", p.loop_end}, {"count", p.loop_count}}},
          {"steps", p.steps},
          {"span_cycles", p.span},
          {"tile_cycles", totals},
          {"uncalibrated_compute_cycles", p.uncalibrated_compute_cycles}};
  if (!p.tile_peak_bytes.empty()) j["tile_peak_bytes"] = p.tile_peak_bytes;  // optional: the memory map's peaks
  if (!p.row_groups.empty()) {  // optional: a multi-chip profile's chips and links
    nlohmann::json& groups = j["row_groups"] = nlohmann::json::array();
    for (const auto& g : p.row_groups) groups.push_back({g.name, g.rows, g.loop_count});
  }
  if (!p.operation_bounds.empty()) {  // optional: per operation, its lower bound in tile-cycles (and row group)
    nlohmann::json& bounds = j["operation_bounds"] = nlohmann::json::array();
    for (const auto& b : p.operation_bounds)
      bounds.push_back(b.row_group ? nlohmann::json{b.name, b.tile_cycles, b.row_group} : nlohmann::json{b.name, b.tile_cycles});
  }
  return j;
}

// An optional list of [name, value] or [name, value, index] entries (row_groups, operation_bounds).
struct NamedEntry {
  std::string name;
  std::uint64_t value = 0;
  std::uint32_t index = 0;  // the third element, 0 when absent
};
std::vector<NamedEntry> named_entries(const nlohmann::json& list, const std::string& what, const std::string& shape,
                                      std::size_t max) {
  const std::string expected = what + ": expected an array of " + shape + " entries (the last element optional)";
  if (!list.is_array() || list.size() > max) throw Error(expected);
  std::vector<NamedEntry> out;
  for (const auto& e : list) {
    if (!e.is_array() || e.size() < 2 || e.size() > 3 || !e[0].is_string() || e[0].get_ref<const std::string&>().size() > kMaxText)
      throw Error(expected);
    out.push_back({e[0].get<std::string>(), json_integer<std::uint64_t>(e[1], what),
                   e.size() == 3 ? json_integer<std::uint32_t>(e[2], what) : 0});
  }
  return out;
}

void read_header(const nlohmann::json& j, Profile& p) {
  if (j.at("format").get<std::string>() != "tilevit-profile") throw Error("not a tilevit profile");
  const auto version = json_integer<std::uint32_t>(j.at("version"), "version");
  if (version != kProfileFormatVersion)
    throw Error("profile version " + std::to_string(version) + ", this build reads " +
                std::to_string(kProfileFormatVersion));
  p.machine_name = j.at("machine").at("name").get<std::string>();
  p.tiles = json_integer<std::uint32_t>(j.at("machine").at("tiles"), "machine.tiles");
  p.clock_hz = json_integer<std::uint64_t>(j.at("machine").at("clock_hz"), "machine.clock_hz");
  p.flop_per_cycle_fp16 = json_integer<std::uint32_t>(j.at("machine").at("flop_per_cycle_fp16"), "machine.flop_per_cycle_fp16");
  p.flop_per_cycle_fp8 = json_integer<std::uint32_t>(j.at("machine").at("flop_per_cycle_fp8"), "machine.flop_per_cycle_fp8");
  if (p.tiles == 0 || p.tiles > kMaxTiles) throw Error("tiles " + std::to_string(p.tiles) + " out of range");
  if (p.clock_hz == 0) throw Error("clock_hz is 0");
  p.package_sha256 = j.at("package_sha256").get<std::string>();
  p.model = j.at("model").get<std::string>();
  p.plan = j.value("plan", std::string());  // optional: profiles written before it had none
  p.options.granularity = compiler::granularity_from_string(j.at("granularity").get<std::string>());
  p.options.iterations_in_detail = json_integer<std::uint32_t>(j.at("iterations_in_detail"), "iterations_in_detail");
  p.loop_begin = json_integer<std::uint32_t>(j.at("loop").at("begin"), "loop.begin");
  p.loop_end = json_integer<std::uint32_t>(j.at("loop").at("end"), "loop.end");
  p.loop_count = json_integer<std::uint32_t>(j.at("loop").at("count"), "loop.count");
  p.steps = json_integer<std::uint32_t>(j.at("steps"), "steps");
  if (p.loop_begin > p.loop_end || p.loop_end > p.steps) throw Error("loop outside the program's steps");
  p.span = json_integer<std::uint64_t>(j.at("span_cycles"), "span_cycles");
  for (std::size_t k = 0; k < kSampleKinds; ++k)
    p.tile_cycles[k] = json_integer<std::uint64_t>(j.at("tile_cycles").at(std::string(to_string(SampleKind(k)))), "tile_cycles");
  p.uncalibrated_compute_cycles = json_integer<std::uint64_t>(j.at("uncalibrated_compute_cycles"), "uncalibrated_compute_cycles");
  if (p.uncalibrated_compute_cycles > p.tile_cycles[std::size_t(SampleKind::compute)])
    throw Error("uncalibrated_compute_cycles " + std::to_string(p.uncalibrated_compute_cycles) +
                " exceeds tile_cycles.compute " + std::to_string(p.tile_cycles[std::size_t(SampleKind::compute)]));
  if (const auto peaks = j.find("tile_peak_bytes"); peaks != j.end()) {  // optional (profiles before it have none)
    if (!peaks->is_array() || peaks->size() != p.tiles)
      throw Error("tile_peak_bytes: expected an array of " + std::to_string(p.tiles) + " entries");
    p.tile_peak_bytes.reserve(p.tiles);
    for (const auto& v : *peaks) p.tile_peak_bytes.push_back(json_integer<std::uint32_t>(v, "tile_peak_bytes"));
  }
  if (const auto groups = j.find("row_groups"); groups != j.end()) {  // optional
    std::uint64_t rows = 0;
    for (const NamedEntry& g : named_entries(*groups, "row_groups", "[name, rows, loop count]", p.tiles)) {
      if (g.value > p.tiles) throw Error("row_groups: a group of " + std::to_string(g.value) + " rows");
      p.row_groups.push_back({g.name, std::uint32_t(g.value), g.index});
      rows += g.value;
    }
    if (rows != p.tiles) throw Error("row_groups: " + std::to_string(rows) + " rows for " + std::to_string(p.tiles) + " tiles");
  }
  if (const auto bounds = j.find("operation_bounds"); bounds != j.end()) {  // optional
    for (const NamedEntry& b : named_entries(*bounds, "operation_bounds", "[name, cycles, row group]", kMaxMeta)) {
      if (b.index >= std::max<std::size_t>(p.row_groups.size(), 1))
        throw Error("operation_bounds: row group " + std::to_string(b.index) + " of " + std::to_string(p.row_groups.size()));
      p.operation_bounds.push_back({b.name, b.value, b.index});
    }
  }
}

}  // namespace

std::vector<std::byte> encode_profile(const Profile& p) {
  package::ContainerWriter w;
  w.add_section("profile", kProfileFormatVersion, text_bytes(header_json(p).dump(1)));
  package::ByteWriter m;
  m.write_count(p.meta.size());
  for (const StepMeta& x : p.meta) {
    m.write_u8(static_cast<std::uint8_t>(x.kind));
    m.write_u32(x.step);
    m.write_i32(x.layer);
    for (const std::string* s : {&x.phase, &x.kernel, &x.operation, &x.shape}) m.write_string(*s);
  }
  w.add_section("meta", 1, std::move(m).bytes());
  package::ByteWriter s;
  s.write_count(p.samples.size());
  for (const auto& tile : p.samples) {
    s.write_count(tile.size());
    for (const Sample& x : tile) {
      s.write_u64(x.start);
      s.write_u64(x.end);
      s.write_u32(x.meta);
      s.write_u32(x.words_sent);
      s.write_u32(x.words_received);
      s.write_u64(x.flops);
      s.write_u64(x.uncalibrated_cycles);
    }
  }
  w.add_section("samples", kProfileFormatVersion, std::move(s).bytes());
  return w.bytes();
}

void write_profile(const std::string& path, const Profile& p) { write_bytes_atomically(path, encode_profile(p)); }

namespace {

Profile decode(const package::Container& c) {
  const std::string& name = c.name();
  if (c.find("program") != nullptr && c.find("profile") == nullptr)
    throw Error(name + ": is a package, not a profile", kExitBadInput);
  // Version 1 files predate calibration coverage: say so rather than a section mismatch.
  if (const auto* header = c.find("profile"); header != nullptr && header->version < kProfileFormatVersion)
    throw Error(name + ": profile format version " + std::to_string(header->version) +
                    " (no calibration coverage); this build reads version " + std::to_string(kProfileFormatVersion) +
                    ": write it again with `tilevit run`",
                kExitBadInput);
  Profile p;
  try {
    const auto header = c.payload(c.require("profile", kProfileFormatVersion));
    read_header(nlohmann::json::parse(reinterpret_cast<const char*>(header.data()),
                                      reinterpret_cast<const char*>(header.data()) + header.size()),
                p);
  } catch (const nlohmann::json::exception& e) {
    throw Error(name + ": section \"profile\": " + e.what(), kExitBadInput);
  } catch (const Error& e) {
    throw Error(name + ": section \"profile\": " + e.what(), kExitBadInput);
  }
  package::ByteReader m = c.reader(c.require("meta", 1));
  const std::uint32_t metas = m.read_count(kMaxMeta, 1 + 4 + 4 + 16);
  p.meta.resize(metas);
  for (StepMeta& x : p.meta) {
    const std::uint8_t kind = m.read_u8();
    if (kind >= kSampleKinds) m.fail("invalid sample kind", " (" + std::to_string(kind) + ")");
    x.kind = static_cast<SampleKind>(kind);
    x.step = m.read_u32();
    x.layer = m.read_i32();
    if (x.step != kNoStep && x.step >= p.steps) m.fail("step out of range", " (" + std::to_string(x.step) + ")");
    for (std::string* s : {&x.phase, &x.kernel, &x.operation, &x.shape}) {  // labels, printed and written into JSON
      *s = m.read_string(kMaxText);
      if (std::size_t bad_at = 0; !printable_utf8(*s, &bad_at))
        m.fail("a label is not printable UTF-8", " (its byte " + std::to_string(bad_at) + ")");
    }
  }
  m.expect_end();
  package::ByteReader s = c.reader(c.require("samples", kProfileFormatVersion));
  const std::uint32_t tiles = s.read_count(kMaxTiles, 4);
  if (tiles != p.tiles) s.fail("tile count differs from the header", " (" + std::to_string(tiles) + ")");
  p.samples.resize(tiles);
  for (std::uint32_t t = 0; t < tiles; ++t) {
    const std::uint32_t n = s.read_count(UINT32_MAX, kSampleBytes);
    auto& list = p.samples[t];
    list.resize(n);
    std::uint64_t previous_end = 0;
    for (Sample& x : list) {
      x.start = s.read_u64();
      x.end = s.read_u64();
      x.meta = s.read_u32();
      x.words_sent = s.read_u32();
      x.words_received = s.read_u32();
      x.flops = s.read_u64();
      x.uncalibrated_cycles = s.read_u64();
      auto where = [&] { return "tile " + std::to_string(t) + " sample " + std::to_string(&x - list.data()); };
      if (x.meta >= metas) s.fail(where() + ": meta index out of range", " (" + std::to_string(x.meta) + ")");
      if (x.end <= x.start || x.end > p.span || x.start < previous_end)
        s.fail(where() + ": cycles out of order or outside the span",
               " (" + std::to_string(x.start) + ".." + std::to_string(x.end) + ")");
      if (x.uncalibrated_cycles > x.end - x.start)
        s.fail(where() + ": uncalibrated cycles exceed the sample", " (" + std::to_string(x.uncalibrated_cycles) + ")");
      previous_end = x.end;
    }
  }
  s.expect_end();
  return p;
}

}  // namespace

Profile decode_profile(std::vector<std::byte> bytes, const std::string& name) {
  return decode(package::Container::from_bytes(std::move(bytes), name));
}

Profile read_profile(const std::string& path) { return decode(package::Container::open(path, std::uint64_t{4} << 30)); }

}  // namespace tilevit::profile
