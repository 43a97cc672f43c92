#include "device/device.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <mutex>

#include <sys/mman.h>

#include "compiler/program_walk.hpp"
#include "compiler/step_costs.hpp"
#include "device/kernels.hpp"
#include "device/weight_values.hpp"
#include "model/token_embedding.hpp"

namespace tilevit::device {
namespace {

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Runs body(i) for i < n in parallel, `chunk` indices per hand-out (a shared counter per
// hand-out: 1 for tile groups of ~100 us, more for ~100 ns copies); the first exception
// (lowest index) is rethrown. Tiny phases run on the calling thread.
template <typename F>
void parallel_for(std::size_t n, F&& body, int chunk = 1) {
  std::exception_ptr error;
  std::size_t error_index = SIZE_MAX;
  std::mutex lock;
#pragma omp parallel for schedule(dynamic, chunk) if (n > 1)
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(n); ++i) {
    try {
      body(static_cast<std::size_t>(i));
    } catch (...) {
      std::lock_guard<std::mutex> g(lock);
      if (static_cast<std::size_t>(i) < error_index) {
        error_index = static_cast<std::size_t>(i);
        error = std::current_exception();
      }
    }
  }
  if (error) std::rethrow_exception(error);
}

// The executors take operand sizes from the call; a program that `verify` did not see is
// checked against the kernel table here, once, rather than on every execution.
void check_signature(const compiler::KernelCall& call, std::size_t step) {
  const compiler::KernelShape shape = call.shape();  // throws for a kind that does not exist
  const compiler::KernelKindInfo& info = shape.info();
  bool matches = call.operands.size() == info.operands().size();
  for (std::size_t i = 0; matches && i < call.operands.size(); ++i)
    matches = call.operands[i].bytes == info.operand_bytes(i, shape);
  if (!matches)
    throw Error("superstep " + std::to_string(step) + ", tile " + std::to_string(call.tile) + ": " + info.name +
                    " does not match its signature (`tilevit verify` names the operand)",
                kExitInternal);
}


}  // namespace

TileMemory::TileMemory(std::uint32_t tiles, std::uint32_t bytes_per_tile)
    : tiles_(tiles), bytes_per_tile_(bytes_per_tile), stride_(stride_for(bytes_per_tile)) {
  mapped_ = std::max<std::size_t>(std::size_t(tiles) * stride_, 1);
  void* p = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)  // the host's memory or address-space limit: a resource problem, not a bug
    throw Error("device: cannot map " + std::to_string(mapped_) + " B of tile memory for " + std::to_string(tiles) +
                    " tiles: the host lacks the memory (or a limit such as ulimit -v refuses it)",
                kExitResource);
  madvise(p, mapped_, MADV_HUGEPAGE);  // a hint: without it (or THP off) only slower
  base_ = static_cast<std::uint8_t*>(p);
}

TileMemory::~TileMemory() { munmap(base_, mapped_); }

