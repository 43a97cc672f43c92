#pragma once
// A pipeline run on the device model: one device::Device per chip (the weights of its
// stage's layers resident), the residual stream handed from stage to stage. A process may
// run some of the chips (an MPI rank, src/distributed/); a `StageBoundary` then carries
// the stream to and from the chips another process runs. Cycles are exact: each stage's
// modelled cycles and each link's cost (target::link_cost) add up along the pipeline, and
// the clock crosses a boundary with the payload.
#include <cstdint>
#include <memory>
#include <vector>

#include "device/device.hpp"
#include "system/pipeline.hpp"

namespace tilevit::system {

// The residual stream crossing to or from a chip this process does not run: FP16 bits
// (what the link carries) and the pipeline clock after the link.
class StageBoundary {
 public:
  virtual ~StageBoundary() = default;
  virtual void send(std::uint32_t to_chip, const std::vector<std::uint16_t>& stream, std::uint64_t clock) = 0;
  virtual std::vector<std::uint16_t> receive(std::uint32_t from_chip, std::size_t values, std::uint64_t& clock) = 0;
};

struct PipelineCallResult {
  std::vector<float> output;            // the last stage's output (empty unless this process runs it)
  std::uint64_t clock = 0;              // pipeline cycles when this process's last stage ended
  std::uint64_t stage_cycles = 0;       // of this process's stages
  std::uint64_t link_cycles = 0;        // of the links this process's stages send over
  double host_seconds = 0;
};

class PipelineDevice {
 public:
  // Runs chips [first_chip, end_chip) of `pipeline` (all of them in one process).
  PipelineDevice(const CompiledPipeline& pipeline, std::uint32_t first_chip, std::uint32_t end_chip);
  ~PipelineDevice();

  void upload_weights(const model::ViTWeights& weights);
  // One call: the images enter at chip 0 (ignored by a process that does not run it), the
  // stream crosses `boundary` where the next chip is another process's (nullptr: none is).
  PipelineCallResult run(const std::vector<std::vector<float>>& images, StageBoundary* boundary);

 private:
  const CompiledPipeline& pipeline_;
  std::uint32_t first_chip_, end_chip_;
  std::vector<std::unique_ptr<device::Device>> devices_;  // per owned chip
};

}  // namespace tilevit::system
