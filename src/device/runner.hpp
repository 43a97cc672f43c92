#pragma once
// What a run job runs (job/run_job.hpp): one chip's device (device::Device), a pipeline of
// chips in one process (system::PipelineDevice), or the chips of one MPI rank
// (distributed::MpiPipelineRunner). The weights are uploaded once, then each call takes
// the images in and gives the embeddings and the modelled cycles out.
#include <cstdint>
#include <vector>

#include "model/weights.hpp"

namespace tilevit::device {

struct CallResult {
  // [images][values per image]; empty in a process that does not report (an MPI rank
  // other than 0).
  std::vector<float> output;
  std::uint64_t cycles = 0;        // modelled cycles of the call (a pipeline: when its last micro-batch ends)
  std::uint64_t first_cycles = 0;  // when its first micro-batch ends (one chip: the call's cycles)
  // Host time of the call (a pipeline: the whole call in execute).
  double upload_seconds = 0, execute_seconds = 0, download_seconds = 0;
};

class Runner {
 public:
  virtual ~Runner() = default;
  // Every parameter binding the runner's chips hold; throws if the shapes do not match.
  virtual void upload_weights(const model::ViTWeights& weights) = 0;
  // One resident call: the call's images (CHW [3][S][S] each) in.
  virtual CallResult call(const std::vector<std::vector<float>>& images) = 0;
};

}  // namespace tilevit::device