Device::Device(compiler::Executable program)
    : pkg_(std::move(program)), sram_(pkg_.machine.tiles, pkg_.machine.sram_size) {
  // Calls grouped per tile, once, so a compute phase runs tiles in parallel.
  local_moves_.resize(pkg_.program.steps.size());
  for (std::size_t s = 0; s < pkg_.program.steps.size(); ++s) {
    const auto& calls = pkg_.program.steps[s].compute;
    std::vector<std::vector<std::uint32_t>> per_tile;
    std::vector<std::int64_t> slot(pkg_.machine.tiles, -1);
    std::vector<std::vector<std::uint32_t>> groups;
    for (std::uint32_t i = 0; i < calls.size(); ++i) {
      const auto tile = calls[i].tile;
      if (tile >= pkg_.machine.tiles)
        throw Error("superstep " + std::to_string(s) + ": kernel call on tile " + std::to_string(tile) + " of " +
                        std::to_string(pkg_.machine.tiles),
                    kExitInternal);
      if (slot[tile] < 0) {
        slot[tile] = static_cast<std::int64_t>(groups.size());
        groups.emplace_back();
      }
      groups[static_cast<std::size_t>(slot[tile])].push_back(i);
      check_signature(calls[i], s);
    }
    tile_calls_.push_back(std::move(groups));
    // Exchange tables: addresses resolved through the allocations once.
    const auto& allocations = pkg_.program.allocations;
    const std::uint64_t base = pkg_.machine.sram_base;
    auto resolve = [&](const compiler::Endpoint& e, std::uint32_t& offset) {
      if (e.tile >= pkg_.machine.tiles || e.allocation >= allocations.size() || allocations[e.allocation].tile != e.tile ||
          allocations[e.allocation].address < base)
        return false;
      const std::uint64_t o = allocations[e.allocation].address - base + std::uint64_t(e.offset);
      offset = o > UINT32_MAX ? UINT32_MAX : static_cast<std::uint32_t>(o);  // out of range: caught by the bounds check
      return true;
    };
    Exchange ex;
    for (const compiler::LocalCopy& c : pkg_.program.steps[s].local_copies)
      local_moves_[s].push_back(compiler::Transfer{c.source, c.bytes, c.source_layer_stride, {c.destination}});
    for_each_move(static_cast<std::uint32_t>(s), [&](const compiler::Transfer& x) {
      Transfer t;
      t.source_tile = x.source.tile, t.source_stride = x.source_layer_stride, t.bytes = x.bytes;
      t.first = static_cast<std::uint32_t>(ex.destinations.size());
      t.count = static_cast<std::uint32_t>(x.destinations.size());
      t.valid = resolve(x.source, t.source_offset);
      for (const auto& d : x.destinations) {
        Destination out{d.tile, 0};
        t.valid = resolve(d, out.offset) && t.valid;
        ex.destinations.push_back(out);
      }
      ex.transfers.push_back(t);
    });
    resolve_copies(ex);
    exchange_.push_back(std::move(ex));
  }
  // The step cost table the compiler's figures come from (compiler/step_costs.hpp).
  for (const compiler::StepCost& c : compiler::step_costs(pkg_.machine, pkg_.program)) step_cycles_.push_back(c.total());
  // The fused phases that can occur: step s after s - 1, and the loop's first step after
  // its last (the next iteration).
  const auto& p = pkg_.program;
  fusions_.resize(p.steps.size());
  for (std::uint32_t s = 1; s < p.steps.size(); ++s) fusions_[s] = make_fusion(s - 1, s);
  if (p.loop_count > 1 && p.loop_end > p.loop_begin && p.loop_end <= p.steps.size()) loop_fusion_ = make_fusion(p.loop_end - 1, p.loop_begin);
}

Device::~Device() = default;

// The fast path's copies, bounds-checked here once: destinations always, sources for
// every iteration up to last_valid_iteration (their strides move them per layer).
// Anything out of range leaves `resolved` false and the phase to the checked path,
// which names the transfer when it runs.
void Device::resolve_copies(Exchange& ex) const {
  const std::uint64_t size = pkg_.machine.sram_size, stride = sram_.stride();  // offsets are tile * stride + offset
  if (std::uint64_t(pkg_.machine.tiles) * stride > UINT32_MAX) return;
  std::uint64_t last = UINT32_MAX;
  std::vector<Copy> copies;
  copies.reserve(ex.destinations.size());
  for (const Transfer& t : ex.transfers) {
    if (!t.valid || std::uint64_t(t.source_offset) + t.bytes > size) return;
    if (t.source_stride > 0) last = std::min<std::uint64_t>(last, (size - t.source_offset - t.bytes) / t.source_stride);
    for (std::uint32_t j = t.first; j < t.first + t.count; ++j) {
      const Destination& d = ex.destinations[j];
      if (std::uint64_t(d.offset) + t.bytes > size) return;
      copies.push_back(Copy{static_cast<std::uint32_t>(d.tile * stride + d.offset),
                            static_cast<std::uint32_t>(t.source_tile * stride + t.source_offset), t.bytes, t.source_stride});
    }
  }
  ex.copies = ExchangeCopies(std::move(copies), stride, pkg_.machine.tiles);
  ex.last_valid_iteration = static_cast<std::uint32_t>(last);
  ex.resolved = true;
}

