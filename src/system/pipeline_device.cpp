#include "system/pipeline_device.hpp"

#include <chrono>

#include "numerics/fp16.hpp"
#include "support/error.hpp"

namespace tilevit::system {

PipelineDevice::PipelineDevice(const CompiledPipeline& pipeline, std::uint32_t first_chip, std::uint32_t end_chip,
                               StageBoundary* boundary)
    : pipeline_(pipeline), first_chip_(first_chip), end_chip_(end_chip), boundary_(boundary) {
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

device::CallResult PipelineDevice::call(const std::vector<std::vector<float>>& images) {
  PipelineCallResult r = run(images, boundary_);
  device::CallResult result;
  result.output = std::move(r.output);
  result.cycles = r.clock;
  result.first_cycles = r.first_clock;
  result.execute_seconds = r.host_seconds;
  return result;
}

PipelineCallResult PipelineDevice::run(const std::vector<std::vector<float>>& images, StageBoundary* boundary) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::size_t batch = std::size_t(pipeline_.stages.front().executable.config.batch);
  if (first_chip_ == 0 && images.size() != batch * pipeline_.micro_batches)
    throw Error("pipeline: a call takes " + std::to_string(batch * pipeline_.micro_batches) + " images (" +
                    std::to_string(pipeline_.micro_batches) + " micro-batches of batch " + std::to_string(batch) +
                    "), got " + std::to_string(images.size()),
                kExitUsage);
  PipelineCallResult result;
  busy_until_.assign(devices_.size(), 0);  // calls do not overlap: every chip starts the call idle
  for (std::uint32_t i = 0; i < pipeline_.micro_batches; ++i) run_micro_batch(i, images, boundary, result);
  result.host_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

void PipelineDevice::run_micro_batch(std::uint32_t index, const std::vector<std::vector<float>>& images,
                                     StageBoundary* boundary, PipelineCallResult& result) {
  const std::size_t stream_values = stream_bytes(pipeline_.stages.front().executable.config) / 2;
  std::vector<float> stream;
  std::uint64_t clock = 0;  // when the micro-batch reaches the next owned chip
  if (first_chip_ > 0) {  // the stream arrives from the previous process's last chip
    if (!boundary) throw Error("pipeline: chip " + std::to_string(first_chip_) + " needs a boundary to receive from", kExitInternal);
    const std::vector<std::uint16_t> bits = boundary->receive(first_chip_ - 1, stream_values, clock);
    stream.resize(bits.size());
    numerics::from_fp16_bits(bits.data(), stream.data(), bits.size());
  }
  for (std::uint32_t c = first_chip_; c < end_chip_; ++c) {
    device::CallTiming timing;
    device::Device& d = *devices_[c - first_chip_];
    if (c == 0) {
      const std::size_t batch = std::size_t(pipeline_.stages.front().executable.config.batch);
      const auto first = images.begin() + std::ptrdiff_t(index * batch);
      stream = d.run(std::vector<std::vector<float>>(first, first + std::ptrdiff_t(batch)), &timing);
    } else {
      stream = d.run_stream(stream, &timing);
    }
    const std::uint64_t link = c + 1 < pipeline_.stages.size() ? pipeline_.links[c].cost.cycles() : 0;
    result.stage_cycles += timing.device_cycles;
    result.link_cycles += link;
    std::uint64_t& busy_until = busy_until_[c - first_chip_];
    clock = busy_until = stage_end(busy_until, clock, timing.device_cycles + link);
  }
  if (end_chip_ < pipeline_.stages.size()) {  // the next chip is another process's
    if (!boundary) throw Error("pipeline: chip " + std::to_string(end_chip_) + " needs a boundary to send to", kExitInternal);
    std::vector<std::uint16_t> bits(stream.size());
    numerics::to_fp16_bits(stream.data(), bits.data(), stream.size());
    boundary->send(end_chip_, bits, clock);
  } else {
    result.output.insert(result.output.end(), stream.begin(), stream.end());
  }
  if (index == 0) result.first_clock = clock;
  result.clock = clock;  // a chip's ends only grow: the last micro-batch's is the call's
}

}  // namespace tilevit::system
