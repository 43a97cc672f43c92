#pragma once
// A pipeline run on the device model: one device::Device per chip (the weights of its
// stage's layers resident), the residual stream handed from stage to stage. A process may
// run some of the chips (an MPI rank, src/distributed/); a `StageBoundary` then carries
// the stream to and from the chips another process runs. A call is the pipeline's
// micro_batches micro-batches, one after the other into chip 0. Cycles are exact: each
// owned chip keeps the cycle it is busy until, and a micro-batch's stage ends by
// `stage_end` (system/pipeline.hpp) on the stage's device cycles and its outgoing link's
// cost (target::link_cost); the clock crosses a boundary with each micro-batch's payload.
#include <cstdint>
#include <memory>
#include <vector>

#include "device/device.hpp"
#include "system/pipeline.hpp"

namespace tilevit::system {

// The residual stream crossing to or from a chip this process does not run: FP16 bits
// (what the link carries) and the pipeline clock after the link, once per micro-batch,
// in micro-batch order.
class StageBoundary {
 public:
  virtual ~StageBoundary() = default;
  virtual void send(std::uint32_t to_chip, const std::vector<std::uint16_t>& stream, std::uint64_t clock) = 0;
  virtual std::vector<std::uint16_t> receive(std::uint32_t from_chip, std::size_t values, std::uint64_t& clock) = 0;
};

struct PipelineCallResult {
  std::vector<float> output;            // the last stage's outputs, micro-batch after micro-batch (empty unless this process runs it)
  std::uint64_t clock = 0;              // pipeline cycles when this process's last stage ended the last micro-batch
  std::uint64_t first_clock = 0;        // ... ended the first micro-batch
  std::uint64_t stage_cycles = 0;       // of this process's stages, summed over the micro-batches
  std::uint64_t link_cycles = 0;        // of the links this process's stages send over, summed likewise
  double host_seconds = 0;
};

class PipelineDevice : public device::Runner {
 public:
  // Runs chips [first_chip, end_chip) of `pipeline` (all of them in one process); a call
  // crosses `boundary` (see run).
  PipelineDevice(const CompiledPipeline& pipeline, std::uint32_t first_chip, std::uint32_t end_chip,
                 StageBoundary* boundary = nullptr);
  ~PipelineDevice() override;

  void upload_weights(const model::ViTWeights& weights) override;
  // run(images, the boundary given at construction), as a Runner's call: the cycles are
  // this process's (an MPI rank's: distributed::MpiPipelineRunner agrees on them).
  device::CallResult call(const std::vector<std::vector<float>>& images) override;
  // One call: batch x micro_batches images enter chip 0 (ignored by a process that does not
  // run it), batch by batch; the stream crosses `boundary` where the next chip is another
  // process's (nullptr: none is). Throws Error(kExitUsage) on another number of images.
  PipelineCallResult run(const std::vector<std::vector<float>>& images, StageBoundary* boundary);

 private:
  // Micro-batch `index` through the owned chips; busy_until_ and `result` advance.
  void run_micro_batch(std::uint32_t index, const std::vector<std::vector<float>>& images, StageBoundary* boundary,
                       PipelineCallResult& result);

  const CompiledPipeline& pipeline_;
  std::uint32_t first_chip_, end_chip_;
  StageBoundary* boundary_;
  std::vector<std::unique_ptr<device::Device>> devices_;  // per owned chip
  std::vector<std::uint64_t> busy_until_;                 // per owned chip, within the current call
};

}  // namespace tilevit::system