std::span<std::uint8_t> Device::tile_sram(std::uint32_t tile) {
  if (tile >= sram_.tiles()) throw Error("device: no tile " + std::to_string(tile), kExitInternal);
  return sram_.tile(tile);
}

void Device::upload_weights(const model::ViTWeights& weights) {
  const WeightValues values(weights, pkg_);
  const auto& bindings = pkg_.bindings;
  parallel_for(bindings.size(), [&](std::size_t i) {
    const auto& b = bindings[i];
    if (b.direction != compiler::HostBinding::Direction::parameter) return;
    values.write(b, tile_sram(b.tile), pkg_.program.allocations.at(b.allocation).address, pkg_.machine);
  });
  weights_loaded_ = true;
}

CallResult Device::call(const std::vector<std::vector<float>>& images) {
  CallTiming timing;
  CallResult result;
  result.output = run(images, &timing);
  result.cycles = result.first_cycles = timing.device_cycles;
  result.upload_seconds = timing.upload_seconds;
  result.execute_seconds = timing.execute_seconds;
  result.download_seconds = timing.download_seconds;
  return result;
}

std::vector<float> Device::run(const std::vector<std::vector<float>>& images, CallTiming* timing) {
  const auto& config = pkg_.config;
  if (!pkg_.stage.embeds) throw Error("device: this pipeline stage takes the residual stream, not images", kExitInternal);
  if (static_cast<int>(images.size()) != config.batch)
    throw Error("device: the package takes " + std::to_string(config.batch) + " images per call, got " +
                std::to_string(images.size()), kExitUsage);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<float> patches;
  for (const auto& image : images) {
    const auto rows = model::token_input_rows(config, image);
    patches.insert(patches.end(), rows.begin(), rows.end());
  }
  const double prepare = since(t0);
  auto out = execute(patches, static_cast<std::uint32_t>(config.patch_dim()), "image", timing);
  if (timing) timing->upload_seconds += prepare;
  return out;
}

std::vector<float> Device::run_stream(const std::vector<float>& stream, CallTiming* timing) {
  if (pkg_.stage.embeds) throw Error("device: this package takes images, not the residual stream", kExitInternal);
  const auto& c = pkg_.config;
  if (stream.size() != std::size_t(c.batch) * c.tokens() * c.width)
    throw Error("device: residual stream of " + std::to_string(stream.size()) + " values, the stage takes " +
                    std::to_string(std::size_t(c.batch) * c.tokens() * c.width),
                kExitInternal);
  return execute(stream, static_cast<std::uint32_t>(c.width), "residual stream", timing);
}

// Rows of the output: one per image when pooled, else its tokens; a stage that does not
// pool gives the residual stream, [batch x tokens][width].
std::pair<std::uint32_t, std::uint32_t> Device::output_shape() const {
  const auto& c = pkg_.config;
  if (!pkg_.stage.pools) return {std::uint32_t(c.batch * c.tokens()), std::uint32_t(c.width)};
  return {std::uint32_t(c.batch * c.output_rows()), std::uint32_t(c.output_width())};
}

