#include "package/program_codec.hpp"

#include <cstring>
#include <nlohmann/json.hpp>

#include "package/config_codec.hpp"
#include "support/error.hpp"
#include "support/json_number.hpp"

namespace tilevit::package {
namespace {

using namespace compiler;

constexpr std::uint32_t kMaxCount = 1u << 26;  // bounds every table before allocating
// Version 2: the exchange schedule (send and landing cycles, select events, phase
// length) and local copies. Version 3: allocation lifetimes in phases (compute, exchange).
constexpr std::uint32_t kProgramVersion = 3;

void write_endpoint(ByteWriter& w, const Endpoint& e) {
  w.write_u32(e.tile);
  w.write_u32(e.allocation);
  w.write_u32(e.offset);
}

Endpoint read_endpoint(ByteReader& r) {
  Endpoint e;
  e.tile = r.read_u32();
  e.allocation = r.read_u32();
  e.offset = r.read_u32();
  return e;
}

void write_schedule(ByteWriter& w, const Superstep& s) {
  w.write_u32(s.exchange_cycles);
  w.write_count(s.selects.size());
  for (const SelectEvent& e : s.selects)
    for (std::uint32_t v : {e.tile, e.cycle, e.source}) w.write_u32(v);
  w.write_count(s.local_copies.size());
  for (const LocalCopy& c : s.local_copies) {
    w.write_u32(c.tile);
    write_endpoint(w, c.source);
    w.write_u32(c.bytes);
    w.write_u32(c.source_layer_stride);
    write_endpoint(w, c.destination);
  }
}

void read_schedule(ByteReader& r, Superstep& s) {
  s.exchange_cycles = r.read_u32();
  const std::uint32_t selects = r.read_count(kMaxCount, 12);
  for (std::uint32_t i = 0; i < selects; ++i) {
    SelectEvent e;
    for (std::uint32_t* v : {&e.tile, &e.cycle, &e.source}) *v = r.read_u32();
    s.selects.push_back(e);
  }
  const std::uint32_t copies = r.read_count(kMaxCount, 36);
  for (std::uint32_t i = 0; i < copies; ++i) {
    LocalCopy c;
    c.tile = r.read_u32();
    c.source = read_endpoint(r);
    c.bytes = r.read_u32();
    c.source_layer_stride = r.read_u32();
    c.destination = read_endpoint(r);
    s.local_copies.push_back(c);
  }
}

std::vector<std::byte> text_bytes(const std::string& text) {
  std::vector<std::byte> out(text.size());
  std::memcpy(out.data(), text.data(), text.size());
  return out;
}

nlohmann::json model_json(const model::ViTConfig& c, const model::NumericsConfig& n, const CompiledProgram& p,
                          const StageRange& stage) {
  nlohmann::json j;
  j["config"] = {{"name", c.name},       {"resize_size", c.resize_size}, {"image_size", c.image_size},
                 {"patch", c.patch},     {"channels", c.channels},       {"width", c.width},
                 {"heads", c.heads},     {"head_dim", c.head_dim},       {"mlp", c.mlp},
                 {"layers", c.layers},   {"max_layers", c.max_layers},   {"batch", c.batch},
                 {"layer_norm_eps", c.layer_norm_eps}};
  if (nlohmann::json features = family_features_json(c); !features.is_null()) j["config"]["features"] = std::move(features);
  nlohmann::json roles = nlohmann::json::array();
  // The projection role only in packages of projected models, so SigLIP packages keep their bytes.
  const int recorded_roles = c.projection_dim > 0 ? model::kGemmRoleCount : model::kSiglipGemmRoles;
  for (int i = 0; i < recorded_roles; ++i)
    roles.push_back({{"role", model::gemm_role_name(static_cast<model::GemmRole>(i))},
                     {"fp8", n.roles[i].fp8},
                     {"scale", n.roles[i].scale},
                     {"inner_block", n.inner_block[i]}});
  j["numerics"] = {{"roles", roles},
                   {"attention_key_block", n.attention_key_block},
                   {"map_attention_key_block", n.map_attention_key_block}};
  // Only when a LayerNorm is split, so other packages keep their bytes.
  if (n.encoder_norm_part != std::array<std::uint32_t, 2>{}) j["numerics"]["encoder_norm_part"] = n.encoder_norm_part;
  // Only in packages with FP8 attention products, so the others keep their bytes.
  if (n.attention_fp8) j["numerics"]["attention_fp8_scale"] = n.attention_scale;
  j["loop"] = {{"begin", p.loop_begin}, {"end", p.loop_end}, {"count", p.loop_count}};
  j["exchange_stream_words"] = p.exchange_stream_words;
  if (!stage.whole())  // absent for a whole model, whose packages predate pipelines
    j["stage"] = {{"first_layer", stage.first_layer}, {"embeds", stage.embeds}, {"pools", stage.pools}};
  if (p.profiling.enabled)  // absent in unprofiled packages, whose bytes predate profiling builds
    j["profiling"] = {{"granularity", to_string(p.profiling.detail.granularity)},
                      {"iterations_in_detail", p.profiling.detail.iterations_in_detail}};
  return j;
}

template <typename T>
T checked_enum(ByteReader& r, std::uint32_t limit, const char* what) {
  const std::uint32_t v = r.read_u8();
  if (v >= limit) r.fail(std::string("invalid ") + what, std::to_string(v));
  return static_cast<T>(v);
}

}  // namespace

ContainerWriter encode_package(const Executable& executable) {
  const CompiledProgram& p = executable.program;
  ContainerWriter w;
  w.add_section("machine", 1, text_bytes(target::to_text(executable.machine)));
  w.add_section("model", 1, text_bytes(model_json(executable.config, executable.numerics, p, executable.stage).dump(1)));

  ByteWriter t;
  t.write_count(executable.tensors.size());
  for (const Tensor& x : executable.tensors) {
    t.write_string(x.name);
    t.write_u32(x.rows);
    t.write_u32(x.cols);
    t.write_u8(static_cast<std::uint8_t>(x.dtype));
    t.write_u8(static_cast<std::uint8_t>(x.kind));
    t.write_u8(static_cast<std::uint8_t>(x.role));
  }
  w.add_section("tensors", 1, std::move(t).bytes());

  ByteWriter pr;
  pr.write_count(p.op_names.size());
  for (const auto& name : p.op_names) pr.write_string(name);
  pr.write_u32(p.loop_begin);
  pr.write_u32(p.loop_end);
  pr.write_u32(p.loop_count);
  pr.write_count(p.steps.size());
  for (const Superstep& s : p.steps) {
    pr.write_string(s.label);
    pr.write_u32(s.waves);
    pr.write_count(s.compute.size());
    for (const KernelCall& c : s.compute) {
      pr.write_u8(static_cast<std::uint8_t>(c.kind));
      pr.write_u32(c.tile);
      pr.write_u32(c.op);
      for (std::uint32_t d : c.dims) pr.write_u32(d);
      pr.write_i32(c.scale);
      pr.write_f32(c.param);
      pr.write_count(c.operands.size());
      for (const Operand& o : c.operands) {
        pr.write_u32(o.allocation);
        pr.write_u32(o.offset);
        pr.write_u32(o.bytes);
        pr.write_u32(o.layer_stride);
      }
    }
    pr.write_count(s.exchange.size());
    for (const Transfer& x : s.exchange) {
      pr.write_u32(x.source.tile);
      pr.write_u32(x.source.allocation);
      pr.write_u32(x.source.offset);
      pr.write_u32(x.bytes);
      pr.write_u32(x.source_layer_stride);
      pr.write_u32(x.wave);
      pr.write_u32(x.send_cycle);
      pr.write_u32(x.land_cycle);
      pr.write_count(x.destinations.size());
      for (const Endpoint& e : x.destinations) write_endpoint(pr, e);
    }
    write_schedule(pr, s);
  }
  w.add_section("program", kProgramVersion, std::move(pr).bytes());

  ByteWriter pl;
  pl.write_count(p.allocations.size());
  for (const Allocation& a : p.allocations) {
    pl.write_u32(a.tile);
    pl.write_string(a.request.label);
    pl.write_u8(static_cast<std::uint8_t>(a.request.kind));
    pl.write_u8(static_cast<std::uint8_t>(a.request.region));
    pl.write_u32(a.request.bytes);
    pl.write_u32(a.request.alignment);
    pl.write_u32(a.request.first);
    pl.write_u32(a.request.last);
    pl.write_u32(a.address);
  }
  w.add_section("placement", 1, std::move(pl).bytes());

  ByteWriter b;
  b.write_count(executable.bindings.size());
  for (const HostBinding& h : executable.bindings) {
    b.write_u8(static_cast<std::uint8_t>(h.direction));
    for (std::uint32_t v : {h.tensor, h.row0, h.rows, h.col0, h.cols, h.tile, h.allocation, h.offset, h.layers, h.layer_stride})
      b.write_u32(v);
  }
  w.add_section("bindings", 1, std::move(b).bytes());
  return w;
}

Executable decode_package(const Container& c) {
  // Other files in the same container format: say what they are, not which section is missing.
  if (c.find("machine") == nullptr && c.find("profile") != nullptr)
    throw Error(c.name() + ": is a profile, not a package (read it with tilevit profile query, diff or render)",
                kExitBadInput);
  if (c.find("machine") == nullptr && c.find("system") != nullptr)
    throw Error(c.name() + ": is a pipeline package (several chips), not a one-chip package", kExitBadInput);
  Executable out;
  const auto machine_bytes = c.payload(c.require("machine", 1));
  out.machine = target::parse_machine(
      std::string_view(reinterpret_cast<const char*>(machine_bytes.data()), machine_bytes.size()), c.name() + ": machine");

  const auto model_bytes = c.payload(c.require("model", 1));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(reinterpret_cast<const char*>(model_bytes.data()),
                              reinterpret_cast<const char*>(model_bytes.data()) + model_bytes.size());
    const auto& cfg = j.at("config");
    model::ViTConfig& m = out.config;
    m.name = cfg.at("name").get<std::string>();
    m.resize_size = json_integer<int>(cfg.at("resize_size"), "config.resize_size");
    m.image_size = json_integer<int>(cfg.at("image_size"), "config.image_size");
    m.patch = json_integer<int>(cfg.at("patch"), "config.patch");
    m.channels = json_integer<int>(cfg.at("channels"), "config.channels");
    m.width = json_integer<int>(cfg.at("width"), "config.width");
    m.heads = json_integer<int>(cfg.at("heads"), "config.heads");
    m.head_dim = json_integer<int>(cfg.at("head_dim"), "config.head_dim");
    m.mlp = json_integer<int>(cfg.at("mlp"), "config.mlp");
    m.layers = json_integer<int>(cfg.at("layers"), "config.layers");
    m.max_layers = json_integer<int>(cfg.at("max_layers"), "config.max_layers");
    m.batch = json_integer<int>(cfg.at("batch"), "config.batch");
    m.layer_norm_eps = json_real<float>(cfg.at("layer_norm_eps"), "config.layer_norm_eps");
    if (cfg.contains("features")) read_family_features(cfg.at("features"), m);
    const auto& roles = j.at("numerics").at("roles");
    if (roles.size() != model::kGemmRoleCount && roles.size() != model::kSiglipGemmRoles)
      throw Error("wrong number of GEMM roles");
    for (int i = 0; i < static_cast<int>(roles.size()); ++i) {
      out.numerics.roles[i].fp8 = roles[i].at("fp8").get<bool>();
      out.numerics.roles[i].scale = json_integer<int>(roles[i].at("scale"), "numerics.roles.scale");
      out.numerics.inner_block[i] = json_integer<std::uint32_t>(roles[i].at("inner_block"), "numerics.roles.inner_block");
    }
    out.numerics.attention_key_block = json_integer<std::uint32_t>(j.at("numerics").at("attention_key_block"), "numerics.attention_key_block");
    out.numerics.map_attention_key_block = json_integer<std::uint32_t>(j.at("numerics").at("map_attention_key_block"), "numerics.map_attention_key_block");
    if (j.at("numerics").contains("encoder_norm_part")) {
      const auto& parts = j.at("numerics").at("encoder_norm_part");
      if (!parts.is_array() || parts.size() != 2) throw Error("numerics.encoder_norm_part: expected 2 numbers");
      for (std::size_t i = 0; i < 2; ++i)
        out.numerics.encoder_norm_part[i] = json_integer<std::uint32_t>(parts[i], "numerics.encoder_norm_part");
    }
    if (j.at("numerics").contains("attention_fp8_scale")) {
      out.numerics.attention_fp8 = true;
      out.numerics.attention_scale = json_integer<int>(j.at("numerics").at("attention_fp8_scale"), "numerics.attention_fp8_scale");
    }
    out.program.loop_begin = json_integer<std::uint32_t>(j.at("loop").at("begin"), "loop.begin");
    out.program.loop_end = json_integer<std::uint32_t>(j.at("loop").at("end"), "loop.end");
    out.program.loop_count = json_integer<std::uint32_t>(j.at("loop").at("count"), "loop.count");
    out.program.exchange_stream_words = json_integer<std::uint32_t>(j.at("exchange_stream_words"), "exchange_stream_words");
    if (j.contains("stage")) {
      const auto& stage = j.at("stage");
      out.stage.first_layer = json_integer<std::uint32_t>(stage.at("first_layer"), "stage.first_layer");
      out.stage.embeds = stage.at("embeds").get<bool>();
      out.stage.pools = stage.at("pools").get<bool>();
      if (out.stage.first_layer > static_cast<std::uint32_t>(m.layers) ||
          out.program.loop_count > static_cast<std::uint32_t>(m.layers) - out.stage.first_layer)
        throw Error("stage layers " + std::to_string(out.stage.first_layer) + " + " +
                    std::to_string(out.program.loop_count) + " outside the model's " + std::to_string(m.layers));
    }
    if (j.contains("profiling")) {
      const auto& prof = j.at("profiling");
      out.program.profiling.enabled = true;
      out.program.profiling.detail.granularity = granularity_from_string(prof.at("granularity").get<std::string>());
      out.program.profiling.detail.iterations_in_detail = json_integer<std::uint32_t>(prof.at("iterations_in_detail"), "profiling.iterations_in_detail");
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(c.name() + ": section \"model\": " + e.what());
  } catch (const Error& e) {
    throw Error(c.name() + ": section \"model\": " + e.what());
  }
  try {
    out.config.validate();
  } catch (const Error& e) {
    throw Error(c.name() + ": section \"model\": " + e.what());
  }

  ByteReader t = c.reader(c.require("tensors", 1));
  const std::uint32_t tensors = t.read_count(kMaxCount, 7);
  for (std::uint32_t i = 0; i < tensors; ++i) {
    Tensor x;
    x.name = t.read_string(256);
    x.rows = t.read_u32();
    x.cols = t.read_u32();
    x.dtype = checked_enum<DType>(t, 3, "dtype");
    x.kind = checked_enum<TensorKind>(t, 5, "tensor kind");
    x.role = checked_enum<model::GemmRole>(t, model::kGemmRoleCount, "GEMM role");
    out.tensors.push_back(std::move(x));
  }
  t.expect_end();

  ByteReader r = c.reader(c.require("program", kProgramVersion));
  CompiledProgram& p = out.program;
  const std::uint32_t ops = r.read_count(kMaxCount, 4);
  for (std::uint32_t i = 0; i < ops; ++i) p.op_names.push_back(r.read_string(256));
  const std::uint32_t begin = r.read_u32(), end = r.read_u32(), count = r.read_u32();
  if (begin != p.loop_begin || end != p.loop_end || count != p.loop_count) r.fail("loop bounds differ from the model section", "");
  const std::uint32_t steps = r.read_count(kMaxCount, 12);
  if (p.loop_begin > p.loop_end || p.loop_end > steps) r.fail("loop bounds outside the program", "");
  for (std::uint32_t i = 0; i < steps; ++i) {
    Superstep s;
    s.label = r.read_string(256);
    s.waves = r.read_u32();
    const std::uint32_t calls = r.read_count(kMaxCount, 37);
    for (std::uint32_t k = 0; k < calls; ++k) {
      KernelCall call;
      const std::uint32_t kind = r.read_u8();
      call.tile = r.read_u32();
      if (kind >= compiler::kKernelKinds)
        r.fail("superstep " + std::to_string(i) + ", tile " + std::to_string(call.tile) + ": kernel kind " +
                   std::to_string(kind) + " is not a kernel kind",
               "");
      call.kind = static_cast<KernelKind>(kind);
      call.op = r.read_u32();
      if (call.op >= ops) r.fail("kernel call names op", std::to_string(call.op));
      for (auto& d : call.dims) d = r.read_u32();
      call.scale = r.read_i32();
      call.param = r.read_f32();
      const std::uint32_t operands = r.read_count(16, 16);
      for (std::uint32_t o = 0; o < operands; ++o) {
        Operand op;
        op.allocation = r.read_u32();
        op.offset = r.read_u32();
        op.bytes = r.read_u32();
        op.layer_stride = r.read_u32();
        call.operands.push_back(op);
      }
      s.compute.push_back(std::move(call));
    }
    const std::uint32_t transfers = r.read_count(kMaxCount, 36);
    for (std::uint32_t k = 0; k < transfers; ++k) {
      Transfer x;
      x.source.tile = r.read_u32();
      x.source.allocation = r.read_u32();
      x.source.offset = r.read_u32();
      x.bytes = r.read_u32();
      x.source_layer_stride = r.read_u32();
      x.wave = r.read_u32();
      // Waves are dense and in order (0, 0, 1, 2, 2, ...), so `waves` is bounded by the
      // transfers actually present and nothing sized from it can be inflated.
      const std::uint32_t first_allowed = s.exchange.empty() ? 0 : s.exchange.back().wave;
      if (x.wave >= s.waves) r.fail("transfer in wave " + std::to_string(x.wave) + " of a phase with", std::to_string(s.waves));
      if (x.wave < first_allowed || x.wave > first_allowed + (s.exchange.empty() ? 0 : 1))
        r.fail("transfer in wave " + std::to_string(x.wave) + " after wave " + std::to_string(first_allowed) +
               " (waves are numbered densely, in order)");
      x.send_cycle = r.read_u32();
      x.land_cycle = r.read_u32();
      const std::uint32_t dsts = r.read_count(kMaxCount, 12);
      for (std::uint32_t d = 0; d < dsts; ++d) x.destinations.push_back(read_endpoint(r));
      s.exchange.push_back(std::move(x));
    }
    read_schedule(r, s);
    const std::uint32_t used_waves = s.exchange.empty() ? 0 : s.exchange.back().wave + 1;
    if (s.waves != used_waves)
      r.fail("superstep " + std::to_string(i) + " declares " + std::to_string(s.waves) + " exchange waves, its transfers use " +
             std::to_string(used_waves));
    p.steps.push_back(std::move(s));
  }
  r.expect_end();

  ByteReader pl = c.reader(c.require("placement", 1));
  const std::uint32_t allocs = pl.read_count(kMaxCount, 30);
  for (std::uint32_t i = 0; i < allocs; ++i) {
    Allocation a;
    a.tile = pl.read_u32();
    a.request.label = pl.read_string(512);
    a.request.kind = checked_enum<AllocationKind>(pl, 4, "allocation kind");
    a.request.region = checked_enum<RegionNeed>(pl, 3, "region need");
    a.request.bytes = pl.read_u32();
    a.request.alignment = pl.read_u32();
    a.request.first = pl.read_u32();
    a.request.last = pl.read_u32();
    if (a.request.kind == AllocationKind::support) a.request.purpose = compiler::purpose_of_support_label(a.request.label);
    a.address = pl.read_u32();
    p.allocations.push_back(std::move(a));
  }
  pl.expect_end();

  ByteReader b = c.reader(c.require("bindings", 1));
  const std::uint32_t bindings = b.read_count(kMaxCount, 41);
  for (std::uint32_t i = 0; i < bindings; ++i) {
    HostBinding h;
    h.direction = checked_enum<HostBinding::Direction>(b, 3, "binding direction");
    for (std::uint32_t* v : {&h.tensor, &h.row0, &h.rows, &h.col0, &h.cols, &h.tile, &h.allocation, &h.offset, &h.layers,
                             &h.layer_stride})
      *v = b.read_u32();
    if (h.tensor >= out.tensors.size()) b.fail("binding names tensor", std::to_string(h.tensor));
    out.bindings.push_back(h);
  }
  b.expect_end();
  return out;
}

}  // namespace tilevit::package
