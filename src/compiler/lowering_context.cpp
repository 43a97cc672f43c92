#include "compiler/lowering_context.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "compiler/exchange_schedule.hpp"
#include "compiler/exchange_waves.hpp"
#include "support/error.hpp"

namespace tilevit::compiler {
namespace {
std::uint32_t ceil_div(std::uint32_t a, std::uint32_t b) { return (a + b - 1) / b; }

constexpr std::uint32_t kSupervisorCodeBytes = 4096;
// Exchange instruction tables, the original's row-byte model (EXCHANGE_FOOTPRINT in
// /work/shared/reference/measurements/EXCHANGE.md).
constexpr std::uint32_t kExchangeBytesPerSend = 8;
constexpr std::uint32_t kExchangeBytesPerLongSend = 4;   // extra, for a send over 64 words
constexpr std::uint32_t kLongSendWords = 64;
constexpr std::uint32_t kExchangeBytesPerReceive = 8;
constexpr std::uint32_t kExchangeBytesPerPointerReset = 4;  // per select event
constexpr std::uint32_t kExchangeBytesPerTilePhase = 8;

// Table bytes of every tile for the scheduled exchange.
std::vector<std::uint64_t> exchange_table_bytes(const CompiledProgram& p, std::uint32_t tiles) {
  std::vector<std::uint64_t> table(tiles, 0);
  std::vector<std::uint32_t> last_step(tiles, UINT32_MAX);
  auto take_part = [&](std::uint32_t tile, std::uint32_t step) {
    if (std::exchange(last_step[tile], step) != step) table[tile] += kExchangeBytesPerTilePhase;
  };
  for (std::uint32_t s = 0; s < p.steps.size(); ++s) {
    for (const Transfer& t : p.steps[s].exchange) {
      take_part(t.source.tile, s);
      table[t.source.tile] += kExchangeBytesPerSend + (t.words() > kLongSendWords ? kExchangeBytesPerLongSend : 0);
      for (const Endpoint& d : t.destinations) {
        take_part(d.tile, s);
        table[d.tile] += kExchangeBytesPerReceive;
      }
    }
    for (const SelectEvent& e : p.steps[s].selects) table[e.tile] += kExchangeBytesPerPointerReset;
  }
  return table;
}
}  // namespace

LoweringContext::LoweringContext(const Graph& g, const target::MachineDescription& m, const CompileOptions& o)
    : graph(g), machine(m), options(o), dists_(g.tensors.size()) {
  out_.numerics = g.numerics;
  out_.plan.exchange_stream_words = o.plan.exchange_stream_words;
  out_.program.steps.push_back(Superstep{.label = "start"});
}

std::uint32_t LoweringContext::step() const { return static_cast<std::uint32_t>(out_.program.steps.size() - 1); }

void LoweringContext::begin_op(const std::string& name) {
  out_.program.op_names.push_back(name);
  op_index_ = static_cast<std::uint32_t>(out_.program.op_names.size() - 1);
  Superstep& s = out_.program.steps.back();
  if (s.compute.empty() && s.exchange.empty()) s.label = name;
}

// A tile receives one piece at a time, so one multicast can land on a tile only once. When
// one tile needs the same source bytes in two places (two consumer blocks on one tile, as
// large batches on few tiles give), the repeats go out as further sends of those bytes; a
// repeated identical destination is dropped.
static std::vector<Transfer> one_landing_per_tile(std::vector<Transfer> transfers) {
  std::vector<Transfer> out;
  out.reserve(transfers.size());
  for (Transfer& t : transfers) {
    std::vector<std::uint32_t> tiles;
    for (const Endpoint& d : t.destinations) tiles.push_back(d.tile);
    std::sort(tiles.begin(), tiles.end());
    if (std::adjacent_find(tiles.begin(), tiles.end()) == tiles.end()) {  // the usual case
      out.push_back(std::move(t));
      continue;
    }
    std::vector<Transfer> sends;
    std::vector<std::set<std::uint32_t>> landed;                                   // per send, its tiles
    std::set<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>> endpoints;  // (tile, allocation, offset)
    for (const Endpoint& d : t.destinations) {
      if (!endpoints.insert({d.tile, d.allocation, d.offset}).second) continue;
      std::size_t i = 0;
      while (i < sends.size() && landed[i].count(d.tile)) ++i;
      if (i == sends.size()) {
        sends.push_back(t);
        sends.back().destinations.clear();
        landed.emplace_back();
      }
      sends[i].destinations.push_back(d);
      landed[i].insert(d.tile);
    }
    for (Transfer& send : sends) out.push_back(std::move(send));
  }
  return out;
}

void LoweringContext::add_transfers(std::vector<Transfer> transfers) {
  for (Transfer& t : one_landing_per_tile(std::move(transfers))) {
    touch(t.source.allocation, exchange_phase(step()));
    for (const Endpoint& d : t.destinations) touch(d.allocation, exchange_phase(step()));
    out_.program.steps.back().exchange.push_back(std::move(t));
  }
}

void LoweringContext::close_step_if_exchanging() {
  if (!out_.program.steps.back().exchange.empty())
    out_.program.steps.push_back(Superstep{.label = out_.program.op_names.empty() ? "" : out_.program.op_names.back()});
}

void LoweringContext::add_call(KernelCall call) {
  close_step_if_exchanging();
  call.op = op_index_;
  for (const Operand& o : call.operands) touch(o.allocation, compute_phase(step()));
  out_.program.steps.back().compute.push_back(std::move(call));
}

void LoweringContext::begin_loop() {
  Superstep& s = out_.program.steps.back();
  if (!s.compute.empty() || !s.exchange.empty()) out_.program.steps.push_back(Superstep{.label = "loop"});
  out_.program.loop_begin = step();
  in_loop_ = true;
}

void LoweringContext::end_loop(std::uint32_t count) {
  out_.program.loop_end = step() + 1;
  out_.program.loop_count = count;
  out_.program.steps.push_back(Superstep{.label = "after loop"});
  in_loop_ = false;
}

std::uint32_t LoweringContext::allocate(std::uint32_t tile, const std::string& label, AllocationKind kind,
                                        std::uint32_t bytes, RegionNeed region, std::uint32_t alignment) {
  if (bytes == 0) throw Error("compiler: empty allocation " + label, kExitInternal);
  Allocation a;
  a.tile = tile;
  // The lifetime starts empty (first > last) and grows with the uses (touch).
  a.request = AllocationRequest{label, kind, bytes, alignment, region, UINT32_MAX, 0};
  out_.program.allocations.push_back(std::move(a));
  created_in_step_.push_back(step());
  return static_cast<std::uint32_t>(out_.program.allocations.size() - 1);
}

void LoweringContext::touch(std::uint32_t allocation, std::uint32_t phase) {
  AllocationRequest& r = out_.program.allocations.at(allocation).request;
  r.first = std::min(r.first, phase);
  r.last = std::max(r.last, phase);
}

void LoweringContext::conflict(std::uint32_t a, std::uint32_t b) { out_.conflicts_by_allocation.push_back({a, b}); }

Operand LoweringContext::operand(std::uint32_t allocation, std::uint32_t offset, std::uint32_t bytes,
                                 std::uint32_t stride) {
  return Operand{allocation, offset, bytes, stride};
}

const Distribution& LoweringContext::dist(int tensor) {
  auto& d = dists_.at(static_cast<std::size_t>(tensor));
  if (!d && is_weight(tensor) && graph.tensor(tensor).kind == TensorKind::parameter) {
    const Tensor& t = graph.tensor(tensor);
    Distribution r = row_split(t.rows, t.cols, t.dtype);
    for (Block& b : r.blocks)
      b.allocation = resident_weight(tensor, b.tile, b.row0, b.rows, b.col0, b.cols, RegionNeed::any, nullptr);
    d = std::move(r);
  }
  if (!d) throw Error("compiler: tensor " + graph.tensor(tensor).name + " used before it is produced", kExitInternal);
  return *d;
}

void LoweringContext::set_dist(int tensor, Distribution d) { dists_.at(static_cast<std::size_t>(tensor)) = std::move(d); }

bool LoweringContext::is_weight(int tensor) const {
  const TensorKind k = graph.tensor(tensor).kind;
  return k == TensorKind::parameter || k == TensorKind::sequence;
}

std::uint32_t LoweringContext::layers_of(int tensor) const {
  return graph.tensor(tensor).kind == TensorKind::sequence ? graph.loop_count : 1;
}

std::uint32_t LoweringContext::resident_weight(int tensor, std::uint32_t tile, std::uint32_t row0, std::uint32_t rows,
                                               std::uint32_t col0, std::uint32_t cols, RegionNeed region,
                                               std::uint32_t* stride) {
  const Tensor& t = graph.tensor(tensor);
  const std::uint32_t slice = rows * cols * dtype_bytes(t.dtype);
  const std::uint32_t layers = layers_of(tensor);
  const std::uint32_t alloc = allocate(tile, t.name + " " + dtype_name(t.dtype) + " [" + std::to_string(rows) + "x" +
                                                  std::to_string(cols) + (layers > 1 ? " x" + std::to_string(layers) : "") + "]",
                                       AllocationKind::parameter, slice * layers, region);
  out_.bindings.push_back(HostBinding{HostBinding::Direction::parameter, static_cast<std::uint32_t>(tensor), row0, rows,
                                      col0, cols, tile, alloc, 0, layers, layers > 1 ? slice : 0});
  if (stride) *stride = layers > 1 ? slice : 0;
  return alloc;
}

void LoweringContext::broadcast_vector(int tensor, const std::vector<std::pair<std::uint32_t, std::uint32_t>>& destinations) {
  const Tensor& t = graph.tensor(tensor);
  constexpr std::uint32_t kPiece = 288;  // elements per home tile
  std::vector<Transfer> transfers;
  for (std::uint32_t c0 = 0; c0 < t.cols; c0 += kPiece) {
    const std::uint32_t cols = std::min(kPiece, t.cols - c0);
    const std::uint32_t home = next_home_tile_;
    next_home_tile_ = (next_home_tile_ + 97) % tiles();  // spread homes over the chip
    std::uint32_t stride = 0;
    const std::uint32_t alloc = resident_weight(tensor, home, 0, 1, c0, cols, RegionNeed::any, &stride);
    Transfer tr;
    tr.source = Endpoint{home, alloc, 0};
    tr.bytes = cols * dtype_bytes(t.dtype);
    tr.source_layer_stride = stride;
    for (const auto& [tile, dst] : destinations) tr.destinations.push_back(Endpoint{tile, dst, c0 * dtype_bytes(t.dtype)});
    transfers.push_back(std::move(tr));
  }
  add_transfers(std::move(transfers));
}

Distribution LoweringContext::row_split(std::uint32_t rows, std::uint32_t cols, DType dtype) const {
  Distribution d{rows, cols, dtype, 0, {}};
  const std::uint32_t per = ceil_div(rows, std::min(rows, tiles()));
  for (std::uint32_t r = 0, tile = 0; r < rows; r += per, ++tile)
    d.blocks.push_back(Block{r, std::min(per, rows - r), 0, cols, tile, 0, 0});
  return d;
}

Distribution LoweringContext::allocate_like(const Distribution& geometry, const std::string& label, DType dtype,
                                            AllocationKind kind, RegionNeed region) {
  Distribution d = geometry;
  d.dtype = dtype;
  d.layer_stride = 0;
  for (Block& b : d.blocks) {
    b.allocation = allocate(b.tile, label, kind, b.rows * b.cols * dtype_bytes(dtype), region);
    b.offset = 0;
  }
  return d;
}

Distribution LoweringContext::gather(int tensor, const Distribution& geometry, const std::string& label) {
  const Distribution& source = dist(tensor);
  Distribution d = allocate_like(geometry, label, source.dtype);
  std::vector<Need> needs;
  for (const Block& b : d.blocks) needs.push_back(Need{b.tile, b.allocation, 0, b.row0, b.rows, b.col0, b.cols});
  std::vector<Transfer> transfers;
  plan_transfers(source, needs, transfers);
  add_transfers(std::move(transfers));
  return d;
}

void LoweringContext::record_attention_key_block(AttentionUse use, std::uint32_t key_block) {
  (use == AttentionUse::map_pooling ? out_.numerics.map_attention_key_block : out_.numerics.attention_key_block) = key_block;
}

void LoweringContext::record_gemm_grid(const std::string& op_name, const GemmGrid& grid, std::uint64_t tile_bytes) {
  out_.plan.pins.gemm[op_name] = GemmSplits{grid.r_splits, grid.k_splits, grid.c_splits, grid.column_quantum};
  out_.largest_gemm_tile_bytes = std::max(out_.largest_gemm_tile_bytes, tile_bytes);
}

std::uint32_t LoweringContext::tile_offset(const std::string& op_name) {
  const auto pin = options.plan.pins.tile_offsets.find(op_name);
  if (pin == options.plan.pins.tile_offsets.end() || pin->second == 0) return 0;
  if (pin->second >= tiles())
    throw RefusedPin("pinned tile offset " + std::to_string(pin->second) + " for op " + op_name + ": the machine has " +
                     std::to_string(tiles()) + " tiles");
  out_.plan.pins.tile_offsets[op_name] = pin->second;
  return pin->second;
}

void LoweringContext::record_attention_grid(const std::string& op_name, const AttentionGrid& grid) {
  out_.plan.pins.attention[op_name] = AttentionBlocks{grid.query_block, grid.key_block};
}

void LoweringContext::record_norm_part(const std::string& op_name, NormUse use, std::uint32_t part_width) {
  if (use != NormUse::other) out_.numerics.encoder_norm_part[use == NormUse::encoder_attention ? 0 : 1] = part_width;
  out_.plan.pins.split_norms.insert(op_name);
}

void LoweringContext::record_fp8_output_gelu(const std::string& op_name) { out_.plan.pins.fp8_output_gelus.insert(op_name); }

void LoweringContext::record_fp8_attention(const std::string& op_name) {
  out_.plan.pins.fp8_attention.insert(op_name);
  out_.numerics.attention_fp8 = true;
}

void LoweringContext::record_gemm_inner_block(model::GemmRole role, std::uint32_t inner_block) {
  out_.numerics.inner_block[static_cast<int>(role)] = inner_block;
}

void LoweringContext::place_input() {
  const Tensor& in = graph.tensor(graph.input);
  Distribution d = allocate_like(row_split(in.rows, in.cols, in.dtype), in.name, in.dtype);
  for (const Block& b : d.blocks) {
    touch(b.allocation, compute_phase(0));  // the host writes it before the first step
    out_.bindings.push_back(HostBinding{HostBinding::Direction::input, static_cast<std::uint32_t>(graph.input), b.row0,
                                        b.rows, b.col0, b.cols, b.tile, b.allocation, 0, 1, 0});
  }
  set_dist(graph.input, std::move(d));
}

Lowered LoweringContext::finish() {
  CompiledProgram& p = out_.program;
  // The output leaves through its binding; keep it alive to the end.
  for (const Block& b : dist(graph.output).blocks) {
    touch(b.allocation, exchange_phase(step()));
    out_.bindings.push_back(HostBinding{HostBinding::Direction::output, static_cast<std::uint32_t>(graph.output), b.row0,
                                        b.rows, b.col0, b.cols, b.tile, b.allocation, b.offset, 1, 0});
  }
  if (p.steps.back().compute.empty() && p.steps.back().exchange.empty()) p.steps.pop_back();
  out_.created_in_step = std::move(created_in_step_);
  p.profiling = options.profiling;
  return std::move(out_);
}

void close_lifetimes(Lowered& lowered) {
  // Anything created before the loop and used inside it is live for the whole loop; an
  // allocation never used lives in the compute phase of the step that made it.
  CompiledProgram& p = lowered.program;
  for (std::size_t i = 0; i < p.allocations.size(); ++i) {
    AllocationRequest& r = p.allocations[i].request;
    if (r.first > r.last) r.first = r.last = compute_phase(lowered.created_in_step.at(i));
    if (r.first < compute_phase(p.loop_begin) && r.last >= compute_phase(p.loop_begin))
      r.last = std::max(r.last, exchange_phase(p.loop_end - 1));
  }
}

void allocate_support(CompiledProgram& p, std::uint32_t tiles) {
  // Code for the kernels each tile runs, its exchange instruction tables and its
  // profiling sample buffer, all whole-program.
  std::vector<std::set<KernelKind>> kinds(tiles);
  for (const Superstep& s : p.steps)
    for (const KernelCall& c : s.compute) kinds[c.tile].insert(c.kind);
  const std::vector<std::uint64_t> table = exchange_table_bytes(p, tiles);
  const std::vector<std::uint64_t> records = profile_records_per_tile(p, tiles, p.profiling);
  const std::uint32_t last = exchange_phase(static_cast<std::uint32_t>(p.steps.size() - 1));
  auto add = [&](std::uint32_t tile, AllocationPurpose purpose, std::uint32_t bytes, RegionNeed region) {
    Allocation a;
    a.tile = tile;
    a.request = AllocationRequest{std::string(support_label(purpose)), AllocationKind::support, bytes, 8, region, 0, last};
    a.request.purpose = purpose;
    p.allocations.push_back(std::move(a));
  };
  for (std::uint32_t t = 0; t < tiles; ++t) {
    if (records[t] > 0) {
      const std::uint64_t bytes = records[t] * kProfileRecordBytes;
      if (bytes > UINT32_MAX) throw Error("profiling buffer of tile " + std::to_string(t) + " too large", kExitResource);
      add(t, AllocationPurpose::profile_samples, static_cast<std::uint32_t>(bytes), RegionNeed::any);
    }
    std::uint32_t code = kSupervisorCodeBytes;
    for (KernelKind k : kinds[t]) code += kernel_info(k).code_bytes;
    add(t, AllocationPurpose::kernel_code, code, RegionNeed::standard);
    if (table[t] > 0) add(t, AllocationPurpose::exchange_tables, static_cast<std::uint32_t>(table[t]), RegionNeed::standard);
  }
}

KernelCall kernel_call(KernelKind kind, std::uint32_t tile, std::initializer_list<std::pair<Dim, std::uint32_t>> dims,
                       std::vector<Operand> operands) {
  KernelCall c;
  c.kind = kind;
  c.tile = tile;
  c.dims = make_dims(kind, dims);
  c.operands = std::move(operands);
  return c;
}

Operand whole_block(LoweringContext& cx, const Block& b, DType dtype, std::uint32_t stride) {
  return cx.operand(b.allocation, b.offset, b.rows * b.cols * dtype_bytes(dtype), stride);
}

}  // namespace tilevit::compiler