std::vector<float> Device::execute(const std::vector<float>& input, std::uint32_t input_cols, const char* what,
                                   CallTiming* timing) {
  if (!weights_loaded_) throw Error("device: weights not uploaded", kExitInternal);
  CallTiming t;
  auto t0 = std::chrono::steady_clock::now();
  for (const auto& b : pkg_.bindings) {
    if (b.direction != compiler::HostBinding::Direction::input) continue;
    if (b.col0 + b.cols > input_cols || (b.row0 + b.rows) * std::size_t(input_cols) > input.size())
      throw Error(std::string("package: input binding outside the ") + what + " tensor", kExitBadInput);
    AccessContext ctx{b.tile, 0, "upload", "input binding"};
    std::uint8_t* dst = sram_at(tile_sram(b.tile), pkg_.machine, std::uint64_t(pkg_.program.allocations.at(b.allocation).address) + b.offset,
                                std::uint64_t(b.rows) * b.cols * 2, ctx);
    for (std::uint32_t r = 0; r < b.rows; ++r)
      store_f16(dst + std::size_t(r) * b.cols * 2, &input[(b.row0 + r) * std::size_t(input_cols) + b.col0], b.cols);
  }
  t.upload_seconds = since(t0);

  t0 = std::chrono::steady_clock::now();
  const auto& p = pkg_.program;
  pending_step_ = -1;  // (a call that failed may have left one)
  compiler::walk_program(p, [&](std::uint32_t s, std::uint32_t iteration) {
    execute_step(s, iteration);
    t.device_cycles += step_cycles_[s];
  });
  if (pending_step_ >= 0) exchange_phase(static_cast<std::uint32_t>(pending_step_), pending_iteration_), pending_step_ = -1;
  t.execute_seconds = since(t0);

  t0 = std::chrono::steady_clock::now();
  const auto [out_rows, out_cols] = output_shape();
  std::vector<float> out(std::size_t(out_rows) * out_cols, NAN);
  for (const auto& b : pkg_.bindings) {
    if (b.direction != compiler::HostBinding::Direction::output) continue;
    if (b.row0 + b.rows > out_rows || b.col0 + b.cols > out_cols)
      throw Error("package: output binding outside the embedding", kExitBadInput);
    AccessContext ctx{b.tile, 0, "download", "embedding binding"};
    const std::uint8_t* src = sram_at(tile_sram(b.tile), pkg_.machine,
                                      std::uint64_t(pkg_.program.allocations.at(b.allocation).address) + b.offset,
                                      std::uint64_t(b.rows) * b.cols * 2, ctx);
    for (std::uint32_t r = 0; r < b.rows; ++r)
      load_f16(src + std::size_t(r) * b.cols * 2, &out[(b.row0 + r) * std::size_t(out_cols) + b.col0], b.cols);
  }
  t.download_seconds = since(t0);
  if (timing) *timing = t;
  return out;
}

// A step's compute phase runs with the exchange before it (pending_step_) fused in when
// that one resolved: each tile receives its copies and runs its kernels while the bytes
// are still in cache. Otherwise, and after the last step, the exchange runs on its own.
void Device::execute_step(std::uint32_t step, std::uint32_t iteration) {
  if (pending_step_ >= 0) {
    const auto p = static_cast<std::uint32_t>(pending_step_);
    const Exchange& ex = exchange_[p];
    pending_step_ = -1;
    if (ex.resolved && pending_iteration_ <= ex.last_valid_iteration)
      fused_phase(p, pending_iteration_, step, iteration);
    else
      exchange_phase(p, pending_iteration_), compute_phase(step, iteration);
  } else {
    compute_phase(step, iteration);
  }
  pending_step_ = step, pending_iteration_ = iteration;
}

void Device::compute_phase(std::uint32_t step, std::uint32_t iteration) {
  const auto& s = pkg_.program.steps[step];
  const auto& groups = tile_calls_[step];
  parallel_for(groups.size(), [&](std::size_t g) {
    for (std::uint32_t i : groups[g]) {
      const auto& call = s.compute[i];
      execute_call(pkg_.machine, pkg_.program, sram_.tile(call.tile), call, step, iteration);
    }
  });
}

