#include "system/pipeline_device.hpp"

#include <chrono>

#include "numerics/fp16.hpp"
#include "support/error.hpp"

namespace tilevit::system {

PipelineDevice::PipelineDevice(const CompiledPipeline& pipeline, std::uint32_t first_chip, std::uint32_t end_chip)
    : pipeline_(pipeline), first_chip_(first_chip), end_chip_(end_chip) {
  if (first_chip >= end_chip || end_chip > pipeline.stages.size())
    throw Error("pipeline: chips " + std::to_string(first_chip) + " to " + std::to_string(end_chip) + " outside the " +
                    std::to_string(pipeline.stages.size()) + " stages",
                kExitInternal);
  for (std::uint32_t c = first_chip; c < end_chip; ++c)
    devices_.push_back(std::make_unique<device::Device>(pipeline.stages[c].executable));
}

PipelineDevice::~PipelineDevice() = default;

void PipelineDevice::upload_weights(const model::ViTWeights& weights) {
  for (auto& d : devices_) d->upload_weights(weights);
}

PipelineCallResult PipelineDevice::run(const std::vector<std::vector<float>>& images, StageBoundary* boundary) {
  const auto t0 = std::chrono::steady_clock::now();
  PipelineCallResult result;
  const std::size_t stream_values = stream_bytes(pipeline_.stages.front().executable.config) / 2;
  std::vector<float> stream;
  if (first_chip_ > 0) {  // the stream arrives from the previous process's last chip
    if (!boundary) throw Error("pipeline: chip " + std::to_string(first_chip_) + " needs a boundary to receive from", kExitInternal);
    const std::vector<std::uint16_t> bits = boundary->receive(first_chip_ - 1, stream_values, result.clock);
    stream.resize(bits.size());
    numerics::from_fp16_bits(bits.data(), stream.data(), bits.size());
  }
  for (std::uint32_t c = first_chip_; c < end_chip_; ++c) {
    device::CallTiming timing;
    device::Device& d = *devices_[c - first_chip_];
    stream = c == 0 ? d.run(images, &timing) : d.run_stream(stream, &timing);
    result.stage_cycles += timing.device_cycles;
    result.clock += timing.device_cycles;
    if (c + 1 == pipeline_.stages.size()) break;
    const std::uint64_t link = pipeline_.links[c].cost.cycles();
    result.link_cycles += link;
    result.clock += link;
  }
  if (end_chip_ < pipeline_.stages.size()) {  // the next chip is another process's
    if (!boundary) throw Error("pipeline: chip " + std::to_string(end_chip_) + " needs a boundary to send to", kExitInternal);
    std::vector<std::uint16_t> bits(stream.size());
    numerics::to_fp16_bits(stream.data(), bits.data(), stream.size());
    boundary->send(end_chip_, bits, result.clock);
  } else {
    result.output = std::move(stream);
  }
  result.host_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

}  // namespace tilevit::system
