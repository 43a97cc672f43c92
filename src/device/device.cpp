#include "device/device.hpp"

#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <mutex>

#include "compiler/compile.hpp"
#include "device/kernels.hpp"
#include "device/weight_values.hpp"
#include "model/patches.hpp"

namespace tilevit::device {
namespace {

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Runs body(i) for i < n in parallel; the first exception (lowest index) is rethrown.
template <typename F>
void parallel_for(std::size_t n, F&& body) {
  std::exception_ptr error;
  std::size_t error_index = SIZE_MAX;
  std::mutex lock;
#pragma omp parallel for schedule(dynamic, 1)
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

}  // namespace

Device::Device(package::PackageContents program) : pkg_(std::move(program)) {
  sram_.assign(pkg_.machine.tiles, std::vector<std::uint8_t>(pkg_.machine.sram_size, 0));
  // Calls grouped per tile, once, so a compute phase runs tiles in parallel.
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
    }
    tile_calls_.push_back(std::move(groups));
    step_cycles_.push_back([&] {
      const auto c = compiler::estimate_step(pkg_.machine, pkg_.program.steps[s]);
      return c.compute + c.exchange + c.sync;
    }());
  }
}

Device::~Device() = default;

std::vector<std::uint8_t>& Device::tile_sram(std::uint32_t tile) { return sram_.at(tile); }

void Device::upload_weights(const model::ViTWeights& weights) {
  const WeightValues values(weights, pkg_);
  const auto& bindings = pkg_.bindings;
  parallel_for(bindings.size(), [&](std::size_t i) {
    const auto& b = bindings[i];
    if (b.direction != compiler::HostBinding::Direction::parameter) return;
    values.write(b, sram_[b.tile], pkg_.program.allocations.at(b.allocation).address, pkg_.machine);
  });
  weights_loaded_ = true;
}

std::vector<float> Device::run(const std::vector<std::vector<float>>& images, CallTiming* timing) {
  if (!weights_loaded_) throw Error("device: weights not uploaded", kExitInternal);
  const auto& config = pkg_.config;
  if (static_cast<int>(images.size()) != config.batch)
    throw Error("device: the package takes " + std::to_string(config.batch) + " images per call, got " +
                std::to_string(images.size()), kExitUsage);
  CallTiming t;
  auto t0 = std::chrono::steady_clock::now();
  std::vector<float> patches;
  for (const auto& image : images) {
    const auto rows = model::patch_rows(config, image);
    patches.insert(patches.end(), rows.begin(), rows.end());
  }
  const std::uint32_t patch_dim = static_cast<std::uint32_t>(config.patch_dim());
  for (const auto& b : pkg_.bindings) {
    if (b.direction != compiler::HostBinding::Direction::input) continue;
    if (b.col0 + b.cols > patch_dim || (b.row0 + b.rows) * std::size_t(patch_dim) > patches.size())
      throw Error("package: input binding outside the image tensor", kExitBadInput);
    AccessContext ctx{b.tile, 0, "upload", "image binding"};
    std::uint8_t* dst = sram_at(sram_[b.tile], pkg_.machine, std::uint64_t(pkg_.program.allocations.at(b.allocation).address) + b.offset,
                                std::uint64_t(b.rows) * b.cols * 2, ctx);
    for (std::uint32_t r = 0; r < b.rows; ++r)
      store_f16(dst + std::size_t(r) * b.cols * 2, &patches[(b.row0 + r) * std::size_t(patch_dim) + b.col0], b.cols);
  }
  t.upload_seconds = since(t0);

  t0 = std::chrono::steady_clock::now();
  const auto& p = pkg_.program;
  for (std::uint32_t s = 0; s < p.loop_begin; ++s) execute_step(s, 0), t.device_cycles += step_cycles_[s];
  for (std::uint32_t it = 0; it < p.loop_count; ++it)
    for (std::uint32_t s = p.loop_begin; s < p.loop_end; ++s) execute_step(s, it), t.device_cycles += step_cycles_[s];
  for (std::uint32_t s = p.loop_end; s < p.steps.size(); ++s) execute_step(s, 0), t.device_cycles += step_cycles_[s];
  t.execute_seconds = since(t0);

  t0 = std::chrono::steady_clock::now();
  std::vector<float> out(static_cast<std::size_t>(config.batch) * config.width, NAN);
  for (const auto& b : pkg_.bindings) {
    if (b.direction != compiler::HostBinding::Direction::output) continue;
    if (b.row0 + b.rows > std::uint32_t(config.batch) || b.col0 + b.cols > std::uint32_t(config.width))
      throw Error("package: output binding outside the embedding", kExitBadInput);
    AccessContext ctx{b.tile, 0, "download", "embedding binding"};
    const std::uint8_t* src = sram_at(sram_[b.tile], pkg_.machine,
                                      std::uint64_t(pkg_.program.allocations.at(b.allocation).address) + b.offset,
                                      std::uint64_t(b.rows) * b.cols * 2, ctx);
    for (std::uint32_t r = 0; r < b.rows; ++r)
      load_f16(src + std::size_t(r) * b.cols * 2, &out[(b.row0 + r) * std::size_t(config.width) + b.col0], b.cols);
  }
  t.download_seconds = since(t0);
  if (timing) *timing = t;
  return out;
}

void Device::execute_step(std::uint32_t step, std::uint32_t iteration) {
  const auto& s = pkg_.program.steps[step];
  const auto& groups = tile_calls_[step];
  parallel_for(groups.size(), [&](std::size_t g) {
    for (std::uint32_t i : groups[g]) {
      const auto& call = s.compute[i];
      execute_call(pkg_.machine, pkg_.program, sram_[call.tile], call, step, iteration);
    }
  });
  // Exchange: the verifier guarantees no transfer writes what another one of the same
  // phase reads or writes, so they can run in any order.
  const auto& allocations = pkg_.program.allocations;
  parallel_for(s.exchange.size(), [&](std::size_t i) {
    const auto& x = s.exchange[i];
    auto endpoint = [&](const compiler::Endpoint& e, std::uint64_t extra, const char* what) {
      AccessContext ctx{e.tile, step, s.label.c_str(), what};
      if (e.tile >= sram_.size() || e.allocation >= allocations.size() || allocations[e.allocation].tile != e.tile)
        throw Error(describe(ctx) + ": names memory of another tile", kExitInternal);
      return sram_at(sram_[e.tile], pkg_.machine, std::uint64_t(allocations[e.allocation].address) + e.offset + extra,
                     x.bytes, ctx);
    };
    const std::uint8_t* src = endpoint(x.source, std::uint64_t(x.source_layer_stride) * iteration, "transfer source");
    for (const auto& d : x.destinations) std::memcpy(endpoint(d, 0, "transfer destination"), src, x.bytes);
  });
}

}  // namespace tilevit::device