// Which tiles take part and whose kernels must wait: a kernel output that may overlap
// (over all iterations) a source of the producer's exchange on its tile would change bytes
// another tile has yet to receive. Operands that do not resolve count as overlapping: the
// kernel then runs after every copy and reports the fault.
Device::Fusion Device::make_fusion(std::uint32_t producer, std::uint32_t step) const {
  const auto& P = pkg_.program;
  const std::uint64_t base = pkg_.machine.sram_base;
  auto iterations = [&](std::uint32_t s) -> std::uint64_t { return compiler::executions(P, s); };
  // Source ranges of the producer's exchange per tile, over all its iterations.
  std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> sources(pkg_.machine.tiles);
  for_each_move(producer, [&](const compiler::Transfer& x) {
    if (x.source.tile >= pkg_.machine.tiles || x.source.allocation >= P.allocations.size()) return;  // unresolved: never fused
    const std::uint64_t b = P.allocations[x.source.allocation].address - base + x.source.offset;
    sources[x.source.tile].push_back({b, b + x.bytes + std::uint64_t(x.source_layer_stride) * (iterations(producer) - 1)});
  });
  Fusion f;
  const auto& groups = tile_calls_[step];
  std::vector<std::int32_t> group_of(pkg_.machine.tiles, -1);
  for (std::size_t g = 0; g < groups.size(); ++g) group_of[P.steps[step].compute[groups[g][0]].tile] = static_cast<std::int32_t>(g);
  const ExchangeCopies& copies = exchange_.at(producer).copies;
  for (std::uint32_t t = 0; t < pkg_.machine.tiles; ++t) {
    if (group_of[t] < 0 && !copies.receives(t)) continue;
    bool deferred = false;
    if (group_of[t] >= 0)
      for (std::uint32_t i : groups[group_of[t]]) {
        const auto& call = P.steps[step].compute[i];
        for (std::size_t k = compiler::kernel_info(call.kind).first_output(); k < call.operands.size(); ++k) {
          const auto& o = call.operands[k];
          if (o.allocation >= P.allocations.size() || P.allocations[o.allocation].address < base) {
            deferred = true;
            continue;
          }
          const std::uint64_t b = P.allocations[o.allocation].address - base + o.offset;
          const std::uint64_t e = b + o.bytes + std::uint64_t(o.layer_stride) * (iterations(step) - 1);
          for (const auto& [sb, se] : sources[t]) deferred = deferred || (sb < e && b < se);
        }
      }
    f.tiles.push_back(t), f.group.push_back(group_of[t]), f.deferred.push_back(deferred);
  }
  // Who counts down whom: every entry that receives from a deferred entry's tile, and the
  // deferred entry itself (its own receive).
  const std::size_t n = f.tiles.size();
  std::vector<std::int64_t> entry_of(pkg_.machine.tiles, -1);
  for (std::size_t j = 0; j < n; ++j) entry_of[f.tiles[j]] = static_cast<std::int64_t>(j);
  std::vector<std::vector<std::uint32_t>> releases(n);
  for (std::size_t j = 0; j < n; ++j)
    if (f.deferred[j]) releases[j].push_back(static_cast<std::uint32_t>(j));
  for_each_move(producer, [&](const compiler::Transfer& x) {
    if (x.source.tile >= pkg_.machine.tiles || entry_of[x.source.tile] < 0 || !f.deferred[entry_of[x.source.tile]]) return;
    const auto k = static_cast<std::uint32_t>(entry_of[x.source.tile]);
    for (const auto& d : x.destinations)
      if (d.tile < pkg_.machine.tiles && entry_of[d.tile] >= 0) releases[entry_of[d.tile]].push_back(k);
  });
  f.waits.assign(n, 0);
  f.release_first.assign(n + 1, 0);
  for (std::size_t j = 0; j < n; ++j) {
    auto& r = releases[j];
    std::sort(r.begin(), r.end());
    r.erase(std::unique(r.begin(), r.end()), r.end());
    for (std::uint32_t k : r) ++f.waits[k];
    f.release_first[j + 1] = f.release_first[j] + static_cast<std::uint32_t>(r.size());
    f.release.insert(f.release.end(), r.begin(), r.end());
  }
  return f;
}

