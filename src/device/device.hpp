#pragma once
// The device model: the machine's tile SRAMs as byte arrays, running a package superstep
// by superstep. Kernels read and write only their own tile's SRAM (bounds-checked);
// exchanges copy bytes between tiles as scheduled; the host writes weights once and the
// image every call through the package's bindings, and reads the embedding back the
// same way. Arithmetic: numerics/device_kernels (docs/NUMERICS.md).
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "device/exchange_copies.hpp"
#include "device/runner.hpp"
#include "device/sram.hpp"
#include "model/weights.hpp"
#include "package/program_codec.hpp"

namespace tilevit::device {

struct CallTiming {
  double upload_seconds = 0, execute_seconds = 0, download_seconds = 0;
  std::uint64_t device_cycles = 0;  // modelled: kernel table cycles and the package's exchange schedule
};

class Device : public Runner {
 public:
  explicit Device(compiler::Executable program);
  ~Device();

  const compiler::Executable& package() const { return pkg_; }
  // Writes every parameter binding (weights quantised to the package's numerics). Throws
  // if the weights' shapes do not match the package's model.
  void upload_weights(const model::ViTWeights& weights) override;
  // One resident call: the batch's images (CHW [3][S][S] each) in, [batch][width] out.
  std::vector<float> run(const std::vector<std::vector<float>>& images, CallTiming* timing = nullptr);
  // The same as a Runner's call.
  CallResult call(const std::vector<std::vector<float>>& images) override;
  // One call of a pipeline stage that does not embed: the residual stream [batch x
  // tokens][width] (FP16 values) in; out the next stream, or the embedding if it pools.
  std::vector<float> run_stream(const std::vector<float>& stream, CallTiming* timing = nullptr);

  // Raw access for tests and fault injection.
  std::span<std::uint8_t> tile_sram(std::uint32_t tile);

 private:
  // The exchange of one superstep, resolved once from the program into compact tables
  // (a 27-layer call runs ~100 M copies of ~140 B: per-copy bookkeeping is what costs).
  // Offsets are from the tile's sram_base; `valid` false: an endpoint names memory of
  // another tile, reported when it runs.
  struct Transfer {
    std::uint32_t source_tile = 0, source_offset = 0, source_stride = 0, bytes = 0;
    std::uint32_t first = 0, count = 0;  // range of Exchange::destinations
    bool valid = true;
  };
  struct Destination {
    std::uint32_t tile = 0, offset = 0;
  };
  struct Exchange {
    std::vector<Transfer> transfers;  // program order: the checked path and error messages
    std::vector<Destination> destinations;
    // The fast path, if every endpoint resolved inside its tile: the same copies by
    // destination, valid for source strides up to iteration last_valid_iteration.
    ExchangeCopies copies;
    bool resolved = false;
    std::uint32_t last_valid_iteration = 0;
  };
  void resolve_copies(Exchange& ex) const;
  // Input rows of `input_cols` values in through the input bindings, the program, the
  // output bindings out; `what` names the input in errors.
  std::vector<float> execute(const std::vector<float>& input, std::uint32_t input_cols, const char* what,
                             CallTiming* timing);
  std::pair<std::uint32_t, std::uint32_t> output_shape() const;  // rows, columns
  void execute_step(std::uint32_t step, std::uint32_t iteration);
  void compute_phase(std::uint32_t step, std::uint32_t iteration);
  void exchange_phase(std::uint32_t step, std::uint32_t iteration);
  // The exchange of `producer` fused into the compute phase of `step`: per tile, its
  // incoming copies, then its kernels (deferred if they overwrite a source of that
  // exchange on the tile: they then run after the receives of every tile that reads
  // from it, started by the last of those receives).
  struct Fusion {
    std::vector<std::uint32_t> tiles;    // receiving or computing, ascending
    std::vector<std::int32_t> group;     // per entry of tiles: index into tile_calls_[step], or -1
    std::vector<std::uint8_t> deferred;  // per entry: kernels wait for the readers' receives
    std::vector<std::uint32_t> waits;    // per deferred entry: receives to wait for (its own included)
    // Per entry (CSR): the deferred entries its receive counts down (its own if deferred,
    // and those whose tiles it receives from).
    std::vector<std::uint32_t> release_first, release;
  };
  Fusion make_fusion(std::uint32_t producer, std::uint32_t step) const;
  void fused_phase(std::uint32_t producer, std::uint32_t producer_iteration, std::uint32_t step, std::uint32_t iteration);
  std::vector<Fusion> fusions_;  // per step s: s fused with the exchange of s - 1
  std::unique_ptr<std::atomic<std::uint32_t>[]> countdown_;  // per entry of the running fusion
  std::size_t countdown_size_ = 0;
  Fusion loop_fusion_;           // the loop's first step with the exchange of its last
  std::int64_t pending_step_ = -1;  // the step whose exchange has not run yet
  std::uint32_t pending_iteration_ = 0;
  [[noreturn]] void transfer_failed(std::uint32_t step, std::uint32_t transfer, std::uint32_t iteration) const;
  compiler::Executable pkg_;
  TileMemory sram_;  // per tile, sram_size bytes from sram_base
  std::vector<Exchange> exchange_;  // per step
  std::vector<std::vector<std::vector<std::uint32_t>>> tile_calls_;  // per step: per active tile, call indices
  std::vector<std::uint64_t> step_cycles_;  // modelled cycles of each superstep (from the stored schedule)
  // Per step, its local copies as one-destination transfers: the device runs them with
  // the step's exchange (at the end of the compute phase on the hardware; no kernel
  // between reads or writes them, so the bytes are the same).
  std::vector<std::vector<compiler::Transfer>> local_moves_;
  // The step's transfers, then its local copies (the index order of Exchange::transfers).
  template <typename F>
  void for_each_move(std::uint32_t step, F&& f) const {
    for (const auto& x : pkg_.program.steps[step].exchange) f(x);
    for (const auto& x : local_moves_[step]) f(x);
  }
  bool weights_loaded_ = false;
};

}  // namespace tilevit::device