void Device::fused_phase(std::uint32_t producer, std::uint32_t producer_iteration, std::uint32_t step, std::uint32_t iteration) {
  const auto& s = pkg_.program.steps[step];
  const auto& groups = tile_calls_[step];
  const Fusion& f = step == pkg_.program.loop_begin && producer + 1 == pkg_.program.loop_end ? loop_fusion_ : fusions_[step];
  const ExchangeCopies& copies = exchange_[producer].copies;
  std::uint8_t* base = sram_.tile(0).data();
  auto run_group = [&](std::int32_t g) {
    for (std::uint32_t i : groups[g]) execute_call(pkg_.machine, pkg_.program, sram_.tile(s.compute[i].tile), s.compute[i], step, iteration);
  };
  // A deferred tile's kernels run on the thread whose receive counts its wait down to 0
  // (acquire-release: every reader's copies out of the tile happen before the kernels
  // overwrite it), as soon as the order of the receives allows, instead of in a second
  // pass after all of them. Faults: one in a receive or an undeferred
  // kernel first (the lowest entry's), else the deferred kernels' of the lowest entry.
  const std::size_t n = f.tiles.size();
  if (countdown_size_ < n) countdown_.reset(new std::atomic<std::uint32_t>[n]), countdown_size_ = n;
  for (std::size_t j = 0; j < n; ++j) countdown_[j].store(f.waits[j], std::memory_order_relaxed);
  std::mutex lock;
  std::exception_ptr late;
  std::size_t late_entry = SIZE_MAX;
  parallel_for(n, [&](std::size_t j) {
    copies.run_tile(base, f.tiles[j], producer_iteration);
    if (f.group[j] >= 0 && !f.deferred[j]) run_group(f.group[j]);
    for (std::uint32_t r = f.release_first[j]; r < f.release_first[j + 1]; ++r) {
      const std::uint32_t k = f.release[r];
      if (countdown_[k].fetch_sub(1, std::memory_order_acq_rel) != 1) continue;
      try {
        run_group(f.group[k]);
      } catch (...) {
        std::lock_guard<std::mutex> g(lock);
        if (k < late_entry) late_entry = k, late = std::current_exception();
      }
    }
  });
  if (late) std::rethrow_exception(late);
}

void Device::exchange_phase(std::uint32_t step, std::uint32_t iteration) {
  // Exchange: the verifier guarantees no transfer writes what another one of the same
  // phase reads or writes, so they can run in any order: by destination (exchange_copies),
  // or checked copy by copy in program order where an endpoint did not resolve.
  const Exchange& ex = exchange_[step];
  if (ex.resolved && iteration <= ex.last_valid_iteration) {
    std::uint8_t* base = sram_.tile(0).data();
    parallel_for(ex.copies.chunks(), [&](std::size_t c) { ex.copies.run_chunk(base, c, iteration); });
    return;
  }
  const std::uint64_t size = pkg_.machine.sram_size;
  parallel_for(ex.transfers.size(), [&](std::size_t i) {
    const Transfer& t = ex.transfers[i];
    const std::uint64_t source = t.source_offset + std::uint64_t(t.source_stride) * iteration;
    if (!t.valid || source + t.bytes > size) transfer_failed(step, static_cast<std::uint32_t>(i), iteration);
    const std::uint8_t* src = sram_.tile(t.source_tile).data() + source;
    for (std::uint32_t j = t.first; j < t.first + t.count; ++j) {
      const Destination& d = ex.destinations[j];
      if (std::uint64_t(d.offset) + t.bytes > size) transfer_failed(step, static_cast<std::uint32_t>(i), iteration);
      std::memcpy(sram_.tile(d.tile).data() + d.offset, src, t.bytes);
    }
  }, 16);
}

// The slow path of a failed check: the same checks on the program's endpoints, with the
// message naming tile, superstep and direction.
void Device::transfer_failed(std::uint32_t step, std::uint32_t transfer, std::uint32_t iteration) const {
  const auto& s = pkg_.program.steps[step];
  const auto& x = transfer < s.exchange.size() ? s.exchange[transfer] : local_moves_[step][transfer - s.exchange.size()];
  const auto& allocations = pkg_.program.allocations;
  auto check = [&](const compiler::Endpoint& e, std::uint64_t extra, const char* what) {
    AccessContext ctx{e.tile, step, s.label.c_str(), what};
    if (e.tile >= pkg_.machine.tiles || e.allocation >= allocations.size() || allocations[e.allocation].tile != e.tile)
      throw Error(describe(ctx) + ": names memory of another tile", kExitInternal);
    auto tile = const_cast<TileMemory&>(sram_).tile(e.tile);
    sram_at(tile, pkg_.machine, std::uint64_t(allocations[e.allocation].address) + e.offset + extra, x.bytes, ctx);
  };
  check(x.source, std::uint64_t(x.source_layer_stride) * iteration, "transfer source");
  for (const auto& d : x.destinations) check(d, 0, "transfer destination");
  throw Error(describe(AccessContext{x.source.tile, step, s.label.c_str(), "transfer"}) + ": invalid", kExitInternal);
}

}  // namespace tilevit::device
